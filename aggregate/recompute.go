package aggregate

import (
	"fmt"
	"slices"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// chunkPlayers is how many players one step of a recompute visits: the
// writer takes other groups between steps, so that defining an aggregate
// over big boards does not hold writes back for long.
var chunkPlayers = 2000

// SetChunkPlayersForTest sets how many players a step of a recompute
// visits, and returns what restores it. For tests only.
func SetChunkPlayersForTest(n int) func() {
	old := chunkPlayers
	chunkPlayers = n
	return func() { chunkPlayers = old }
}

// work is a recompute in progress: the players to visit, per period, as
// they were when it started. A player who appears later got their
// aggregate from the write that made them appear (the definition is in
// place before the first step), and a player visited twice is recomputed
// from the state of the moment, so stepping is exact.
type work struct {
	bs      *engine.BoardState
	def     *podium.Aggregate
	periods []string
	players [][]uint32
	p, i    int // the next period, the next player in it
}

// newWork lists the periods and players of an aggregate and its direct
// sources.
func newWork(g *engine.Group, abs *engine.BoardState) (*work, error) {
	def := abs.Def()
	w := &work{bs: abs, def: def.Aggregate}
	boards := []*engine.BoardState{abs}
	for _, s := range def.Aggregate.Sources {
		if sbs := g.Board(s.Board); sbs != nil {
			boards = append(boards, sbs)
		}
	}
	set := map[string]bool{}
	for _, bs := range boards {
		for _, p := range bs.PeriodsWithEntries() {
			set[p] = true
		}
	}
	periods := make([]string, 0, len(set))
	for p := range set {
		periods = append(periods, p)
	}
	slices.Sort(periods)
	for _, period := range periods {
		players := map[uint32]bool{}
		for _, bs := range boards {
			ids, err := g.Players(bs, period)
			if err != nil {
				return nil, err
			}
			for _, p := range ids {
				players[p] = true
			}
		}
		ids := make([]uint32, 0, len(players))
		for p := range players {
			ids = append(ids, p)
		}
		slices.Sort(ids)
		w.periods = append(w.periods, period)
		w.players = append(w.players, ids)
	}
	return w, nil
}

// step plans, for the next players of w (at most limit), the rows that
// bring the aggregate to what its sources say (and, through plan, the
// aggregates depending on it), and adds them to the group. done reports
// that every player is visited.
func (m *Module) step(g *engine.Group, w *work, limit int) (done bool, err error) {
	n := 0
	for ; w.p < len(w.periods); w.p, w.i = w.p+1, 0 {
		period := w.periods[w.p]
		for ; w.i < len(w.players[w.p]); w.i++ {
			if n == limit {
				return false, nil
			}
			n++
			pid := w.players[w.p][w.i]
			name := g.PlayerID(pid)
			row, changed, err := m.recompute(g, map[key]engine.Value{}, w.bs, period, pid, name, true)
			if err != nil {
				return false, fmt.Errorf("player %q in period %s: %w", name, period, err)
			}
			if !changed {
				continue
			}
			more, err := m.plan(g, key{row.Board, row.Period, row.PID}, name, row.Value, true)
			if err != nil {
				return false, fmt.Errorf("player %q in period %s: %w", name, period, err)
			}
			g.Write(row)
			for _, r := range more {
				g.Write(r)
			}
		}
	}
	return true, nil
}

// recomputeAll brings every entry of an aggregate board, in every period,
// to what its sources say now, logging a row for each entry that differs
// (none when it is right), step by step on the writer with other writes in
// between (engine.Steps). A PUT of an aggregate board runs it before its
// answer, so a new aggregate starts with the entries its sources already
// imply, and re-PUTting one repairs it. Once started it runs to the end
// even if the caller goes away. A step ends the recompute when the board
// is no longer this aggregate (deleted, or redefined: the newer PUT
// recomputes it).
func (m *Module) recomputeAll(id string) error {
	var w *work
	return m.eng.Steps([]string{id}, "the aggregate's entries", func(g *engine.Group) (bool, error) {
		bs := g.Board(id)
		var def *podium.Board
		if bs != nil {
			def = bs.Def()
		}
		switch {
		case w == nil && bs == nil:
			return false, podium.BoardNotFound(id)
		case w == nil && def.Aggregate == nil:
			return false, podium.Errorf(podium.ECodeInvalid, "board %q is not an aggregate", id)
		case w == nil:
			var err error
			if w, err = newWork(g, bs); err != nil {
				return false, err
			}
		case bs != w.bs || !def.Aggregate.Equal(w.def):
			return true, nil
		}
		return m.step(g, w, chunkPlayers)
	})
}
