package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/podiumhq/podium"
)

// Activity feed windows. A feed window holds the newest events of one
// board's feed, or of every public board's (board ""), as the source
// reads them from the database, and is fanned out like a board window,
// through the same connections, queues, budget, resume history and
// permission checks: only its state and the diff differ. A feed only
// grows at its head, so a delta is the events that are new since the
// window's last event, newest first; anything else (an event gone from
// within the window, an older event appearing late, an event shown
// differently, a burst as large as the window, a new board generation or
// title) restates the window with a snapshot. Seq counts the window's deltas, so that event ids
// ("<snapshot_id>.<seq>") and resume work as for boards.

// FeedEvent is one event of a feed window, encoded once by the source.
type FeedEvent struct {
	ID   string
	Pos  podium.FeedPos
	JSON json.RawMessage // the event as the API shows it
}

// FeedSource is the optional Source ability behind feed windows: the
// newest limit events of board ("" for every public board), with, for one
// board, the board's definition read after them (Board, Title, Public,
// Generation). A missing board is ECodeBoardNotFound.
type FeedSource interface {
	FeedView(ctx context.Context, board string, limit int) (View, error)
}

// FeedPoll is how often a watched feed window reads its feed even when no
// change was announced: events appended on another node without moving a
// board (a settled tournament) arrive within it.
const FeedPoll = time.Second

func (h *Hub) readFeed(ctx context.Context, key windowKey) (View, error) {
	fs, ok := h.src.(FeedSource)
	if !ok {
		return View{}, podium.Errorf(podium.ECodeUnavailable, "this server streams no activity feed")
	}
	return fs.FeedView(ctx, key.board, key.limit)
}

// SubscribeFeed adds a subscription to the newest limit events of board's
// activity feed ("" for every public board's), as Subscribe does for a
// board's top: with lastID it resumes after that event when the window
// still remembers it, else it starts with a snapshot. A board's feed is
// readable by whoever may read the board.
func (c *Conn) SubscribeFeed(ctx context.Context, board string, limit int, lastID string) (*Sub, error) {
	if limit < 1 || limit > c.hub.cfg.MaxLimit {
		return nil, podium.Errorf(podium.ECodeInvalid, "limit must be from 1 to %d", c.hub.cfg.MaxLimit)
	}
	return c.subscribe(ctx, windowKey{board: board, limit: limit, feed: true}, lastID)
}

// feedSnapshotMsg is the data of a feed window's snapshot.
type feedSnapshotMsg struct {
	Type       string            `json:"type"`
	Feed       bool              `json:"feed"` // always true: tells feed events from board events on a WebSocket
	Board      *string           `json:"board"`
	Seq        uint64            `json:"seq"`
	SnapshotID uint64            `json:"snapshot_id"`
	Limit      int               `json:"limit"`
	Events     []json.RawMessage `json:"events"`
}

// feedDeltaMsg is the data of a feed window's delta: the new events,
// newest first, to put before those the client holds.
type feedDeltaMsg struct {
	Type       string            `json:"type"`
	Feed       bool              `json:"feed"`
	Board      *string           `json:"board"`
	Seq        uint64            `json:"seq"`
	PrevSeq    uint64            `json:"prev_seq"`
	SnapshotID uint64            `json:"snapshot_id"`
	Events     []json.RawMessage `json:"events"`
}

func (w *window) feedBoard() *string {
	if w.key.board == "" {
		return nil
	}
	b := w.key.board
	return &b
}

func feedJSON(evs []FeedEvent) []json.RawMessage {
	out := make([]json.RawMessage, len(evs))
	for i := range evs {
		out[i] = evs[i].JSON
	}
	return out
}

// feedSnapshot encodes the window's state as a snapshot.
func (w *window) feedSnapshot() *Event {
	return newEvent("snapshot", w.snapID, w.view.Seq, feedSnapshotMsg{Type: "snapshot", Feed: true, Board: w.feedBoard(),
		Seq: w.view.Seq, SnapshotID: w.snapID, Limit: w.key.limit, Events: feedJSON(w.view.Feed)})
}

