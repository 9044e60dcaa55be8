package engine_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/sessions"
)

// revokeTrials measures, on two nodes a and b of one PostgreSQL database
// with the LISTEN/NOTIFY broker, how long after a.DeleteKey returns node b
// still authenticates the key: n trials, a new key each, while writers
// goroutines per node submit scores without pause; it returns the
// latencies, sorted. With reference, a's notices name no revoked ids (see
// feedOnly).
func revokeTrials(tb testing.TB, n, writers int, poll time.Duration, reference bool) []time.Duration {
	tb.Helper()
	c := newCluster(tb)
	a, cfg := c.open("a", nodeOpts{poll: poll})
	if reference {
		cfg.Broker = feedOnly{cfg.Broker}
	}
	a.eng = modules.Engine(cfg)
	if err := a.eng.Start(bg); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { a.eng.Close() })
	b := c.start("b", nodeOpts{poll: poll})
	if writers > 0 {
		bd := &podium.Board{ID: "load", Mode: podium.Sum, Public: true, Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}}
		if err := bd.Normalize(); err != nil {
			tb.Fatal(err)
		}
		if _, _, err := a.eng.PutBoard(bg, bd); err != nil {
			tb.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for i := range 2 * writers {
			nd := []*node{a, b}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; ; j++ {
					select {
					case <-stop:
						return
					default:
					}
					submitOn(nd, "load", fmt.Sprintf("p%d-%d", i, j%50), 1)
				}
			}()
		}
		defer wg.Wait()
		defer close(stop)
	}
	lat := make([]time.Duration, 0, n)
	for i := range n {
		k, secret, err := a.eng.Keys().Create(bg, &podium.APIKey{Name: "k" + strconv.Itoa(i), Scopes: []string{"read"}})
		if err != nil {
			tb.Fatal(err)
		}
		waitAuth(tb, b, secret, true)
		if err := a.eng.Keys().Delete(bg, k.ID); err != nil {
			tb.Fatal(err)
		}
		t0 := time.Now()
		waitAuth(tb, b, secret, false)
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	return lat
}

// feedOnly is a broker whose notices name no revoked ids, as before they
// did: the other nodes learn of a revocation from the change feed only
// (BenchmarkSharedRevocation's reference).
type feedOnly struct{ podium.Broker }

func (f feedOnly) Publish(ctx context.Context, n podium.Notice) error {
	n.Revoked = nil
	return f.Broker.Publish(ctx, n)
}

// waitAuth waits until node n authenticates secret (want) or refuses it;
// the 10 s deadline is only a failure timeout.
func waitAuth(tb testing.TB, n *node, secret string, want bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := n.eng.Keys().Authenticate(secret); ok == want {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("node b: authenticated = %v after 10 s, want %v", !want, want)
		}
		runtime.Gosched()
		time.Sleep(50 * time.Microsecond)
	}
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// TestSharedRevocationReachesOtherNodes: a key revoked on node a is
// refused on node b without b polling (b polls once an hour): the notice
// carries it. How fast is BenchmarkSharedRevocation's business.
func TestSharedRevocationReachesOtherNodes(t *testing.T) {
	t.Parallel()
	lat := revokeTrials(t, 5, 0, time.Hour, false)
	t.Logf("revoke-to-refusal on the other node: %v", lat)
}

// stuckStore is a node's store whose change feed reads block while stuck
// is set, as a follower stuck behind a busy writer or a slow database.
type stuckStore struct {
	*postgres.Store
	stuck   atomic.Bool
	release chan struct{}
}

