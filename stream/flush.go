package stream

import (
	"slices"
	"time"

	"github.com/podiumhq/podium"
)

// A window's flush: read its board, compare the view with what the window
// sent last, and send what changed (a delta, a period change or a new
// snapshot chain) within the window's rate (spendLocked). Whoever may no
// longer read the board is ended first (reauthorizeLocked).

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

func sameValues(a, b []Entry) bool {
	for i := range a {
		if a[i].Value != b[i].Value {
			return false
		}
	}
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

func sameEntry(a, b *Entry) bool {
	return a.Rank == b.Rank && a.RankShared == b.RankShared && sameContent(a, b)
}

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
