package stream

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// boundSource is a fake source of boards with n players each, with a
// little meta so that events have some size.
func boundSource(boards, n int) *fakeSource {
	src := newFakeSource()
	for b := 0; b < boards; b++ {
		id := fmt.Sprint("b", b)
		src.put(id, true)
		for i := 0; i < n; i++ {
			src.score(id, fmt.Sprintf("player-with-a-name-%04d", i), int64(i))
		}
	}
	return src
}

// TestBudgetHoldsWithNonReaders: clients from many addresses that never
// read (or read one event and stall in its write), each at a window of
// its own, while the boards change and periodic snapshots go out. The
// accounted bytes never pass the budget, at any step.
func TestBudgetHoldsWithNonReaders(t *testing.T) {
	rng := newRand(seed(t))
	const boards, players = 3, 200
	src := boundSource(boards, players)
	const budget = 4 << 20
	h, clk := newTestHub(t, src, Config{MemoryBudget: budget, SnapshotEvery: time.Second})
	var conns []*Conn
	check := func(step string) {
		t.Helper()
		checkBounds(t, h, step, conns)
	}
	refused := 0
	for a := 0; a < 40; a++ {
		for k := 0; k < 8; k++ {
			c, err := h.Connect(fmt.Sprintf("198.51.100.%d", a), nil)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			n := a*8 + k
			_, err = c.Subscribe(context.Background(), fmt.Sprint("b", n%boards), players-n%players, "")
			if err != nil {
				if podium.ErrorCode(err) != podium.ECodeRateLimited {
					t.Fatalf("subscribe: %v", err)
				}
				refused++
			} else if rng.IntN(3) == 0 {
				c.Next(0, nil) // takes one event and never comes back: a write that stalls
			}
			check(fmt.Sprintf("subscription %d", n))
		}
	}
	for round := 0; round < 30; round++ {
		for i := 0; i < 20; i++ {
			b := fmt.Sprint("b", rng.IntN(boards))
			h.Applied(b, "all", src.score(b, fmt.Sprintf("player-with-a-name-%04d", rng.IntN(players)), int64(rng.IntN(10*players))), nil)
		}
		clk.Add(300 * time.Millisecond)
		h.Tick()
		check(fmt.Sprintf("round %d", round))
	}
	t.Logf("%d of 320 subscriptions refused; %+v", refused, h.Stats())
	if st := h.Stats(); st.Behind == 0 {
		t.Fatalf("no connection fell behind: %+v", st)
	}
	closeAll(t, h, clk, conns)
}

// checkBounds fails when the hub's accounted bytes ever passed its
// budget, an address holds more than its share, or a connection more
// than its bound.
func checkBounds(t *testing.T, h *Hub, step string, conns []*Conn) {
	t.Helper()
	st := h.Stats()
	if st.MemoryBytes > st.MemoryBudget || st.MemoryPeak > st.MemoryBudget {
		t.Fatalf("%s: %d bytes accounted (peak %d), budget %d (%+v)", step, st.MemoryBytes, st.MemoryPeak, st.MemoryBudget, st)
	}
	if st.AddressMax > st.MemoryPerAddr {
		t.Fatalf("%s: an address holds %d bytes, its share is %d", step, st.AddressMax, st.MemoryPerAddr)
	}
	for _, c := range conns {
		if n := c.qBytes.Load(); n > c.limit {
			t.Fatalf("%s: a connection holds %d bytes, its bound is %d", step, n, c.limit)
		}
	}
}

// closeAll closes the connections, lets the windows expire and checks
// that every byte came back and no address is left.
func closeAll(t *testing.T, h *Hub, clk *fakeClock, conns []*Conn) {
	t.Helper()
	for _, c := range conns {
		c.Close()
	}
	clk.Add(2 * h.cfg.IdleWindow)
	h.Tick()
	h.mu.Lock()
	addrs := len(h.addrs)
	h.mu.Unlock()
	if st := h.Stats(); st.MemoryBytes != 0 || st.Windows != 0 || st.Subscriptions != 0 || st.AddressMax != 0 || addrs != 0 {
		t.Fatalf("after closing everything the hub still accounts %+v (%d addresses)", st, addrs)
	}
}

