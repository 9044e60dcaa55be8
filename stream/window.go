package stream

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium"
)

// window is the live view of one board's top N. Its state (view) is the
// state as of its last event: snapshots for new or resynced subscribers are
// built from it, so they line up exactly with the deltas that follow.
type window struct {
	hub   *Hub
	key   windowKey
	dirty atomic.Bool

	// flushMu makes flushes (a round's, a subscriber's refresh) run one
	// at a time, so that views are applied in the order they were read.
	flushMu sync.Mutex

	mu        sync.Mutex
	subs      map[*Sub]struct{}
	view      View
	viewBytes int64    // viewSize(&view), as accounted
	owner     *address // the address that opened the window: its share holds the state
	snapID    uint64
	// history holds the deltas of the current chain (since the snapshot
	// snapID), oldest first, for resume: at most hub.cfg.History events
	// and hub.cfg.HistoryBytes bytes, none while the hub is over its
	// memory budget.
	history   []*Event
	histBytes int64
	snap      *Event // the encoded snapshot of view, built on demand
	lastSnap  time.Time
	idleAt    time.Time // when the last subscriber left
	// budget is what the window may still send, in entries, and budgetAt
	// when it was last topped up (spendLocked).
	budget   float64
	budgetAt time.Time
	dead     bool      // the board is gone
	lastRead time.Time // feed windows: when the feed was last read (feed.go)
	dropped  bool      // the hub forgot the window: nobody may attach
}

// newWindow returns a window showing v, whose n bytes (viewSize) the
// caller reserved for owner.
func newWindow(h *Hub, key windowKey, v View, owner *address, n int64) *window {
	now := h.cfg.Now()
	w := &window{hub: h, key: key, subs: map[*Sub]struct{}{}, snapID: h.newSnapshotID(),
		lastSnap: now, idleAt: now, budgetAt: now, view: v, viewBytes: n, owner: owner}
	w.budget = float64(w.overloadLimit())
	return w
}

// setViewLocked makes v the window's state and accounts its bytes (in the
// budget, and in its opener's share, which a growing state may pass). A
// state that finds no room in the budget, even once the window's own
// history and cached snapshot are dropped, is not taken: false, and the
// caller tries again at the next round.
func (w *window) setViewLocked(v View) bool {
	h := w.hub
	n := viewSize(&v)
	if d := n - w.viewBytes; d > 0 && !h.reserveView(w.owner, d, false) {
		w.clearHistoryLocked()
		w.setSnapLocked(nil)
		if !h.reserveView(w.owner, d, false) {
			h.mem.deferred.Add(1)
			w.dirty.Store(true)
			return false
		}
	} else if d < 0 {
		h.giveView(w.owner, -d)
	}
	w.view = v
	w.viewBytes = n
	return true
}

// setSnapLocked replaces the cached snapshot (nil: none). A snapshot that
// finds no room in the budget is not cached.
func (w *window) setSnapLocked(ev *Event) {
	if w.snap != nil {
		w.hub.mem.release(w.snap)
	}
	w.snap = nil
	if ev != nil && w.hub.mem.tryHold(ev) {
		w.snap = ev
	}
}

// clearHistoryLocked forgets the history: a resume gets a snapshot.
func (w *window) clearHistoryLocked() {
	for i, ev := range w.history {
		w.hub.mem.release(ev)
		w.history[i] = nil
	}
	w.hub.mem.history.Add(-w.histBytes)
	w.history, w.histBytes = w.history[:0], 0
}

// position is the id of the window's last event.
func (w *window) position() string { return EventID(w.snapID, w.view.Seq) }

// snapshotLocked returns the encoded snapshot of the current view, cached
// while the budget has room for it.
func (w *window) snapshotLocked() *Event {
	if w.snap != nil {
		return w.snap
	}
	var ev *Event
	if w.key.feed {
		ev = w.feedSnapshot() // feed.go
	} else {
		v := &w.view
		ev = newEvent("snapshot", w.snapID, v.Seq, snapshotMsg{Type: "snapshot", Board: v.Board, Title: v.Title,
			Keys: v.Keys, Period: v.Period, NextReset: optTime(v.NextReset), Seq: v.Seq, SnapshotID: w.snapID,
			Limit: w.key.limit, Total: v.Total, Entries: nonNil(v.Entries)})
	}
	if !w.dropped { // else nobody keeps it
		w.setSnapLocked(ev)
	}
	return ev
}

func nonNil(e []Entry) []Entry {
	if e == nil {
		return []Entry{}
	}
	return e
}

// since returns the events after the one with id last, or false when the
// history does not reach back that far (the caller sends a snapshot).
// The history holds only the current chain's deltas: an id from an older
// chain, or from before what the history kept, gets a snapshot.
func (w *window) sinceLocked(last string) ([]*Event, bool) {
	if last == "" {
		return nil, false
	}
	if last == w.position() {
		return nil, true
	}
	for i, ev := range w.history {
		if ev.prev == last {
			return w.history[i:], true
		}
	}
	return nil, false
}

