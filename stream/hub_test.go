package stream

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestHubConcurrent runs subscribers, unsubscribers, the writer's Applied
// and coalescing rounds from many goroutines at once, on a fake clock that
// makes every idle window expire at the next round. Under -race it checks
// that Applied never walks a window list the hub changes, and at the end
// that no subscription is left on a window the hub dropped: such a
// subscription gets one snapshot and then only heartbeats, for ever.
func TestHubConcurrent(t *testing.T) {
	rnd := newRand(seed(t))
	src := newFakeSource()
	boards := []string{"a", "b", "c"}
	for _, b := range boards {
		src.put(b, true)
		src.score(b, "p0", 1)
	}
	h, clk := newTestHub(t, src, Config{Queue: 8, IdleWindow: 1})
	limits := []int{1, 2, 3, 4, 5, 6, 7, 8}

	const subscribers, rounds = 8, 2000
	seeds := make([]uint64, subscribers+1)
	for i := range seeds {
		seeds[i] = rnd.Uint64()
	}
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { // the writer
		defer bg.Done()
		r := newRand(seeds[subscribers])
		for {
			select {
			case <-stop:
				return
			default:
			}
			b := boards[r.IntN(len(boards))]
			seq := src.score(b, fmt.Sprint("p", r.IntN(8)), int64(r.IntN(100)))
			h.Applied(b, "all", seq, nil)
		}
	}()
	go func() { // the ticker: every round, idle windows are old enough to go
		defer bg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			clk.Add(1e6)
			h.Tick()
		}
	}()
	conns := make([]*Conn, subscribers)
	var subs sync.WaitGroup
	for g := 0; g < subscribers; g++ {
		subs.Add(1)
		go func(g int) {
			defer subs.Done()
			r := newRand(seeds[g])
			var c *Conn
			for i := 0; i < rounds; i++ {
				if c == nil || r.IntN(20) == 0 {
					if c != nil {
						c.Close()
					}
					var err error
					if c, err = h.Connect(fmt.Sprint("10.0.0.", g), nil); err != nil {
						t.Error(err)
						return
					}
				}
				b, l := boards[r.IntN(len(boards))], limits[r.IntN(len(limits))]
				switch r.IntN(4) {
				case 0, 1:
					if _, err := c.Subscribe(context.Background(), b, l, ""); err != nil {
						t.Errorf("subscribe %s/%d: %v", b, l, err)
						return
					}
				case 2:
					c.Unsubscribe(b, l)
				case 3:
					drain(c)
				}
			}
			conns[g] = c
		}(g)
	}
	subs.Wait()
	close(stop)
	bg.Wait()
	if t.Failed() {
		return
	}
	// Every subscription left is attached to a window the hub still
	// holds, and hears about the next change.
	h.mu.Lock()
	orphans := 0
	for _, c := range conns {
		c.mu.Lock()
		for k, s := range c.subs {
			if h.windows[k] != s.w {
				orphans++
			}
		}
		c.mu.Unlock()
	}
	h.mu.Unlock()
	if orphans > 0 {
		t.Fatalf("%d subscriptions are attached to windows the hub dropped: they will never get another event", orphans)
	}
	for _, c := range conns {
		drain(c)
	}
	for _, b := range boards {
		h.Applied(b, "all", src.score(b, "late", 1000), nil)
	}
	clk.Add(2 * time.Second) // past any overload pause (one snapshot a second)
	h.Tick()
	defer func() {
		// Everything closed and expired: every accounted byte is back.
		for _, c := range conns {
			c.Close()
		}
		clk.Add(time.Hour)
		h.Tick()
		if st := h.Stats(); st.MemoryBytes != 0 || st.HistoryBytes != 0 || st.Windows != 0 || st.Subscriptions != 0 || st.Connections != 0 {
			t.Errorf("after closing everything the hub still accounts %+v", st)
		}
	}()
	for g, c := range conns {
		got := map[windowKey]bool{}
		for {
			s, ev, ok := c.Next(0, nil)
			if !ok || ev == nil {
				break
			}
			got[s.w.key] = true
		}
		c.mu.Lock()
		for k := range c.subs {
			if !got[k] {
				t.Errorf("connection %d: subscription %v heard nothing of the change", g, k)
			}
		}
		c.mu.Unlock()
	}
}

// TestSubscribeWhileWindowDropped: a coalescing round that drops an idle
// window between Subscribe finding it and attaching to it must not leave
// the subscription on the dropped window (where no round would ever flush
// it again): it attaches to the window the hub holds and hears changes.
func TestSubscribeWhileWindowDropped(t *testing.T) {
	src := newFakeSource()
	src.put("b", true)
	src.score("b", "p1", 1)
	h, clk := newTestHub(t, src, Config{IdleWindow: time.Second})
	first, err := h.Connect("10.0.0.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Subscribe(context.Background(), "b", 5, ""); err != nil {
		t.Fatal(err)
	}
	first.Close() // the window is now idle
	c, err := h.Connect("10.0.0.2", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testHookBeforeAttach = func() {
		testHookBeforeAttach = nil
		clk.Add(2 * time.Second)
		h.Tick() // drops the idle window
	}
	defer func() { testHookBeforeAttach = nil }()
	if _, err := c.Subscribe(context.Background(), "b", 5, ""); err != nil {
		t.Fatal(err)
	}
	if evs := drain(c); len(evs) != 1 || evs[0].Type != "snapshot" {
		t.Fatalf("subscribe sent:\n%s", describe(evs))
	}
	h.Applied("b", "all", src.score("b", "p2", 2), nil)
	h.Tick()
	if evs := drain(c); len(evs) != 1 || evs[0].Type != "delta" {
		t.Fatalf("after a change the subscriber got:\n%swant one delta", describe(evs))
	}
}

// TestSnapshotIDsDifferBetweenHubs: two hubs (two nodes, or one node
// before and after a restart) start their snapshot ids in ranges of their
// own, below 2^53. The ranges are random: this fails by chance once in
// about a million runs.
func TestSnapshotIDsDifferBetweenHubs(t *testing.T) {
	a, b := snapshotBase(), snapshotBase()
	if a>>32 == b>>32 {
		t.Fatalf("two hubs share the snapshot id range %#x", a)
	}
	for _, base := range []uint64{a, b} {
		if base+1<<32 > 1<<53 {
			t.Fatalf("snapshot ids from %#x pass 2^53", base)
		}
	}
}
