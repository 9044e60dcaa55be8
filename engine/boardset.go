package engine

import (
	"slices"
	"strings"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sortedmap"
)

// boardSet is the engine's boards: by id for lookups, and in id order for
// the list's pages, which walk from any id without sorting every board
// (internal/sortedmap: an insert or delete moves at most one chunk of ids).
// It also keeps the boards of the kinds that some work walks, so that the
// work walks them and not every board: nothing on the write path, in the
// scheduler or in a request costs in the number of boards (issue 17).
// Guarded by Engine.mu.
type boardSet struct {
	byID  map[string]*BoardState
	order sortedmap.Map[*BoardState]
	// aggs holds the aggregate boards (the dependency graph and the
	// checks of a board change, aggregate.go), tourneys the tournaments
	// (the settlement scheduler, GET /v1/tournaments), points the points
	// boards (the targets of a settlement).
	aggs, tourneys, points map[string]*BoardState
	// leagues are the league boards (the league module's settlement
	// scheduler).
	leagues map[string]*BoardState
}

func newBoardSet() boardSet {
	return boardSet{byID: map[string]*BoardState{}, aggs: map[string]*BoardState{},
		tourneys: map[string]*BoardState{}, points: map[string]*BoardState{}, leagues: map[string]*BoardState{}}
}

func (s *boardSet) len() int { return len(s.byID) }

// put adds or replaces a board's state and returns the one it replaced.
func (s *boardSet) put(bs *BoardState) *BoardState {
	id := bs.def.Load().ID
	prev := s.byID[id]
	s.byID[id] = bs
	s.order.Set(id, bs)
	s.track(bs)
	return prev
}

// track files a board under the kinds its definition has now; call it
// whenever the definition changes.
func (s *boardSet) track(bs *BoardState) {
	def := bs.def.Load()
	file := func(m map[string]*BoardState, in bool) {
		if in {
			m[def.ID] = bs
		} else {
			delete(m, def.ID)
		}
	}
	file(s.aggs, def.Aggregate != nil)
	file(s.tourneys, def.Tournament != nil)
	file(s.points, def.Points != nil)
	file(s.leagues, def.League != nil)
}

// remove forgets a board and returns its state (nil if none).
func (s *boardSet) remove(id string) *BoardState {
	bs := s.byID[id]
	if bs != nil {
		delete(s.byID, id)
		s.order.Delete(id)
		delete(s.aggs, id)
		delete(s.tourneys, id)
		delete(s.points, id)
		delete(s.leagues, id)
	}
	return bs
}

// kind returns the states of one kind's boards (e.boards.aggs, ...), taken
// under the engine lock, in no particular order.
func (e *Engine) kind(pick func(*boardSet) map[string]*BoardState) []*BoardState {
	e.mu.RLock()
	defer e.mu.RUnlock()
	m := pick(&e.boards)
	out := make([]*BoardState, 0, len(m))
	for _, bs := range m {
		out = append(out, bs)
	}
	return out
}

// Tournaments lists the tournament boards, sorted by id.
func (e *Engine) Tournaments() []BoardInfo {
	list := e.kind(tourneyBoards)
	out := make([]BoardInfo, len(list))
	for i, bs := range list {
		out[i] = e.info(bs)
	}
	slices.SortFunc(out, func(a, b BoardInfo) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func aggBoards(s *boardSet) map[string]*BoardState     { return s.aggs }
func tourneyBoards(s *boardSet) map[string]*BoardState { return s.tourneys }
func pointsBoards(s *boardSet) map[string]*BoardState  { return s.points }
func leagueBoards(s *boardSet) map[string]*BoardState  { return s.leagues }

// ListBoards returns, in id order, the boards with ids after after that
// keep accepts (nil accepts all): at most limit of them, looking at no more
// than scan boards (0: no bound on either). more is the id of the last
// board looked at when the list goes on after it, "" when it ended: the
// next page starts after it. keep runs with the board list locked: it must
// be quick and must not call back into the engine.
func (e *Engine) ListBoards(after string, limit, scan int, keep func(*podium.Board) bool) (out []BoardInfo, more string) {
	var list []*BoardState
	looked := 0
	e.mu.RLock()
	e.boards.order.AscendAfter(after, func(id string, bs *BoardState) bool {
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

// BoardKind is a kind of board the engine keeps a list of (BoardsOf), so
// that a module's work over boards of that kind does not cost in the
// number of boards (issue 17).
type BoardKind uint8

// The kinds of BoardsOf.
const (
	AggregateBoards  BoardKind = iota + 1 // def.Aggregate set
	TournamentBoards                      // def.Tournament set
	PointsBoards                          // def.Points set
	LeagueBoards                          // def.League set
)

// BoardsOf returns the states of the boards of kind k, in no particular
// order.
func (e *Engine) BoardsOf(k BoardKind) []*BoardState {
	switch k {
	case AggregateBoards:
		return e.kind(aggBoards)
	case TournamentBoards:
		return e.kind(tourneyBoards)
	case PointsBoards:
		return e.kind(pointsBoards)
	case LeagueBoards:
		return e.kind(leagueBoards)
	}
	return nil
}
