package ctf

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/closetest"
)

// gatedBroker is an in-process broker whose subscriptions wait at a gate
// before they end.
type gatedBroker struct {
	gate *closetest.Gate
	mu   sync.Mutex
	fns  []func(podium.Notice)
}

func (b *gatedBroker) Publish(ctx context.Context, n podium.Notice) error {
	b.mu.Lock()
	fns := slices.Clone(b.fns)
	b.mu.Unlock()
	for _, fn := range fns {
		fn(n)
	}
	return nil
}

func (b *gatedBroker) Subscribe(ctx context.Context, fn func(podium.Notice)) error {
	b.mu.Lock()
	b.fns = append(b.fns, fn)
	b.mu.Unlock()
	defer b.gate.Hold("broker subscription")()
	<-ctx.Done()
	return nil
}

func (b *gatedBroker) Err() error   { return nil }
func (b *gatedBroker) Close() error { return nil }

// TestCloseJoinsSubscription: Close must wait for the broker subscription
// to end. Before, the subscription ran on a goroutine Close did not join,
// so it could still use the broker after Close returned (and the caller
// closed the broker).
func TestCloseJoinsSubscription(t *testing.T) {
	gate := closetest.New()
	gate.Arm()
	s := New(Config{Store: openSQLite(t), Players: &players{hidden: map[string]bool{}}, Now: (&clock{t: t0}).now, Poll: -1,
		Broker: &gatedBroker{gate: gate}})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if late := gate.Close(t, 1, "podium/ctf.", func() { s.Close() }); len(late) > 0 {
		t.Fatalf("still running after Close returned: %v", late)
	}
}
