package groups

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// chunkGroups is how many groups one step of a recompute visits.
var chunkGroups = 500

// Recompute brings every group's entry on group board id, in its period
// now, to what its members' entries on the source say, logging a row for
// each that differs (none when all are right), step by step on the
// writer with other writes in between. A PUT of a group board runs it,
// and so does podium rebuild. Errors: ECodeBoardNotFound, ECodeInvalid
// (not a group board), ECodeUnavailable.
func (m *Module) Recompute(id string) error {
	_, err := m.recomputeN(id)
	return err
}

// recomputeN is Recompute, counting the rows it logged.
func (m *Module) recomputeN(id string) (int, error) {
	var (
		todo   []string
		period string
		i, n   int
	)
	err := m.eng.Steps([]string{id}, "the group board's entries", func(g *engine.Group) (bool, error) {
		gb := g.Board(id)
		if gb == nil {
			return false, podium.BoardNotFound(id)
		}
		def := gb.Def().GroupBoard
		if def == nil {
			return false, podium.Errorf(podium.ECodeInvalid, "board %q is not a group board", id)
		}
		set, src := g.Board(def.Set), g.Board(def.Source)
		if set == nil || src == nil {
			return false, podium.Errorf(podium.ECodeInvalid, "group board %q: its set or source is gone", id)
		}
		r, err := m.rosterOf(set)
		if err != nil {
			return false, err
		}
		if todo == nil {
			period = podium.PeriodAt(gb.Def().Reset, g.Now()).ID
			seen := map[string]bool{}
			m.mu.Lock()
			for grp := range r.groups {
				seen[grp] = true
			}
			m.mu.Unlock()
			pids, err := g.Players(gb, period)
			if err != nil {
				return false, err
			}
			for _, pid := range pids {
				seen[g.PlayerID(pid)] = true
			}
			todo = make([]string, 0, len(seen))
			for grp := range seen {
				todo = append(todo, grp)
			}
			slices.Sort(todo)
		}
		for c := 0; i < len(todo) && c < chunkGroups; i, c = i+1, c+1 {
			w, changed, err := m.recompute(g, gb, src, period, todo[i], m.memberIDs(r, todo[i], "", ""), 0, nil)
			if err != nil {
				return false, err
			}
			if changed {
				g.Write(w)
				n++
			}
		}
		return i >= len(todo), nil
	})
	return n, err
}

// Repair brings every group board of a store to what its set and source
// say (podium rebuild, after the boards are rebuilt from their logs): an
// engine of its own, with this module alone, recomputes each group board
// and logs a correcting row for each group entry that differs. It returns
// the rows logged. The store must have no other writer.
func Repair(ctx context.Context, store podium.Store, log *slog.Logger) (int, error) {
	m := New()
	eng := engine.New(engine.Config{Store: store, Logger: log, Modules: []engine.Module{m}})
	if err := eng.Start(ctx); err != nil {
		return 0, err
	}
	defer eng.Close()
	total := 0
	ids := make([]string, 0, len(m.index().defs))
	for id := range m.index().defs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		n, err := m.recomputeN(id)
		if err != nil {
			return total, fmt.Errorf("group board %s: %w", id, err)
		}
		total += n
	}
	return total, nil
}

// CheckIndexes compares every group board's entries in its period now
// with a recomputation from its set's memberships and its members'
// entries on the source, in memory (podium check, POST /v1/admin/check;
// on the writer). Only a period in memory on both boards is compared. In
// shared mode the memberships are those in the store and the boards those
// this node's follower has applied: a check while other nodes write may
// report a group that moved meanwhile, which a second check clears.
func (m *Module) CheckIndexes(c engine.Checker) []engine.Diff {
	var diffs []engine.Diff
	x := m.index()
	for id, def := range x.defs {
		gb, set, src := c.Board(id), c.Board(def.Set), c.Board(def.Source)
		if gb == nil || set == nil || src == nil {
			continue
		}
		r, err := m.rosterOf(set)
		if err == nil && m.shared {
			// This node's roster is brought up to the store only when
			// it writes the set; the check reads what other nodes
			// committed since (on a store of its own, the roster may be
			// ahead of the store: changes not yet finished).
			err = m.CatchUp(context.Background(), def.Set)
		}
		if err != nil {
			diffs = append(diffs, engine.Diff{Board: id, Want: "the memberships of " + def.Set, Got: podium.ErrorMessage(err)})
			continue
		}
		gdef := gb.Def()
		period := podium.PeriodAt(gdef.Reset, m.eng.Now()).ID
		unpin, ok := c.PinLoaded([]*engine.BoardState{gb, src}, period)
		if !ok {
			continue
		}
		pids := map[string]uint32{}
		src.EachPlayer(period, func(pid uint32) { pids[c.PlayerID(pid)] = pid })
		got := map[string]*podium.Entry{}
		gb.EachPlayer(period, func(pid uint32) { got[c.PlayerID(pid)] = gb.LoadedEntry(period, pid) })
		m.mu.Lock()
		want := map[string][][]int64{}
		for grp, ms := range r.groups {
			var keys [][]int64
			for p := range ms {
				if pid, ok := pids[p]; ok {
					if e := src.LoadedEntry(period, pid); e != nil {
						keys = append(keys, e.Keys)
					}
				}
			}
			want[grp] = keys
		}
		m.mu.Unlock()
		for grp := range got {
			if _, ok := want[grp]; !ok {
				want[grp] = nil
			}
		}
		for grp, keys := range want {
			wk, wok, err := Value(gdef, keys)
			if err != nil {
				diffs = append(diffs, engine.Diff{Board: id, Period: period, Player: grp, Want: podium.ErrorMessage(err), Got: "an entry"})
				continue
			}
			var gk []int64
			e := got[grp]
			if e != nil {
				gk = e.Keys
			}
			if d, ok := engine.AggregateDiff(id, period, grp, wk, wok, gk, e != nil); ok {
				diffs = append(diffs, d)
			}
		}
		unpin()
	}
	slices.SortFunc(diffs, func(a, b engine.Diff) int {
		return cmp.Or(strings.Compare(a.Board, b.Board), strings.Compare(a.Period, b.Period), strings.Compare(a.Player, b.Player))
	})
	return diffs
}
