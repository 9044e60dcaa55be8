package engine_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// recorder is a Listener that keeps what it heard.
type recorder struct {
	mu      sync.Mutex
	boards  []string // Applied with an empty period: the whole board changed
	revoked []string
}

func (r *recorder) Applied(board, period string, seq uint64, players []uint32) {
	if period == "" {
		r.mu.Lock()
		r.boards = append(r.boards, board)
		r.mu.Unlock()
	}
}

func (r *recorder) KeyRevoked(id string) {
	r.mu.Lock()
	r.revoked = append(r.revoked, id)
	r.mu.Unlock()
}

func (r *recorder) take() (boards, revoked []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	boards, revoked = r.boards, r.revoked
	r.boards, r.revoked = nil, nil
	return boards, revoked
}

// hookClock is a clock that runs a function once, on the next reading
// taken by one goroutine.
type hookClock struct {
	mu   sync.Mutex
	t    time.Time
	goid uint64
	hook func()
}

func (c *hookClock) Now() time.Time {
	c.mu.Lock()
	t, hook := c.t, c.hook
	if hook != nil && goid() == c.goid {
		c.hook = nil
	} else {
		hook = nil
	}
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
	return t
}

// arm makes the calling goroutine's next clock reading run fn first.
func (c *hookClock) arm(fn func()) {
	c.mu.Lock()
	c.goid, c.hook = goid(), fn
	c.mu.Unlock()
}

func goid() uint64 {
	var b [64]byte
	s := b[:runtime.Stack(b[:], false)]
	s = bytes.TrimPrefix(s, []byte("goroutine "))
	n, _ := strconv.ParseUint(string(s[:bytes.IndexByte(s, ' ')]), 10, 64)
	return n
}

func newLiveEngine(t *testing.T) (*engine.Engine, *recorder, *hookClock) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	clk := &hookClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	rec := &recorder{}
	eng := modules.Engine(engine.Config{Store: st, Now: clk.Now, Listener: rec, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(); st.Close() })
	return eng, rec, clk
}

func putBoard(t *testing.T, eng *engine.Engine, id, title string, public bool, keys ...podium.KeyDef) {
	t.Helper()
	b := &podium.Board{ID: id, Title: title, Keys: keys, Public: public}
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := eng.PutBoard(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

func submit(t *testing.T, eng *engine.Engine, board, player string, keys ...int64) {
	t.Helper()
	if _, err := eng.Submit(context.Background(), []engine.Score{{Board: board, Player: player, Keys: keys}}, true, nil); err != nil {
		t.Fatal(err)
	}
}

// TestLiveTopCarriesTheBoard: a live read returns the board's definition
// and a generation that stays while the board is changed and changes when
// it is deleted and made again; every board change and key revocation is
// announced to the listener.
func TestLiveTopCarriesTheBoard(t *testing.T) {
	eng, rec, _ := newLiveEngine(t)
	ctx := context.Background()
	putBoard(t, eng, "kc", "one key", true, desc("n"))
	submit(t, eng, "kc", "alice", 5)
	lv, err := eng.LiveTop(ctx, "kc", 10)
	if err != nil {
		t.Fatal(err)
	}
	if !lv.Def.Public || lv.Def.Title != "one key" || len(lv.Def.Keys) != 1 || lv.Seq != 1 || len(lv.Entries) != 1 || lv.Generation == 0 {
		t.Fatalf("live read: %+v", lv)
	}
	gen := lv.Generation
	if boards, _ := rec.take(); len(boards) != 1 || boards[0] != "kc" {
		t.Fatalf("creating the board was announced as %v", boards)
	}

	putBoard(t, eng, "kc", "private now", false, desc("n"))
	lv, _ = eng.LiveTop(ctx, "kc", 10)
	if lv.Def.Public || lv.Def.Title != "private now" || lv.Generation != gen {
		t.Fatalf("after a PUT: public %v title %q generation %d (was %d)", lv.Def.Public, lv.Def.Title, lv.Generation, gen)
	}
	if boards, _ := rec.take(); len(boards) != 1 {
		t.Fatalf("a PUT was announced as %v", boards)
	}

	if err := eng.DeleteBoard(ctx, "kc"); err != nil {
		t.Fatal(err)
	}
	putBoard(t, eng, "kc", "two keys", true, desc("a"), asc("b"))
	lv, _ = eng.LiveTop(ctx, "kc", 10)
	if lv.Generation == gen || len(lv.Def.Keys) != 2 || lv.Seq != 0 || len(lv.Entries) != 0 {
		t.Fatalf("a recreated board reads as %+v (old generation %d)", lv, gen)
	}
	if boards, _ := rec.take(); len(boards) != 2 {
		t.Fatalf("delete and create were announced as %v", boards)
	}

	k, _, err := eng.Keys().Create(ctx, &podium.APIKey{Name: "reader", Scopes: []string{podium.ScopeRead}, Boards: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Keys().Delete(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, revoked := rec.take(); len(revoked) != 1 || revoked[0] != k.ID {
		t.Fatalf("revoking %s was announced as %v", k.ID, revoked)
	}
}

// TestLiveTopDefinitionMatchesEntries: a PUT that makes the board private,
// then a submission, both applied while a live read is between reading the
// definition and locking the board: the read must not pair the old
// (public) definition with the entry submitted after the board went
// private.
func TestLiveTopDefinitionMatchesEntries(t *testing.T) {
	eng, _, clk := newLiveEngine(t)
	putBoard(t, eng, "vis", "", true, desc("n"))
	submit(t, eng, "vis", "public-era", 1)
	clk.arm(func() {
		putBoard(t, eng, "vis", "", false, desc("n"))
		submit(t, eng, "vis", "private-era", 2)
	})
	lv, err := eng.LiveTop(context.Background(), "vis", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(lv.Entries) != 2 {
		t.Fatalf("the hook did not run inside the read: %d entries", len(lv.Entries))
	}
	if lv.Def.Public {
		t.Fatalf("the entry submitted after the board went private came with the public definition: %+v", lv.Entries)
	}
}