func (s *stuckStore) Changes(ctx context.Context, after int64, limit int) ([]podium.Change, error) {
	if s.stuck.Load() {
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Store.Changes(ctx, after, limit)
}

// stuckFollowerPair starts nodes a and b on PostgreSQL, polling once an
// hour; b's store can hold its change-feed reads (st.stuck) until the test
// ends, and revoked records the streams b ends. ses is a's sessions
// module.
func stuckFollowerPair(t *testing.T) (a, nb *node, ses *sessions.Module, st *stuckStore, revoked *revocations) {
	t.Helper()
	c := newCluster(t)
	a = c.start("a", nodeOpts{poll: time.Hour})
	ses = sessionsOf(t, a.eng)
	nb, cfg := c.open("b", nodeOpts{poll: time.Hour})
	st = &stuckStore{Store: nb.store, release: make(chan struct{})}
	cfg.Store = st
	revoked = &revocations{}
	nb.eng = modules.Engine(cfg)
	nb.eng.SetListener(revoked)
	if err := nb.eng.Start(bg); err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-in first-out: release the held reads, then close.
	t.Cleanup(func() { nb.eng.Close() })
	t.Cleanup(func() { close(st.release) })
	return a, nb, ses, st, revoked
}

// sessionsOf returns the sessions module registered with eng.
func sessionsOf(t *testing.T, eng *engine.Engine) *sessions.Module {
	t.Helper()
	for _, m := range eng.Modules() {
		if ses, ok := m.(*sessions.Module); ok {
			return ses
		}
	}
	t.Fatal("the engine has no sessions module")
	return nil
}

// TestSharedRevocationSkipsTheFollower: a key or a session revoked on
// node a is refused on node b while b's follower cannot read the change
// feed (the notice names what was revoked), and its live streams end.
// Before, b went on accepting them until its follower caught up.
func TestSharedRevocationSkipsTheFollower(t *testing.T) {
	t.Parallel()
	a, nb, ses, st, revoked := stuckFollowerPair(t)

	k, secret, err := a.eng.Keys().Create(bg, &podium.APIKey{Name: "k", Scopes: []string{"read"}})
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := ses.IssueSession(bg, "p", "phone", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	waitAuth(t, nb, secret, true)
	waitAuth(t, nb, token, true)
	st.stuck.Store(true)
	if err := a.eng.Keys().Delete(bg, k.ID); err != nil {
		t.Fatal(err)
	}
	sessions, err := ses.RevokeSessions(bg, "p", "")
	if err != nil || len(sessions) != 1 {
		t.Fatalf("RevokeSessions: %v %v", sessions, err)
	}
	waitAuth(t, nb, secret, false)
	waitAuth(t, nb, token, false)
	if got := revoked.all(); !slices.Contains(got, k.ID) || !slices.Contains(got, sessions[0]) {
		t.Errorf("streams ended on node b for %v, want %s and %s", got, k.ID, sessions[0])
	}
}

// TestSharedEvictionSkipsTheFollower: a session evicted by the cap (the
// eleventh device of a player) is revoked like any other: node b refuses
// it on the notice, with its change feed stuck (TestPlayerSessions saw
// node b accept an evicted session while its follower was behind).
func TestSharedEvictionSkipsTheFollower(t *testing.T) {
	t.Parallel()
	a, nb, ses, st, revoked := stuckFollowerPair(t)

	var first podium.Session
	var firstToken string
	for i := range podium.DefaultSessionCap {
		s, token, err := ses.IssueSession(bg, "p", fmt.Sprint("dev", i), 0, "")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first, firstToken = s, token
		}
	}
	waitAuth(t, nb, firstToken, true)
	st.stuck.Store(true)
	if _, _, err := ses.IssueSession(bg, "p", "one too many", 0, ""); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.eng.Keys().Authenticate(firstToken); ok {
		t.Fatal("node a still takes the evicted session")
	}
	waitAuth(t, nb, firstToken, false)
	if got := revoked.all(); !slices.Contains(got, first.ID) {
		t.Errorf("streams ended on node b for %v, want %s", got, first.ID)
	}
}

// BenchmarkSharedRevocation measures revoke-to-refusal latency on another
// node, over REVOKE_TRIALS trials (default 200) per run, with
// REVOKE_WRITERS (default 0) goroutines per node submitting scores, and
// reports its p50, p90, p99 and max in ms (docs/BENCHMARKS.md): "notice"
// as podium does it, "feed" the reference, where the other node learns of
// it from the change feed only (as before issue 17 item 14).
//
//	PODIUM_TEST_POSTGRES=... REVOKE_WRITERS=16 go test -run '^$' -bench SharedRevocation -benchtime 1x ./engine
func BenchmarkSharedRevocation(b *testing.B) {
	if os.Getenv("PODIUM_TEST_POSTGRES") == "" {
		b.Skip("PODIUM_TEST_POSTGRES is not set")
	}
	n, writers := 200, 0
	if v, err := strconv.Atoi(os.Getenv("REVOKE_TRIALS")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("REVOKE_WRITERS")); err == nil && v > 0 {
		writers = v
	}
	for _, name := range []string{"notice", "feed"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				lat := revokeTrials(b, n, writers, time.Second, name == "feed")
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
				b.ReportMetric(ms(quantile(lat, 0.5)), "p50-ms")
				b.ReportMetric(ms(quantile(lat, 0.9)), "p90-ms")
				b.ReportMetric(ms(quantile(lat, 0.99)), "p99-ms")
				b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
				fmt.Fprintf(os.Stderr, "%s: trials %d, writers %d per node: p50 %v p90 %v p99 %v max %v\n", name, n, writers,
					quantile(lat, 0.5), quantile(lat, 0.9), quantile(lat, 0.99), lat[len(lat)-1])
			}
		})
	}
}
