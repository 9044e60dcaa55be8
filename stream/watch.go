package stream

// Watches: a live endpoint that is not a window (a league cohort, whose
// state is a read of its own) is told when a board changes, and counts the
// bytes it holds against the connection's address and the hub's budget,
// as a window's state is counted.

// Watch returns a channel that receives a value when a change of board is
// applied (on this node, or followed from another), and a func that stops
// the watch. At most one value waits in the channel: a burst of changes
// is one wake-up, and the writer never blocks on a watcher.
func (h *Hub) Watch(board string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.watches == nil {
		h.watches = map[string]map[chan struct{}]struct{}{}
	}
	if h.watches[board] == nil {
		h.watches[board] = map[chan struct{}]struct{}{}
	}
	h.watches[board][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		if delete(h.watches[board], ch); len(h.watches[board]) == 0 {
			delete(h.watches, board)
		}
		h.mu.Unlock()
	}
}

// notifyLocked wakes the watches of board. The caller holds h.mu.
func (h *Hub) notifyLocked(board string) {
	for ch := range h.watches[board] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Reserve counts n bytes the caller holds for the connection (state kept
// outside the hub's windows) against the address's share and the hub's
// memory budget; false, with nothing counted, when there is no room.
// Release gives them back.
func (c *Conn) Reserve(n int64) bool { return c.hub.reserveView(c.addr, n, true) }

// Release gives back n bytes taken with Reserve.
func (c *Conn) Release(n int64) { c.hub.giveView(c.addr, n) }