// TestOneAddressManySubscriptions: one address's 32 connections with 32
// subscriptions each, every one at a window of its own, never reading.
// The address holds at most its share, and another address can still
// open a window.
func TestOneAddressManySubscriptions(t *testing.T) {
	rng := newRand(seed(t))
	const boards, players = 4, 300
	src := boundSource(boards, players)
	const budget = 4 << 20
	h, clk := newTestHub(t, src, Config{MemoryBudget: budget, SnapshotEvery: time.Second})
	var conns []*Conn
	taken := 0
	for i := 0; i < 32; i++ {
		c, err := h.Connect("203.0.113.5", nil)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		for k := 0; k < 32; k++ {
			n := i*32 + k
			_, err := c.Subscribe(context.Background(), fmt.Sprint("b", n%boards), players-n/boards%players, "")
			if err == nil {
				taken++
			} else if podium.ErrorCode(err) != podium.ECodeRateLimited {
				t.Fatal(err)
			}
			checkBounds(t, h, fmt.Sprintf("subscription %d", n), conns)
		}
	}
	for round := 0; round < 30; round++ {
		for i := 0; i < 20; i++ {
			b := fmt.Sprint("b", rng.IntN(boards))
			h.Applied(b, "all", src.score(b, fmt.Sprintf("player-with-a-name-%04d", rng.IntN(players)), int64(rng.IntN(10*players))), nil)
		}
		clk.Add(300 * time.Millisecond)
		h.Tick()
		checkBounds(t, h, fmt.Sprintf("round %d", round), conns)
	}
	other, err := h.Connect("192.0.2.200", nil)
	if err != nil {
		t.Fatal(err)
	}
	conns = append(conns, other)
	if _, err := other.Subscribe(context.Background(), "b0", 77, ""); err != nil {
		t.Fatalf("another address after one took its share: %v (%+v)", err, h.Stats())
	}
	if evs := drain(other); len(evs) != 1 || evs[0].Type != "snapshot" {
		t.Fatalf("the other address got:\n%s", describe(evs))
	}
	t.Logf("%d of 1,024 subscriptions taken; %+v", taken, h.Stats())
	closeAll(t, h, clk, conns)
}

// TestFallingBehindDropsTheQueueAtOnce: a client that took one event and
// stopped reading (its write is stuck) holds, once it falls behind, only
// that event: what was queued is given back at once, not when it reads
// again. When it does read again, it gets a snapshot of the board as it
// is.
func TestFallingBehindDropsTheQueueAtOnce(t *testing.T) {
	src := boundSource(1, 50)
	h, clk := newTestHub(t, src, Config{Queue: 1000, QueueBytes: 64 << 10, SnapshotEvery: time.Hour})
	c, err := h.Connect("192.0.2.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Subscribe(context.Background(), "b0", 50, ""); err != nil {
		t.Fatal(err)
	}
	_, first, _ := c.Next(0, nil) // being written, for ever
	for i := 0; !c.lagging.Load(); i++ {
		if i == 1000 {
			t.Fatal("the connection never fell behind")
		}
		h.Applied("b0", "all", src.score("b0", fmt.Sprintf("player-with-a-name-%04d", i%50), int64(1000+i)), nil)
		clk.Add(2 * time.Second) // within the window's rate
		h.Tick()
	}
	if n := c.qBytes.Load(); len(c.q) != 0 || n != first.size {
		t.Fatalf("after falling behind the connection holds %d bytes in %d queued events; want only the %d of the event being written", n, len(c.q), first.size)
	}
	if st := h.Stats(); st.Behind != 1 {
		t.Fatalf("behind %d, want 1", st.Behind)
	}
	evs := drain(c)
	if len(evs) != 1 || evs[0].Type != "snapshot" {
		t.Fatalf("reading again:\n%s", describe(evs))
	}
	v, _ := src.View(context.Background(), "b0", 50)
	if evs[0].Seq != v.Seq {
		t.Fatalf("the resync snapshot is at seq %d, the board at %d", evs[0].Seq, v.Seq)
	}
	if n := c.qBytes.Load(); n != 0 {
		t.Fatalf("a connection that read everything holds %d bytes", n)
	}
}

