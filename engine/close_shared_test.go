package engine_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/internal/closetest"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/postgres"
)

// heldStore is a PostgreSQL store whose change-feed reads (the
// follower's, once armed) wait at a gate.
type heldStore struct {
	*postgres.Store
	gate  *closetest.Gate
	armed atomic.Bool // set once the engine started (Start reads the feed too)
}

func (s *heldStore) Changes(ctx context.Context, after int64, limit int) ([]podium.Change, error) {
	if s.armed.Load() {
		defer s.gate.Hold("follower: read the change feed")()
	}
	return s.Store.Changes(ctx, after, limit)
}

// heldBroker is an in-process broker whose subscriptions wait at a gate
// before they end.
type heldBroker struct {
	gate *closetest.Gate
	mu   sync.Mutex
	fns  []func(podium.Notice)
}

func (b *heldBroker) Publish(ctx context.Context, n podium.Notice) error {
	b.mu.Lock()
	fns := slices.Clone(b.fns)
	b.mu.Unlock()
	for _, fn := range fns {
		fn(n)
	}
	return nil
}

func (b *heldBroker) Subscribe(ctx context.Context, fn func(podium.Notice)) error {
	b.mu.Lock()
	b.fns = append(b.fns, fn)
	b.mu.Unlock()
	defer b.gate.Hold("broker subscription")()
	<-ctx.Done()
	return nil
}

func (b *heldBroker) Err() error   { return nil }
func (b *heldBroker) Close() error { return nil }

// TestCloseJoinsFollower closes a shared-mode node while its follower
// reads the change feed and its broker subscription runs: Close must wait
// for both. Before, neither was joined, and both could still use the store
// or the broker after Close returned.
func TestCloseJoinsFollower(t *testing.T) {
	c := newCluster(t)
	pg, err := postgres.Open(bg, c.dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	gate := closetest.New()
	st := &heldStore{Store: pg, gate: gate}
	e := modules.Engine(noScheduler(engine.Config{Store: st, Broker: &heldBroker{gate: gate}, Node: "a", PollEvery: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	gate.Arm() // the subscription starts before the load, and holds from then on
	if err := e.Start(bg); err != nil {
		t.Fatal(err)
	}
	st.armed.Store(true)
	if late := gate.Close(t, 2, "podium/engine.", func() { e.Close() }); len(late) > 0 {
		t.Fatalf("still running after Close returned: %v", late)
	}
}
