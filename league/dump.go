package league

import (
	"context"

	"github.com/podiumhq/podium"
)

// Dump is what of a league travels with podium export: the tiers its
// settlements left, and its settled periods (Results reads each one's
// results). The current period's placements stay out: the target places
// each player at their next score, in their restored tier.
type Dump struct {
	Tiers   []podium.LeagueTierOf
	Periods []podium.LeaguePeriod // settled ones, oldest first
}

// Dump reads a league's tiers and settled periods. The periods are read
// before and after the tiers: a settlement in between would pair tiers
// with a history that does not lead to them, so the read is retried.
func (m *Module) Dump(ctx context.Context, board string) (Dump, error) {
	def, err := m.league(board)
	if err != nil {
		return Dump{}, err
	}
	ls, err := m.leagueStore()
	if err != nil {
		return Dump{}, err
	}
	settled := func() ([]podium.LeaguePeriod, error) {
		ps, err := ls.LeaguePeriods(ctx, def.ID)
		if err != nil {
			return nil, m.unavailable("periods", err)
		}
		out := ps[:0]
		for _, p := range ps {
			if p.Settled() {
				out = append(out, p)
			}
		}
		return out, nil
	}
	for try := 1; ; try++ {
		before, err := settled()
		if err != nil {
			return Dump{}, err
		}
		tiers, err := ls.LeagueTiers(ctx, def.ID)
		if err != nil {
			return Dump{}, m.unavailable("tiers", err)
		}
		after, err := settled()
		if err != nil {
			return Dump{}, err
		}
		if len(before) == len(after) {
			return Dump{Tiers: tiers, Periods: after}, nil
		}
		if try == 3 {
			return Dump{}, podium.Errorf(podium.ECodeUnavailable, "league %q settled periods during each of 3 reads; retry shortly", def.ID)
		}
	}
}

// Results returns the results of one period of a league, by player.
func (m *Module) Results(ctx context.Context, board, period string) ([]podium.LeagueResult, error) {
	def, err := m.league(board)
	if err != nil {
		return nil, err
	}
	ls, err := m.leagueStore()
	if err != nil {
		return nil, err
	}
	rs, err := ls.LeagueResults(ctx, def.ID, period)
	if err != nil {
		return nil, m.unavailable("results", err)
	}
	return rs, nil
}