// TestNoRoomForASnapshot: a subscription whose first snapshot is larger
// than the connection's bound is refused (rate_limited); one whose
// window grew past the bound while it fell behind ends its connection
// with rate_limited when it reads again.
func TestNoRoomForASnapshot(t *testing.T) {
	src := boundSource(1, 5)
	probe, _ := newTestHub(t, src, Config{})
	pc, _ := probe.Connect("192.0.2.1", nil)
	pc.Subscribe(context.Background(), "b0", 50, "")
	small := drain(pc)[0].size
	pc.Close()

	h, _ := newTestHub(t, src, Config{QueueBytes: 3 * small})
	c, _ := h.Connect("192.0.2.1", nil)
	defer c.Close()
	if _, err := c.Subscribe(context.Background(), "b0", 50, ""); err != nil {
		t.Fatal(err)
	}
	drain(c)
	for i := 0; i < 50; i++ { // the window fills: its snapshot grows past the bound
		h.Applied("b0", "all", src.score("b0", fmt.Sprintf("newcomer-with-a-long-name-%04d", i), int64(1000+i)), nil)
	}
	h.Tick()
	if !c.lagging.Load() {
		t.Fatal("a delta larger than the bound did not put the connection behind")
	}
	if _, ev, ok := c.Next(0, nil); ok || podium.ErrorCode(c.Err()) != podium.ECodeRateLimited {
		t.Fatalf("reading again: %v %v, err %v", ev, ok, c.Err())
	}
	if st := h.Stats(); st.Cut != 1 {
		t.Fatalf("cut %d, want 1", st.Cut)
	}
	c2, _ := h.Connect("192.0.2.2", nil)
	defer c2.Close()
	if _, err := c2.Subscribe(context.Background(), "b0", 50, ""); podium.ErrorCode(err) != podium.ECodeRateLimited {
		t.Fatalf("a subscription whose snapshot exceeds the bound: %v", err)
	}
}

// TestBudgetHoldsUnderConcurrency: subscribers at windows of their own,
// from many goroutines at once, while rounds run: the peak never passes
// the budget (new windows are reserved, not checked and then taken).
func TestBudgetHoldsUnderConcurrency(t *testing.T) {
	rng := newRand(seed(t))
	const boards, players = 3, 200
	src := boundSource(boards, players)
	const budget = 2 << 20
	h, clk := newTestHub(t, src, Config{MemoryBudget: budget, MemoryPerAddress: budget, SnapshotEvery: time.Second})
	seeds := make([]uint64, 8)
	for i := range seeds {
		seeds[i] = rng.Uint64()
	}
	stop := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		r := newRand(rng.Uint64())
		for {
			select {
			case <-stop:
				return
			default:
			}
			b := fmt.Sprint("b", r.IntN(boards))
			h.Applied(b, "all", src.score(b, fmt.Sprintf("player-with-a-name-%04d", r.IntN(players)), int64(r.IntN(1000))), nil)
			clk.Add(100 * time.Millisecond)
			h.Tick()
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []*Conn
	for g := range seeds {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := newRand(seeds[g])
			for i := 0; i < 40; i++ {
				c, err := h.Connect(fmt.Sprintf("198.51.100.%d", g*40+i), nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
				c.Subscribe(context.Background(), fmt.Sprint("b", r.IntN(boards)), 1+r.IntN(players), "")
				if r.IntN(2) == 0 {
					c.Next(0, nil)
				}
			}
		}(g)
	}
	wg.Wait()
	close(stop)
	<-ticked
	checkBounds(t, h, "the end", conns)
	t.Logf("%+v", h.Stats())
	closeAll(t, h, clk, conns)
}