// feedPollDue reports whether a watched feed window should read its feed
// now although nothing announced a change.
func (w *window) feedPollDue(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return now.Sub(w.lastRead) >= FeedPoll
}

// applyFeedLocked sends what is new in v, a fresh read of the window's
// feed. The caller holds w.mu (and flushMu).
func (w *window) applyFeedLocked(now time.Time, v View) {
	w.lastRead = now
	if v.Generation != w.view.Generation || v.Public != w.view.Public {
		w.reauthorizeLocked(&v)
		w.view.Public = v.Public
	}
	if v.Generation != w.view.Generation || v.Title != w.view.Title {
		v.Seq = w.view.Seq
		if w.setViewLocked(v) {
			w.newSnapshotLocked(now)
		}
		return
	}
	held := make(map[string]json.RawMessage, len(w.view.Feed))
	for i := range w.view.Feed {
		held[w.view.Feed[i].ID] = w.view.Feed[i].JSON
	}
	inNew := make(map[string]bool, len(v.Feed))
	var added []FeedEvent
	restate := false
	for i := range v.Feed {
		ev := &v.Feed[i]
		inNew[ev.ID] = true
		if old, ok := held[ev.ID]; ok {
			if !bytes.Equal(old, ev.JSON) {
				restate = true // shown differently (a player renamed, a board retitled)
			}
			continue
		}
		added = append(added, *ev)
		if len(w.view.Feed) > 0 && podium.CompareFeed(ev.Pos, w.view.Feed[0].Pos) < 0 {
			restate = true // older than what the client holds: not at the head
		}
	}
	// An event the client holds may leave only by being pushed past the
	// window's end by newer ones; one gone otherwise (its board made
	// private or deleted) must be taken back.
	full := len(v.Feed) >= w.key.limit
	for i := range w.view.Feed {
		ev := &w.view.Feed[i]
		if !inNew[ev.ID] && (!full || podium.CompareFeed(ev.Pos, v.Feed[len(v.Feed)-1].Pos) > 0) {
			restate = true
		}
	}
	v.Seq = w.view.Seq
	switch {
	case restate || len(added) >= w.key.limit:
		if w.setViewLocked(v) {
			w.newSnapshotLocked(now)
		}
	case len(added) == 0:
		// Nothing new, nothing taken back: the client's copy is right.
		if len(v.Feed) != len(w.view.Feed) && w.setViewLocked(v) {
			w.setSnapLocked(nil)
		}
	default:
		prev, prevSeq := w.position(), w.view.Seq
		v.Seq++
		if !w.setViewLocked(v) {
			return
		}
		w.setSnapLocked(nil)
		ev := newEvent("delta", w.snapID, v.Seq, feedDeltaMsg{Type: "delta", Feed: true, Board: w.feedBoard(), Seq: v.Seq, PrevSeq: prevSeq,
			SnapshotID: w.snapID, Events: feedJSON(added)})
		ev.prev = prev
		ev.Changes = len(added)
		w.broadcastLocked(ev)
	}
}

// FeedAppended marks the feed windows of boards (and the all-boards one)
// for a read at the next round: events were appended without a board
// moving (feed.Listener). It never blocks.
func (h *Hub) FeedAppended(boards []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, b := range append(boards, "") {
		for _, w := range h.byBoard[b] {
			if w.key.feed {
				w.dirty.Store(true)
			}
		}
	}
}

// UnsubscribeFeed removes every subscription to board's feed ("" for the
// all-boards feed) and returns how many there were.
func (c *Conn) UnsubscribeFeed(board string) int {
	c.mu.Lock()
	var list []*Sub
	for k, s := range c.subs {
		if k.feed && k.board == board {
			list = append(list, s)
			delete(c.subs, k)
		}
	}
	c.mu.Unlock()
	for _, s := range list {
		s.detach()
	}
	return len(list)
}
