package engine

import (
	"time"

	"github.com/podiumhq/podium"
)

// Periods past a board's keep_periods (podium.Board.PeriodExpired,
// retention.go in the root package) are going: reads answer them as
// periods that never had entries, the old-period sweep drops them from
// memory (oldPeriods.dropExpired), no write reaches them (oldPeriods.hold),
// and the retention module deletes their rows from the store in bounded
// batches. Until it has, the store still holds some of their rows, so the
// checks leave them out: they are not mismatches.

// checkedPeriod reports whether the checks compare a period of board id:
// not if the board (or, for an aggregate, one of its sources, whose
// entries it is compared with) no longer keeps it at now. defs are the
// boards by id.
func checkedPeriod(defs map[string]*podium.Board, id, period string, now time.Time) bool {
	def := defs[id]
	if def == nil {
		return true
	}
	if def.PeriodExpired(now, period) {
		return false
	}
	if def.Aggregate != nil {
		for _, s := range def.Aggregate.Sources {
			if src := defs[s.Board]; src != nil && src.PeriodExpired(now, period) {
				return false
			}
		}
	}
	return true
}

// keptDiffs drops the differences in periods the checks leave out.
func keptDiffs(diffs []Diff, defs map[string]*podium.Board, now time.Time) []Diff {
	out := diffs[:0]
	for _, d := range diffs {
		if checkedPeriod(defs, d.Board, d.Period, now) {
			out = append(out, d)
		}
	}
	return out
}
