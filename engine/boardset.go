package engine

import (
	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sortedmap"
)

// boardSet is the engine's boards: by id for lookups, and in id order for
// the list's pages, which walk from any id without sorting every board
// (internal/sortedmap: an insert or delete moves at most one chunk of ids).
// Guarded by Engine.mu.
type boardSet struct {
	byID  map[string]*boardState
	order sortedmap.Map[*boardState]
}

func newBoardSet() boardSet { return boardSet{byID: map[string]*boardState{}} }

func (s *boardSet) len() int { return len(s.byID) }

// put adds or replaces a board's state and returns the one it replaced.
func (s *boardSet) put(bs *boardState) *boardState {
	id := bs.def.Load().ID
	prev := s.byID[id]
	s.byID[id] = bs
	s.order.Set(id, bs)
	return prev
}

// remove forgets a board and returns its state (nil if none).
func (s *boardSet) remove(id string) *boardState {
	bs := s.byID[id]
	if bs != nil {
		delete(s.byID, id)
		s.order.Delete(id)
	}
	return bs
}

// ListBoards returns, in id order, the boards with ids after after that
// keep accepts (nil accepts all): at most limit of them, looking at no more
// than scan boards (0: no bound on either). more is the id of the last
// board looked at when the list goes on after it, "" when it ended: the
// next page starts after it. keep runs with the board list locked: it must
// be quick and must not call back into the engine.
func (e *Engine) ListBoards(after string, limit, scan int, keep func(*podium.Board) bool) (out []BoardInfo, more string) {
	var list []*boardState
	looked := 0
	e.mu.RLock()
	e.boards.order.AscendAfter(after, func(id string, bs *boardState) bool {
		if limit > 0 && len(list) == limit || scan > 0 && looked == scan {
			more = after // what follows: something, so this page is not the last
			return false
		}
		looked++
		after = id
		if keep == nil || keep(bs.def.Load()) {
			list = append(list, bs)
		}
		return true
	})
	e.mu.RUnlock()
	out = make([]BoardInfo, len(list))
	for i, bs := range list {
		out[i] = e.info(bs)
	}
	return out, more
}
