package league

import (
	"context"
	"fmt"
	"strconv"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Check checks the leagues' placements in the store against the placement
// rule (podium check): in each period with placements, seq numbers them
// densely from 1, and the k-th player placed in a tier (by seq) is in
// cohort k / cohort_size, so no cohort holds more than the size and a
// tier's cohorts fill in order. The rows are facts, not a cache of the
// log: there is nothing to rebuild, and a difference is reported for an
// operator (it means the rows were changed behind podium's back, or a
// bug).
func Check(ctx context.Context, store podium.Store) ([]engine.Diff, error) {
	ls, ok := store.(podium.LeagueStore)
	if !ok {
		return nil, nil
	}
	boards, err := store.Boards(ctx)
	if err != nil {
		return nil, err
	}
	var diffs []engine.Diff
	for i := range boards {
		b := &boards[i]
		if b.League == nil {
			continue
		}
		ps, err := ls.LeaguePeriods(ctx, b.ID)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			ms, err := ls.LeagueMembers(ctx, b.ID, p.Period, 0)
			if err != nil {
				return nil, err
			}
			diffs = append(diffs, checkPlacements(b, p.Period, ms)...)
		}
	}
	return diffs, nil
}

// checkPlacements checks one period's placements, in seq order.
func checkPlacements(b *podium.Board, period string, ms []podium.LeagueMember) []engine.Diff {
	var diffs []engine.Diff
	size := b.League.CohortSize
	perTier := map[int]int{}
	for i, m := range ms {
		if m.Seq != int64(i+1) {
			diffs = append(diffs, engine.Diff{Board: b.ID, Period: period, Player: m.Player,
				Want: "placement seq " + strconv.Itoa(i+1), Got: "seq " + strconv.FormatInt(m.Seq, 10)})
		}
		if m.Tier < 0 || m.Tier >= len(b.League.Tiers) {
			diffs = append(diffs, engine.Diff{Board: b.ID, Period: period, Player: m.Player,
				Want: fmt.Sprintf("a tier from 0 to %d", len(b.League.Tiers)-1), Got: "tier " + strconv.Itoa(m.Tier)})
			continue
		}
		k := perTier[m.Tier]
		perTier[m.Tier]++
		if m.Cohort != k/size {
			diffs = append(diffs, engine.Diff{Board: b.ID, Period: period, Player: m.Player,
				Want: fmt.Sprintf("cohort %d (placement %d of tier %s, cohorts of %d)", k/size, k+1, b.League.Tiers[m.Tier].Name, size),
				Got:  "cohort " + strconv.Itoa(m.Cohort)})
		}
	}
	return diffs
}
