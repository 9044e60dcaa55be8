package stream

import (
	"context"
	"slices"
	"time"
)

// The hub's windows: opened when a subscriber asks for one (window),
// flushed by coalescing rounds (Tick), one read per board, and dropped
// when nobody has watched them for IdleWindow or their board is gone
// (drop).

// window returns the window of (board, limit), creating and loading it;
// a new window's state is reserved in the budget and in the share of a,
// the address that opens it. The caller must attach to it under h.mu
// after checking that the hub still holds it (attach does): a round may
// drop an idle window at any time before that.
func (h *Hub) window(ctx context.Context, key windowKey, a *address) (*window, error) {
	board, limit := key.board, key.limit
	h.mu.Lock()
	w := h.windows[key]
	if w != nil {
		w.mu.Lock()
		if len(w.subs) == 0 && w.dirty.Load() || w.dead {
			// Nobody watched it while its board changed (or was deleted
			// and made again): start afresh rather than hand out an old
			// state.
			h.dropLocked(w)
			w = nil
		} else {
			w.mu.Unlock()
		}
	}
	h.mu.Unlock()
	if w != nil {
		return w, nil
	}
	if err := h.admitWindow(a, limit); err != nil {
		return nil, err
	}
	v, err := h.readKey(ctx, key)
	if err != nil {
		return nil, err
	}
	n := viewSize(&v)
	if !h.reserveView(a, n, true) {
		if a.bytes.Load()+n > h.mem.perAddr {
			h.mem.refused.Add(1)
			return nil, errAddressShare
		}
		h.shed()
		if !h.reserveView(a, n, true) {
			h.mem.refused.Add(1)
			return nil, errBudget
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.windows[key]; w != nil {
		h.giveView(a, n)
		return w, nil
	}
	w = newWindow(h, key, v, a, n)
	h.windows[key] = w
	h.byBoard[board] = append(h.byBoard[board], w)
	return w, nil
}

// run calls Tick every Coalesce interval, unless ticks are manual.
func (h *Hub) run() {
	defer close(h.done)
	if h.cfg.ManualTick {
		<-h.stop
		return
	}
	t := time.NewTicker(h.cfg.Coalesce)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		h.Tick()
	}
}

// Tick runs one coalescing round at the hub clock's time: every dirty
// window sends what changed, periodic snapshots go out, and windows idle
// for longer than IdleWindow are dropped. The hub's own ticker calls it
// every Coalesce interval; with ManualTick, tests call it. Rounds run one
// at a time.
func (h *Hub) Tick() {
	h.tickMu.Lock()
	defer h.tickMu.Unlock()
	now := h.cfg.Now()
	h.mu.Lock()
	list := make([]*window, 0, len(h.windows))
	for _, w := range h.windows {
		list = append(list, w)
	}
	h.mu.Unlock()
	// Windows of one board share one read: the largest limit, cut to
	// size for the others.
	type source struct {
		board string
		feed  bool
	}
	flush := map[source][]*window{}
	for _, w := range list {
		switch drop, due := w.due(now); {
		case drop:
			h.drop(w)
		case due:
			src := source{w.key.board, w.key.feed}
			flush[src] = append(flush[src], w)
		}
	}
	for _, ws := range flush {
		h.flushBoard(now, ws)
	}
	for _, w := range list {
		w.periodic(now)
	}
	if h.mem.pressure.Swap(false) {
		h.shed()
	}
}

// flushBoard flushes windows of one board from one read. It holds their
// flush locks, taken by increasing limit, across the read, so that no
// other flush applies a newer view in between.
func (h *Hub) flushBoard(now time.Time, ws []*window) {
	slices.SortFunc(ws, func(a, b *window) int { return a.key.limit - b.key.limit })
	for _, w := range ws {
		w.flushMu.Lock()
	}
	v, err := h.read(ws[len(ws)-1].key)
	for _, w := range ws {
		w.apply(now, v.top(w.key.limit), err)
		w.flushMu.Unlock()
	}
}

// read reads the view of a window's key (the top limit entries of a
// board, or a feed's newest events) from the source.
func (h *Hub) read(key windowKey) (View, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return h.readKey(ctx, key)
}

func (h *Hub) readKey(ctx context.Context, key windowKey) (View, error) {
	if key.feed {
		return h.readFeed(ctx, key) // feed.go
	}
	return h.src.View(ctx, key.board, key.limit)
}

// top returns the view cut to its first limit entries; the entries are
// copied, so that a window never keeps a larger window's read alive.
func (v View) top(limit int) View {
	if len(v.Entries) > limit {
		v.Entries = slices.Clone(v.Entries[:limit])
	}
	if len(v.Feed) > limit {
		v.Feed = slices.Clone(v.Feed[:limit])
	}
	return v
}

// drop forgets a window that has no subscribers left (or whose board is
// gone). It checks again under the locks: a subscriber may have attached
// since the caller looked.
func (h *Hub) drop(w *window) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w.mu.Lock()
	if len(w.subs) > 0 && !w.dead {
		w.mu.Unlock()
		return
	}
	h.dropLocked(w)
}

// dropLocked forgets w and gives back its memory. The caller holds h.mu
// and w.mu; w.mu is released.
func (h *Hub) dropLocked(w *window) {
	if !w.dropped {
		w.dropped = true
		w.clearHistoryLocked()
		w.setSnapLocked(nil)
		h.giveView(w.owner, w.viewBytes)
		w.viewBytes = 0
		h.forgetAddrLocked(w.owner)
	}
	w.mu.Unlock()
	if h.windows[w.key] != w {
		return
	}
	delete(h.windows, w.key)
	ws := h.byBoard[w.key.board]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(h.byBoard, w.key.board)
	} else {
		h.byBoard[w.key.board] = ws
	}
}
