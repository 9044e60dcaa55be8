package stream

import (
	"slices"
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

func sameValues(a, b []Entry) bool {
	for i := range a {
		if a[i].Value != b[i].Value {
			return false
		}
	}
	return true
}

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

// flush reads the board and sends what changed in the window.
func (w *window) flush(now time.Time) {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	v, err := w.hub.read(w.key)
	w.apply(now, v, err)
}

// apply sends what changed between the window's state and v, a fresh
// read of the board (or the error of reading it). The caller holds
// flushMu, so views are applied in the order they were read.
func (w *window) apply(now time.Time, v View, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dead || w.dropped {
		return
	}
	if err != nil {
		if podium.ErrorCode(err) == podium.ECodeBoardNotFound {
			w.dieLocked()
			return
		}
		w.hub.log.Warn("stream: read board", "board", w.key.board, "feed", w.key.feed, "err", err)
		w.dirty.Store(true) // try again next tick
		return
	}
	if w.key.feed {
		w.applyFeedLocked(now, v) // feed.go
		return
	}
	if v.Generation != w.view.Generation || v.Public != w.view.Public {
		// Who may read the board may have changed: nobody gets anything
		// of v before being allowed to read it.
		w.reauthorizeLocked(&v)
		w.view.Public = v.Public // what the window's readers are now checked against
	}
	if v.Generation != w.view.Generation || v.Title != w.view.Title || !slices.Equal(v.Keys, w.view.Keys) {
		// The board was deleted and made again (its seq starts over, and
		// its keys and title may differ), or it is shown differently: a
		// delta cannot say that, so a new chain starts with a snapshot.
		if w.setViewLocked(v) {
			w.newSnapshotLocked(now)
		}
		return
	}
	if v.Period != w.view.Period {
		prev := w.view.Period
		if !w.setViewLocked(v) {
			return
		}
		w.broadcastLocked(newEvent("period", w.snapID, w.view.Seq, periodMsg{Type: "period", Board: v.Board, Period: v.Period,
			Previous: prev, NextReset: optTime(v.NextReset)}))
		w.newSnapshotLocked(now)
		return
	}
	if v.Seq <= w.view.Seq && v.Total == w.view.Total && sameEntries(v.Entries, w.view.Entries) {
		if v.Seq == w.view.Seq && !sameValues(v.Entries, w.view.Entries) {
			// Only decayed values moved, with the clock: no delta, but
			// the next snapshot (periodic, or a new subscriber's) shows
			// them as they are now.
			if w.setViewLocked(v) {
				w.setSnapLocked(nil)
			}
		}
		return
	}
	if v.Seq < w.view.Seq {
		// The seq went back without a new generation (the indexes were
		// rebuilt): the chain starts over too.
		if w.setViewLocked(v) {
			w.newSnapshotLocked(now)
		}
		return
	}
	if v.Seq == w.view.Seq {
		// The board did not move but its entries look different (a player
		// was renamed or hidden): a delta would repeat the seq, so restate
		// the window as a new snapshot.
		if w.setViewLocked(v) {
			w.newSnapshotLocked(now)
		}
		return
	}
	changes, removed := diff(w.view.Entries, v.Entries)
	if len(changes) == 0 && len(removed) == 0 && v.Total == w.view.Total {
		return // changes below the window only
	}
	// A delta as large as the window says no more than a snapshot, which
	// also starts a clean chain (at most one a second: each ends the
	// history resumes are served from).
	asSnapshot := len(changes)+len(removed) >= w.key.limit && now.Sub(w.lastSnap) >= time.Second
	cost := len(changes) + len(removed)
	if asSnapshot {
		cost = len(v.Entries)
	}
	if !w.spendLocked(now, cost) {
		// Over the window's rate: the change waits for the next round,
		// where it is sent together with what changes meanwhile.
		w.hub.deferred.Add(1)
		w.dirty.Store(true)
		return
	}
	if asSnapshot {
		if w.setViewLocked(v) {
			w.newSnapshotLocked(now)
		}
		return
	}
	prev, prevSeq := w.position(), w.view.Seq
	if !w.setViewLocked(v) {
		return
	}
	w.setSnapLocked(nil)
	ev := newEvent("delta", w.snapID, v.Seq, deltaMsg{Type: "delta", Board: v.Board, Period: v.Period,
		Seq: v.Seq, PrevSeq: prevSeq, SnapshotID: w.snapID, Total: v.Total, Changes: changes, Removed: removed})
	ev.prev = prev
	w.broadcastLocked(ev)
}

// overloadLimit is the window's rate: the changed entries per second it
// may send.
func (w *window) overloadLimit() int {
	if n := w.hub.cfg.OverloadChanges; n > 0 {
		return n
	}
	return max(4*w.key.limit, 200)
}

// spendLocked reports whether the window may send an event of cost
// entries (a delta's changed and removed entries, a snapshot's entries) at
// now, and if so takes them from its budget. The budget is a token bucket:
// it fills at overloadLimit entries a second up to one second's worth, and
// an event may go whenever the budget is not negative, leaving it in debt
// by at most one second's worth. So a window never sends more than
// overloadLimit entries a second over any long stretch (plus one second's
// burst), whatever the board does; a change that comes while it is in
// debt waits for the round in which the debt is paid, and is merged with
// what changed meanwhile. The debt is at most one event's entries: a
// window's worth, or twice that for a delta that replaces the whole window
// within a second of a snapshot, so 250-500 ms at the default rate.
// (Before, passing the rate switched the window to one snapshot a second
// until a calm second: a change could wait a whole second.)
func (w *window) spendLocked(now time.Time, cost int) bool {
	rate := float64(w.overloadLimit())
	if el := now.Sub(w.budgetAt); el > 0 {
		w.budget = min(rate, w.budget+rate*el.Seconds())
	}
	w.budgetAt = now
	if w.budget < 0 {
		return false
	}
	w.budget = max(w.budget-float64(cost), -rate)
	return true
}

// sameContent reports whether two views of an entry differ in anything but
// rank. Value is left out: it follows from the keys and the clock, so it
// moves on every read of a current points board while the ranking does
// not; an entry is sent again when its keys change, with a fresh value,
// and every snapshot restates them all.
func sameContent(a, b *Entry) bool {
	return a.Player == b.Player && a.Name == b.Name && a.AtText == b.AtText &&
		slices.Equal(a.Keys, b.Keys) && string(a.Meta) == string(b.Meta) &&
		slices.EqualFunc(a.Results, b.Results, sameResult)
}

func sameResult(a, b Result) bool { return a.AtText == b.AtText && slices.Equal(a.Keys, b.Keys) }

func sameEntry(a, b *Entry) bool { return a.Rank == b.Rank && sameContent(a, b) }

func sameEntries(a, b []Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameEntry(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

// diff returns the entries of next that are new to the window or whose
// rank or content changed (with their previous rank), and the players that
// left. Every entry whose rank moved is listed, even one pushed down by
// another: a client can then apply a delta by replacing entries, without
// knowing the board's ordering rule.
func diff(prev, next []Entry) ([]Entry, []Removed) {
	old := make(map[string]*Entry, len(prev))
	for i := range prev {
		old[prev[i].Player] = &prev[i]
	}
	var changes []Entry
	for i := range next {
		n := next[i]
		o, ok := old[n.Player]
		if ok {
			delete(old, n.Player)
			if sameEntry(o, &n) {
				continue
			}
			r := o.Rank
			n.PrevRank = &r
		}
		changes = append(changes, n)
	}
	removed := make([]Removed, 0, len(old))
	for _, o := range old {
		removed = append(removed, Removed{Player: o.Player, PrevRank: o.Rank})
	}
	slices.SortFunc(removed, func(a, b Removed) int { return a.PrevRank - b.PrevRank })
	if changes == nil {
		changes = []Entry{}
	}
	return changes, removed
}
