package main

import (
	"context"
	"fmt"
	"io"

	"github.com/podiumhq/podium"
)

// copyLeagues copies the leagues' rows (podium migrate): each period the
// destination does not have yet, with its placements, results and
// settlement, in one commit; then every player's tier (an upsert, so a
// resumed migration writes it again harmlessly).
func copyLeagues(ctx context.Context, src, dst podium.Store, boards []podium.Board, out io.Writer) error {
	ss, ok1 := src.(podium.LeagueStore)
	ds, ok2 := dst.(podium.LeagueStore)
	if !ok1 || !ok2 {
		return nil
	}
	periods, members, results, tiers := 0, 0, 0, 0
	for i := range boards {
		b := &boards[i]
		if b.League == nil {
			continue
		}
		have, err := ds.LeaguePeriods(ctx, b.ID)
		if err != nil {
			return err
		}
		done := map[string]bool{}
		for _, p := range have {
			done[p.Period] = true
		}
		ps, err := ss.LeaguePeriods(ctx, b.ID)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if done[p.Period] {
				continue
			}
			ms, err := ss.LeagueMembers(ctx, b.ID, p.Period, 0)
			if err != nil {
				return err
			}
			rs, err := ss.LeagueResults(ctx, b.ID, p.Period)
			if err != nil {
				return err
			}
			lb := &podium.LeagueBatch{Board: b.ID, Periods: []podium.LeaguePeriod{p}, Members: ms, Results: rs}
			if err := dst.Commit(ctx, &podium.Batch{Parts: []podium.Part{ds.LeaguePart(lb)}}); err != nil {
				return fmt.Errorf("league %s period %s: %w", b.ID, p.Period, err)
			}
			periods++
			members += len(ms)
			results += len(rs)
		}
		ts, err := ss.LeagueTiers(ctx, b.ID)
		if err != nil {
			return err
		}
		if len(ts) > 0 {
			if err := dst.Commit(ctx, &podium.Batch{Parts: []podium.Part{ds.LeaguePart(&podium.LeagueBatch{Board: b.ID, Tiers: ts})}}); err != nil {
				return fmt.Errorf("league %s tiers: %w", b.ID, err)
			}
			tiers += len(ts)
		}
	}
	fmt.Fprintf(out, "migrate: %d league periods, %d placements, %d results and %d tiers copied\n", periods, members, results, tiers)
	return nil
}
