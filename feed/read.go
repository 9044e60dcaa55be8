package feed

import (
	"context"
	"errors"
	"slices"

	"github.com/podiumhq/podium"
)

// Reads of the activity feed: one board's events or every readable board's,
// and what a live feed stream shows.

// Item is one feed event as readers see it: the stored event with the
// names of its players and its board as they are now.
type Item struct {
	podium.FeedEvent
	Title     string // the board's title
	Name      string // Player's name
	OtherName string // Other's name
}

// Read selects what Feed reads: one board, or every board that readable
// allows ("" for Board), at most Limit events (1 to Cap).
type Read struct {
	Board    string
	Limit    int
	Readable func(board string, public bool) bool
}

// errNoFeed answers reads and appends when the store keeps no feed.
var errNoFeed = podium.Errorf(podium.ECodeUnavailable, "this store keeps no activity feed")

func errBoardNotFound(id string) error { return podium.BoardNotFound(id) }

// Feed returns the newest events of the boards q selects, newest first,
// from the database (so every node serves what any node committed).
// Events of hidden players and of boards this node does not know (yet)
// are left out. Errors: ECodeBoardNotFound, ECodeInvalid,
// ECodeUnavailable.
func (m *Module) Feed(ctx context.Context, q Read) ([]Item, error) {
	if m.store == nil {
		return nil, errNoFeed
	}
	if q.Limit < 1 || q.Limit > m.cap {
		return nil, podium.Errorf(podium.ECodeInvalid, "limit must be between 1 and %d", m.cap)
	}
	if q.Board != "" {
		bs := m.eng.Lookup(q.Board)
		if bs == nil {
			return nil, errBoardNotFound(q.Board)
		}
		def := bs.Def()
		if q.Readable != nil && !q.Readable(def.ID, def.Public) {
			return nil, errBoardNotFound(def.ID) // as an unknown board (docs/API.md, "Private ids")
		}
		out, _, err := m.read(ctx, q.Limit, []string{def.ID}, func(string) (string, bool) { return def.Title, true })
		return out, err
	}
	readable := func(id string) (string, bool) {
		bs := m.eng.Lookup(id)
		if bs == nil {
			return "", false
		}
		def := bs.Def()
		return def.Title, q.Readable == nil || q.Readable(def.ID, def.Public)
	}
	// The newest events of every board, kept here if the caller may read
	// them: a cost in the events read, not in the number of boards.
	out, done, err := m.read(ctx, q.Limit, nil, readable)
	if err != nil || done {
		return out, err
	}
	// Most of the newest events are of boards the caller may not read: ask
	// the store for the events of those it may, named one by one (a cost
	// in the number of boards, paid only here).
	var boards []string
	for _, bs := range m.eng.BoardStates() {
		if def := bs.Def(); q.Readable == nil || q.Readable(def.ID, def.Public) {
			boards = append(boards, def.ID)
		}
	}
	if len(boards) == 0 {
		return out, nil
	}
	slices.Sort(boards)
	out, _, err = m.read(ctx, q.Limit, boards, readable)
	return out, err
}

// read reads the newest events of boards (nil: every board), newest first,
// keeping those of boards keep accepts (with the board's title now) and of
// players not hidden, up to limit. Skipped events make a page come up
// short, so it reads on, at most readPages pages of limit events. done
// reports that the answer is complete: limit events, or every event read.
func (m *Module) read(ctx context.Context, limit int, boards []string, keep func(board string) (title string, ok bool)) (out []Item, done bool, err error) {
	out = make([]Item, 0, limit)
	var before *podium.FeedPos
	for page := 0; page < readPages; page++ {
		evs, err := m.store.Feed(ctx, podium.FeedQuery{Boards: boards, Before: before, Limit: limit})
		if err != nil {
			return nil, false, m.readFailed("read the activity feed", err)
		}
		for i := range evs {
			ev := &evs[i]
			if ev.Player != "" && m.eng.PlayerHidden(ev.Player) {
				continue
			}
			title, ok := keep(ev.Board)
			if !ok {
				continue
			}
			it := Item{FeedEvent: *ev, Title: title}
			if ev.Player != "" {
				it.Name = m.eng.PlayerName(ev.Player)
			}
			if ev.Other != "" {
				it.OtherName = m.eng.PlayerName(ev.Other)
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

// readPages bounds the pages of events one feed read looks at.
const readPages = 4

// readFailed is the answer to a read of the database that failed.
func (m *Module) readFailed(what string, err error) error {
	var pe *podium.Error
	if errors.As(err, &pe) {
		return err
	}
	m.log.Warn("store: "+what+" failed", "err", err)
	return podium.Errorf(podium.ECodeUnavailable, "the database could not be read; retry shortly")
}

// Live is what a live feed stream shows: the newest events of one board
// with the board's definition as of after they were read, or of every
// public board (Board nil).
type Live struct {
	Board      *podium.Board
	Generation uint64
	Items      []Item
}

// LiveFeed reads the newest limit events of board ("" for every public
// board) for a live stream. The definition is read after the events, so
// it is at least as new as they are: a board made private meanwhile is
// seen as private, and its readers are checked again before they get
// anything of it. Errors: ECodeBoardNotFound, ECodeInvalid,
// ECodeUnavailable.
func (m *Module) LiveFeed(ctx context.Context, board string, limit int) (Live, error) {
	if board == "" {
		items, err := m.Feed(ctx, Read{Limit: limit, Readable: func(_ string, public bool) bool { return public }})
		if err != nil {
			return Live{}, err
		}
		// Boards made private (or deleted) while the events were read.
		items = slices.DeleteFunc(items, func(it Item) bool {
			bs := m.eng.Lookup(it.Board)
			return bs == nil || !bs.Def().Public
		})
		return Live{Items: items}, nil
	}
	items, err := m.Feed(ctx, Read{Board: board, Limit: limit})
	if err != nil {
		return Live{}, err
	}
	bs := m.eng.Lookup(board)
	if bs == nil {
		return Live{}, errBoardNotFound(board)
	}
	def := *bs.Def()
	return Live{Board: &def, Generation: bs.Gen(), Items: items}, nil
}
