package stream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// TestMemoryBudget: past the budget the hub first drops histories (a
// resume then gets a snapshot), then refuses new windows with
// rate_limited, while subscriptions to windows that exist go on; closing
// everything gives every byte back.
func TestMemoryBudget(t *testing.T) {
	src := newFakeSource()
	for _, b := range []string{"a", "b"} {
		src.put(b, true)
		for i := 0; i < 200; i++ {
			src.score(b, fmt.Sprintf("player-%03d", i), int64(i))
		}
	}
	// Room for one window of 200 entries, its snapshot and some history,
	// not for a second window.
	probe, _ := newTestHub(t, src, Config{})
	c, _ := probe.Connect("192.0.2.1", nil)
	c.Subscribe(context.Background(), "a", 200, "")
	c.Close()
	one := probe.Stats().MemoryBytes
	budget := windowEstimate(200) + one/2
	h, clk := newTestHub(t, src, Config{MemoryBudget: budget, MemoryPerAddress: budget, SnapshotEvery: time.Hour})

	first, _ := h.Connect("192.0.2.1", nil)
	defer first.Close()
	if _, err := first.Subscribe(context.Background(), "a", 200, ""); err != nil {
		t.Fatal(err)
	}
	drain(first)
	// Deltas fill the history until the budget says no.
	var firstDelta string
	for i := 0; i < 500; i++ {
		h.Applied("a", "all", src.score("a", "player-000", int64(-1-i)), nil) // the last entry: one-entry deltas
		clk.Add(2e9)                                                          // no overload pause
		h.Tick()
		if evs := drain(first); firstDelta == "" && len(evs) > 0 {
			firstDelta = evs[0].ID
		}
		if st := h.Stats(); st.MemoryBytes > budget {
			t.Fatalf("round %d: the hub holds %d bytes, budget %d: %+v", i, st.MemoryBytes, budget, st)
		}
	}
	if st := h.Stats(); st.Shed == 0 {
		t.Fatalf("the history was never dropped for the budget: %+v", st)
	}
	if evs := resume(t, h, "a", firstDelta); len(evs) != 1 || evs[0].Type != "snapshot" {
		t.Fatalf("a resume after the history was dropped got:\n%s", describe(evs))
	}

	second, _ := h.Connect("192.0.2.2", nil)
	defer second.Close()
	_, err := second.Subscribe(context.Background(), "b", 200, "")
	if podium.ErrorCode(err) != podium.ECodeRateLimited {
		t.Fatalf("a new window past the budget: %v (stats %+v)", err, h.Stats())
	}
	if h.Stats().WindowsRefused == 0 {
		t.Fatal("the refusal was not counted")
	}
	// The window that exists takes more subscribers.
	if _, err := second.Subscribe(context.Background(), "a", 200, ""); err != nil {
		t.Fatalf("subscribing to an existing window past the budget: %v", err)
	}

	first.Close()
	second.Close()
	clk.Add(2 * h.cfg.IdleWindow)
	h.Tick()
	if st := h.Stats(); st.MemoryBytes != 0 || st.HistoryBytes != 0 || st.Windows != 0 || st.Subscriptions != 0 {
		t.Fatalf("after closing everything the hub still accounts %+v", st)
	}
}

// TestQueueBytesBounded: a connection whose queued events pass QueueBytes
// is resynced like one whose queue is full: what was queued is dropped and
// it gets one fresh snapshot.
func TestQueueBytesBounded(t *testing.T) {
	src := newFakeSource()
	src.put("b", true)
	h, _ := newTestHub(t, src, Config{QueueBytes: 1500, Queue: 1000})
	c := subscribed(t, h, nil, "b")
	for i := 0; i < 20; i++ { // nobody reads
		h.Applied("b", "all", src.score("b", fmt.Sprint("p", i), int64(-i)), nil)
		h.Tick()
	}
	if c.qBytes.Load() > 1500 || !c.lagging.Load() {
		t.Fatalf("queued %d bytes (bound 1500), lagging %v", c.qBytes.Load(), c.lagging.Load())
	}
	if evs := drain(c); len(evs) != 1 || evs[0].Type != "snapshot" || c.Resyncs() != 1 {
		t.Fatalf("after the overflow:\n%s(resyncs %d)", describe(evs), c.Resyncs())
	}
}

// TestSubscriptionsPerConnection: a connection holds at most MaxSubs
// subscriptions.
func TestSubscriptionsPerConnection(t *testing.T) {
	src := newFakeSource()
	src.put("b", true)
	h, _ := newTestHub(t, src, Config{MaxSubs: 3})
	c, _ := h.Connect("192.0.2.1", nil)
	defer c.Close()
	for l := 1; l <= 3; l++ {
		if _, err := c.Subscribe(context.Background(), "b", l, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Subscribe(context.Background(), "b", 4, ""); podium.ErrorCode(err) != podium.ECodeInvalid {
		t.Fatalf("a fourth subscription: %v", err)
	}
	if n := h.Stats().Subscriptions; n != 3 {
		t.Fatalf("%d subscriptions counted", n)
	}
}

// TestClaimCountsWithSubscriptions: a subscription held outside the hub
// (Claim) takes a place of MaxSubs as a window's does, Unclaim frees it,
// and a closed connection claims nothing.
func TestClaimCountsWithSubscriptions(t *testing.T) {
	src := newFakeSource()
	src.put("b", true)
	h, _ := newTestHub(t, src, Config{MaxSubs: 2})
	c, _ := h.Connect("192.0.2.1", nil)
	if _, err := c.Subscribe(context.Background(), "b", 1, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.Claim(); err != nil {
		t.Fatal(err)
	}
	if err := c.Claim(); podium.ErrorCode(err) != podium.ECodeInvalid {
		t.Fatalf("a third, claimed: %v", err)
	}
	if _, err := c.Subscribe(context.Background(), "b", 2, ""); podium.ErrorCode(err) != podium.ECodeInvalid {
		t.Fatalf("a third, a window: %v", err)
	}
	c.Unclaim()
	if _, err := c.Subscribe(context.Background(), "b", 2, ""); err != nil {
		t.Fatalf("a window in the claim's place: %v", err)
	}
	c.Close()
	if err := c.Claim(); err == nil {
		t.Fatal("a closed connection claimed a place")
	}
}