// broadcastLocked offers ev to every subscriber, and keeps a delta in the
// history, within its bounds and the hub's memory budget.
func (w *window) broadcastLocked(ev *Event) {
	if ev.Type == "delta" {
		w.rememberLocked(ev)
	}
	for s := range w.subs {
		s.offer(ev)
	}
}

// rememberLocked appends a delta to the history, dropping the oldest to
// stay within History events and HistoryBytes bytes. When the hub's
// budget has no room for it, it keeps nothing.
func (w *window) rememberLocked(ev *Event) {
	cfg, mem := &w.hub.cfg, &w.hub.mem
	if ev.size > cfg.HistoryBytes {
		w.clearHistoryLocked()
		return
	}
	drop := 0
	for drop < len(w.history) && (len(w.history)-drop >= cfg.History || w.histBytes+ev.size > cfg.HistoryBytes) {
		old := w.history[drop]
		w.histBytes -= old.size
		mem.history.Add(-old.size)
		mem.release(old)
		drop++
	}
	if drop > 0 {
		n := copy(w.history, w.history[drop:])
		clear(w.history[n:])
		w.history = w.history[:n]
	}
	if !mem.tryHold(ev) {
		if len(w.history) > 0 {
			mem.shed.Add(1)
		}
		w.clearHistoryLocked()
		return
	}
	w.history = append(w.history, ev)
	w.histBytes += ev.size
	mem.history.Add(ev.size)
}

// due tells a round what to do with the window: drop it (its board is
// gone, or nobody has watched it for IdleWindow), or flush it (its board
// changed, or its period ended). It takes the dirty flag.
func (w *window) due(now time.Time) (drop, flush bool) {
	w.mu.Lock()
	idle := len(w.subs) == 0
	dead := w.dead
	rollover := w.view.NextReset != nil && !now.Before(*w.view.NextReset)
	idleFor := now.Sub(w.idleAt)
	// Decayed values move with the clock alone: read them again before
	// the periodic snapshot restates the window.
	refresh := decaying(&w.view) && now.Sub(w.lastSnap) >= w.hub.cfg.SnapshotEvery
	w.mu.Unlock()
	if dead || idle && idleFor > w.hub.cfg.IdleWindow {
		return true, false
	}
	if idle {
		return false, false // a dirty flag waits for the next subscriber
	}
	if w.key.feed && w.feedPollDue(now) {
		// Events that no local change announces (appended on another
		// node without moving a board) are found by polling (feed.go).
		w.dirty.Store(false)
		return false, true
	}
	return false, w.dirty.Swap(false) || rollover || refresh
}

// decaying reports whether a view's entries carry decayed values (a
// current points board).
func decaying(v *View) bool { return len(v.Entries) > 0 && v.Entries[0].Value != "" }

// periodic sends the safety-net snapshot when it is due.
func (w *window) periodic(now time.Time) {
	w.mu.Lock()
	if len(w.subs) > 0 && !w.dead && !w.dropped && now.Sub(w.lastSnap) >= w.hub.cfg.SnapshotEvery {
		w.newSnapshotLocked(now)
	}
	w.mu.Unlock()
}

// idleSinceLocked notes when the last subscriber left.
func (w *window) idleSinceLocked() {
	if len(w.subs) == 0 {
		w.idleAt = w.hub.cfg.Now()
	}
}

// dieLocked ends every subscription: the board is gone.
func (w *window) dieLocked() {
	w.dead = true
	ev := errorEvent(w.key.board, podium.ECodeBoardNotFound, "the board was deleted")
	for s := range w.subs {
		s.endLocked(ev)
	}
}

// reauthorizeLocked ends, with an error event, every subscription whose
// principal may not read the board as v shows it. It runs before the
// window sends anything of v, whenever v's visibility or generation
// differs from what the window sent last.
func (w *window) reauthorizeLocked(v *View) {
	evs := map[string]*Event{}
	for s := range w.subs {
		err := CanRead(s.conn.key, v.Board, v.Public)
		if err == nil {
			continue
		}
		code := podium.ErrorCode(err)
		if evs[code] == nil {
			evs[code] = errorEvent(w.key.board, code, podium.ErrorMessage(err))
		}
		s.endLocked(evs[code])
	}
}

// newSnapshotLocked starts a new snapshot chain and sends it to everyone.
// The old chain's deltas go: a resume from them gets this snapshot.
func (w *window) newSnapshotLocked(now time.Time) {
	w.snapID = w.hub.newSnapshotID()
	w.setSnapLocked(nil)
	w.clearHistoryLocked()
	w.lastSnap = now
	w.broadcastLocked(w.snapshotLocked())
	if w.hub.mem.pressure.Load() {
		w.setSnapLocked(nil) // the queues hold it; keep no copy while memory is short
	}
}
