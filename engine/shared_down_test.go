package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/postgres"
)

// downStore is a PostgreSQL store that can be cut off: while down, every
// call that reaches the database fails as a lost connection would, and
// Begin counts how often a write tried to reach it.
type downStore struct {
	*postgres.Store
	down   atomic.Bool
	begins atomic.Int64
}

var errCut = errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")

func (s *downStore) Begin(ctx context.Context, boards []string) (podium.WriteTx, error) {
	if s.down.Load() {
		s.begins.Add(1)
		return nil, errCut
	}
	return s.Store.Begin(ctx, boards)
}

func (s *downStore) Heads(ctx context.Context) (map[string]uint64, error) {
	if s.down.Load() {
		return nil, errCut
	}
	return s.Store.Heads(ctx)
}

func (s *downStore) Changes(ctx context.Context, after int64, limit int) ([]podium.Change, error) {
	if s.down.Load() {
		return nil, errCut
	}
	return s.Store.Changes(ctx, after, limit)
}

func (s *downStore) LastChange(ctx context.Context) (int64, error) {
	if s.down.Load() {
		return 0, errCut
	}
	return s.Store.LastChange(ctx)
}

// Once a write finds the database unreachable, the writes after it are
// refused at once, as unavailable with nothing applied, without trying the
// database again (so they never wait on a connection timeout), until the
// node reaches the database again. This replaces a wall-clock bound in the
// cluster failure test (cmd/podium) with the count of attempts.
func TestSharedWritesFailFastWhileDatabaseDown(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	var ds *downStore
	n := c.start("n1", nodeOpts{noBroker: true, poll: 20 * time.Millisecond, wrap: func(st *postgres.Store) podium.Store {
		ds = &downStore{Store: st}
		return ds
	}})
	if _, _, err := n.eng.PutBoard(bg, newBoard(t, "d", podium.Sum, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := submitOn(n, "d", "p", 1); err != nil {
		t.Fatal(err)
	}

	ds.down.Store(true)
	if _, err := submitOn(n, "d", "p", 1); podium.ErrorCode(err) != podium.ECodeUnavailable {
		t.Fatalf("the first write after the cut: %v, want unavailable", err)
	}
	// The node learnt the database is down from that write's Begin, or
	// before it from its follower's poll (every 20 ms, which fails too):
	// either way, from now on no write may try the database again.
	tried := ds.begins.Load()
	for range 20 {
		_, err := submitOn(n, "d", "p", 1)
		if podium.ErrorCode(err) != podium.ECodeUnavailable {
			t.Fatalf("a write while the database is down: %v, want unavailable", err)
		}
	}
	if got := ds.begins.Load(); got != tried {
		t.Fatalf("writes while the database is known down tried it %d more times; they must fail fast", got-tried)
	}

	ds.down.Store(false)
	eventually(t, 10*time.Second, "writes after the database came back", func() bool {
		_, err := submitOn(n, "d", "p", 1)
		return err == nil
	})
	p := top(t, n, "d")
	if len(p.Entries) != 1 || p.Entries[0].Keys[0] != 2 {
		t.Fatalf("after the cut: %+v, want p with 2 (one write before, one after)", p.Entries)
	}
}
