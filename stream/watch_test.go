package stream

import "testing"

// TestWatch: a watch wakes once for a burst of its board's changes, not
// for other boards', and not after it is stopped; Applied never blocks on
// a watcher that does not read.
func TestWatch(t *testing.T) {
	h, _ := newTestHub(t, newFakeSource(), Config{})
	wake, stop := h.Watch("a")
	other, stopOther := h.Watch("b")
	defer stopOther()
	for range 100 {
		h.Applied("a", "", 0, nil)
	}
	if len(wake) != 1 || len(other) != 0 {
		t.Fatalf("pending wake-ups: a %d, b %d", len(wake), len(other))
	}
	<-wake
	stop()
	h.Applied("a", "", 0, nil)
	if len(wake) != 0 {
		t.Fatal("a stopped watch was woken")
	}
	h.mu.Lock()
	n := len(h.watches)
	h.mu.Unlock()
	if n != 1 {
		t.Fatalf("watched boards %d, want 1 (b)", n)
	}
}

// TestConnReserve: bytes a connection reserves count in the budget and
// its address's share, and are refused past the share.
func TestConnReserve(t *testing.T) {
	h, _ := newTestHub(t, newFakeSource(), Config{MemoryBudget: 1 << 20, MemoryPerAddress: 1000})
	c, err := h.Connect("1.2.3.4", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Reserve(600) {
		t.Fatal("600 bytes refused")
	}
	if st := h.Stats(); st.MemoryBytes != 600 || st.AddressMax != 600 {
		t.Fatalf("after reserve: %+v", st)
	}
	if c.Reserve(600) {
		t.Fatal("past the address's share")
	}
	c.Release(600)
	c.Close()
	if st := h.Stats(); st.MemoryBytes != 0 || st.AddressMax != 0 {
		t.Fatalf("after release: %+v", st)
	}
	h.mu.Lock()
	n := len(h.addrs)
	h.mu.Unlock()
	if n != 0 {
		t.Fatalf("addresses held: %d", n)
	}
}
