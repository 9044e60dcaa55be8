package aggregate

import (
	"cmp"
	"slices"
	"strings"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

var _ engine.IndexChecker = (*Module)(nil)

// CheckIndexes compares every period in memory of every aggregate with
// its sources in memory, recomputed (podium check, POST /v1/admin/check;
// on the writer). Only periods in memory on the aggregate and on every
// source are compared, held there meanwhile. The usual check compares the
// aggregate's entries with its own log, like any board's; the check of
// its log against its sources' logs is the store check's
// (engine.CheckStore).
func (m *Module) CheckIndexes(c engine.Checker) []engine.Diff {
	var diffs []engine.Diff
	for _, abs := range m.eng.BoardStates() {
		def := abs.Def()
		if def.Aggregate == nil {
			continue
		}
		srcs := make([]*engine.BoardState, len(def.Aggregate.Sources))
		for i, s := range def.Aggregate.Sources {
			srcs[i] = c.Board(s.Board)
		}
		all := append([]*engine.BoardState{abs}, srcs...)
		for _, period := range abs.LoadedPeriods() {
			unpin, ok := c.PinLoaded(all, period)
			if !ok {
				continue
			}
			players := map[uint32]bool{}
			for _, bs := range all {
				if bs != nil {
					bs.EachPlayer(period, func(pid uint32) { players[pid] = true })
				}
			}
			for pid := range players {
				in := make([]*podium.Entry, len(srcs))
				for i, bs := range srcs {
					if bs != nil {
						in[i] = bs.LoadedEntry(period, pid)
					}
				}
				want, wantOK, err := def.ComputeAggregate(in)
				got := abs.LoadedEntry(period, pid)
				player := c.PlayerID(pid)
				if err != nil {
					diffs = append(diffs, engine.Diff{Board: def.ID, Period: period, Player: player, Want: podium.ErrorMessage(err), Got: "an entry"})
					continue
				}
				var gk []int64
				if got != nil {
					gk = got.Keys
				}
				if d, ok := engine.AggregateDiff(def.ID, period, player, want, wantOK, gk, got != nil); ok {
					diffs = append(diffs, d)
				}
			}
			unpin()
		}
	}
	slices.SortFunc(diffs, func(a, b engine.Diff) int {
		return cmp.Or(strings.Compare(a.Board, b.Board), strings.Compare(a.Period, b.Period), strings.Compare(a.Player, b.Player))
	})
	return diffs
}
