package engine

import (
	"context"
	"errors"
	"slices"

	"github.com/podiumhq/podium"
)

// Reads of the activity feed: one board's events or every readable board's,
// and what a live feed stream shows (feed.go).

// FeedItem is one feed event as readers see it: the stored event with the
// names of its players and its board as they are now.
type FeedItem struct {
	podium.FeedEvent
	Title     string // the board's title
	Name      string // Player's name
	OtherName string // Other's name
}

// FeedRead selects what Feed reads: one board, or every board that
// readable allows ("" for Board), at most Limit events (1 to FeedCap).
type FeedRead struct {
	Board    string
	Limit    int
	Readable func(board string, public bool) bool
}

// Feed returns the newest events of the boards q selects, newest first,
// from the database (so every node serves what any node committed).
// Events of hidden players and of boards this node does not know (yet)
// are left out. Errors: ECodeBoardNotFound, ECodeInvalid,
// ECodeUnavailable.
func (e *Engine) Feed(ctx context.Context, q FeedRead) ([]FeedItem, error) {
	if e.feed == nil {
		return nil, podium.Errorf(podium.ECodeUnavailable, "this store keeps no activity feed")
	}
	if q.Limit < 1 || q.Limit > e.feed.cap {
		return nil, podium.Errorf(podium.ECodeInvalid, "limit must be between 1 and %d", e.feed.cap)
	}
	if q.Board != "" {
		bs := e.board(q.Board)
		if bs == nil {
			return nil, errBoardNotFound(q.Board)
		}
		def := bs.def.Load()
		if q.Readable != nil && !q.Readable(def.ID, def.Public) {
			return nil, errBoardNotFound(def.ID) // as an unknown board (docs/API.md, "Private ids")
		}
		out, _, err := e.readFeed(ctx, q.Limit, []string{def.ID}, func(string) (string, bool) { return def.Title, true })
		return out, err
	}
	readable := func(id string) (string, bool) {
		bs := e.board(id)
		if bs == nil {
			return "", false
		}
		def := bs.def.Load()
		return def.Title, q.Readable == nil || q.Readable(def.ID, def.Public)
	}
	// The newest events of every board, kept here if the caller may read
	// them: a cost in the events read, not in the number of boards.
	out, done, err := e.readFeed(ctx, q.Limit, nil, readable)
	if err != nil || done {
		return out, err
	}
	// Most of the newest events are of boards the caller may not read: ask
	// the store for the events of those it may, named one by one (a cost
	// in the number of boards, paid only here).
	var boards []string
	for _, bs := range e.boardStates() {
		if def := bs.def.Load(); q.Readable == nil || q.Readable(def.ID, def.Public) {
			boards = append(boards, def.ID)
		}
	}
	if len(boards) == 0 {
		return out, nil
	}
	slices.Sort(boards)
	out, _, err = e.readFeed(ctx, q.Limit, boards, readable)
	return out, err
}

// readFeed reads the newest events of boards (nil: every board), newest
// first, keeping those of boards keep accepts (with the board's title now)
// and of players not hidden, up to limit. Skipped events make a page come
// up short, so it reads on, at most feedPages pages of limit events. done
// reports that the answer is complete: limit events, or every event read.
func (e *Engine) readFeed(ctx context.Context, limit int, boards []string, keep func(board string) (title string, ok bool)) (out []FeedItem, done bool, err error) {
	out = make([]FeedItem, 0, limit)
	var before *podium.FeedPos
	for page := 0; page < feedPages; page++ {
		evs, err := e.feed.store.Feed(ctx, podium.FeedQuery{Boards: boards, Before: before, Limit: limit})
		if err != nil {
			return nil, false, e.readFailed("read the activity feed", err)
		}
		for i := range evs {
			ev := &evs[i]
			if ev.Player != "" {
				if pid, ok := e.players.lookup(ev.Player); ok && e.players.hidden(pid) {
					continue
				}
			}
			title, ok := keep(ev.Board)
			if !ok {
				continue
			}
			it := FeedItem{FeedEvent: *ev, Title: title}
			if ev.Player != "" {
				it.Name = e.playerName(ev.Player)
			}
			if ev.Other != "" {
				it.OtherName = e.playerName(ev.Other)
			}
			out = append(out, it)
			if len(out) == limit {
				return out, true, nil
			}
		}
		if len(evs) < limit {
			return out, true, nil
		}
		pos := evs[len(evs)-1].Pos()
		before = &pos
	}
	return out, false, nil
}

// feedPages bounds the pages of events one feed read looks at.
const feedPages = 4

// playerName is a player's name now (its id when it has none).
func (e *Engine) playerName(player string) string {
	if pid, ok := e.players.lookup(player); ok {
		return e.players.name(pid).Name
	}
	return player
}

// readFailed is the answer to a read of the database that failed.
func (e *Engine) readFailed(what string, err error) error {
	var pe *podium.Error
	if errors.As(err, &pe) {
		return err
	}
	e.log.Warn("store: "+what+" failed", "err", err)
	return podium.Errorf(podium.ECodeUnavailable, "the database could not be read; retry shortly")
}

// LiveFeed is what a live feed stream shows: the newest events of one
// board with the board's definition as of after they were read, or of
// every public board (Board nil).
type LiveFeed struct {
	Board      *podium.Board
	Generation uint64
	Items      []FeedItem
}

// LiveFeed reads the newest limit events of board ("" for every public
// board) for a live stream. The definition is read after the events, so
// it is at least as new as they are: a board made private meanwhile is
// seen as private, and its readers are checked again before they get
// anything of it. Errors: ECodeBoardNotFound, ECodeInvalid,
// ECodeUnavailable.
func (e *Engine) LiveFeed(ctx context.Context, board string, limit int) (LiveFeed, error) {
	if board == "" {
		items, err := e.Feed(ctx, FeedRead{Limit: limit, Readable: func(_ string, public bool) bool { return public }})
		if err != nil {
			return LiveFeed{}, err
		}
		// Boards made private (or deleted) while the events were read.
		items = slices.DeleteFunc(items, func(it FeedItem) bool {
			bs := e.board(it.Board)
			return bs == nil || !bs.def.Load().Public
		})
		return LiveFeed{Items: items}, nil
	}
	items, err := e.Feed(ctx, FeedRead{Board: board, Limit: limit})
	if err != nil {
		return LiveFeed{}, err
	}
	bs := e.board(board)
	if bs == nil {
		return LiveFeed{}, errBoardNotFound(board)
	}
	def := *bs.def.Load()
	return LiveFeed{Board: &def, Generation: bs.gen, Items: items}, nil
}
