package sessions_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sessions"
	"github.com/podiumhq/podium/sqlite"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// sessionRevocations records the ids a Listener is told to end.
type sessionRevocations struct {
	mu  sync.Mutex
	ids []string
}

func (r *sessionRevocations) Applied(string, string, uint64, []uint32) {}
func (r *sessionRevocations) KeyRevoked(id string) {
	r.mu.Lock()
	r.ids = append(r.ids, id)
	r.mu.Unlock()
}
func (r *sessionRevocations) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.ids
	r.ids = nil
	return out
}

// startSessionEngine starts an engine with the sessions module, which it
// returns too.
func startSessionEngine(t *testing.T, path string, clk *clock, l engine.Listener) (*engine.Engine, *sessions.Module) {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	ses := sessions.New(sessions.Config{Cap: 2, ExpireEvery: -1})
	eng := engine.New(engine.Config{Store: st, Now: clk.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Listener: l,
		Modules: []engine.Module{ses}})
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(); st.Close() })
	return eng, ses
}

// TestSessionExpiry: a session is refused by the clock the moment it
// expires, ExpireSessions then ends its streams (once), a refresh moves the
// expiry (the earlier one queued does not end it), and a restart loads
// only unexpired sessions.
func TestSessionExpiry(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	rev := &sessionRevocations{}
	path := filepath.Join(t.TempDir(), "podium.db")
	eng, ses := startSessionEngine(t, path, clk, rev)
	a, atok, err := ses.IssueSession(ctx, "alice", "phone", time.Minute, "")
	if err != nil {
		t.Fatal(err)
	}
	_, btok, err := ses.IssueSession(ctx, "bob", "phone", time.Minute, "")
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := eng.Keys().Authenticate(atok); !ok || k.Player != "alice" || k.ID != a.ID || len(k.Scopes) != 0 {
		t.Fatalf("Authenticate = %+v, %v", k, ok)
	}
	clk.Set(clk.Now().Add(50 * time.Second))
	_, atok2, err := ses.RefreshSession(ctx, "alice", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := eng.Keys().Authenticate(atok); ok {
		t.Fatal("the token before the refresh still works")
	}
	clk.Set(clk.Now().Add(10 * time.Second)) // bob's expiry; alice's was moved
	if _, ok := eng.Keys().Authenticate(btok); ok {
		t.Fatal("an expired session authenticates")
	}
	if n := ses.ExpireSessions(); n != 1 {
		t.Fatalf("ExpireSessions ended %d, want 1 (bob)", n)
	}
	if ids := rev.take(); len(ids) != 1 {
		t.Fatalf("revoked %v", ids)
	}
	if _, ok := eng.Keys().Authenticate(atok2); !ok {
		t.Fatal("the refreshed session was expired by its earlier expiry")
	}
	if n := ses.ExpireSessions(); n != 0 {
		t.Fatalf("ExpireSessions again ended %d", n)
	}
	if n, err := ses.SweepSessions(ctx, 10); err != nil || n != 1 {
		t.Fatalf("SweepSessions = %d, %v (bob's row)", n, err)
	}
	// The cap (2) evicts the oldest and ends it.
	c1, _, _ := ses.IssueSession(ctx, "carol", "a", time.Hour, "")
	clk.Set(clk.Now().Add(time.Millisecond))
	ses.IssueSession(ctx, "carol", "b", time.Hour, "")
	clk.Set(clk.Now().Add(time.Millisecond))
	ses.IssueSession(ctx, "carol", "c", time.Hour, "")
	if ids := rev.take(); !slices.Equal(ids, []string{c1.ID}) {
		t.Fatalf("cap eviction revoked %v, want %s", ids, c1.ID)
	}
	eng.Close()
	// A restart after alice's expiry loads carol's sessions only.
	clk.Set(clk.Now().Add(2 * time.Minute))
	eng, ses = startSessionEngine(t, path, clk, rev)
	if _, ok := eng.Keys().Authenticate(atok2); ok {
		t.Fatal("an expired session came back after a restart")
	}
	if list, err := ses.PlayerSessions(ctx, "carol"); err != nil || len(list) != 2 {
		t.Fatalf("carol's sessions after a restart: %v, %v", list, err)
	}
}
