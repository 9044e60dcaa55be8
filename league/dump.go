package league

import (
	"context"

	"github.com/podiumhq/podium"
)

// What of a league travels with podium export, a page at a time (GET
// /v1/leagues/{board}/export): the tiers its settlements left, its
// settled periods, and each one's results. The current period's
// placements stay out: the target places each player at their next
// score, in their restored tier.

// Settled returns a league's settled periods, oldest first. It is read
// whole, as a settlement reads it: one row per settled period (52 a year
// for a weekly league).
func (m *Module) Settled(ctx context.Context, board string) ([]podium.LeaguePeriod, error) {
	def, err := m.league(board)
	if err != nil {
		return nil, err
	}
	ls, err := m.leagueStore()
	if err != nil {
		return nil, err
	}
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

// TiersPage returns at most limit of a league's tiers, those of the
// players after after (byte order), by player.
func (m *Module) TiersPage(ctx context.Context, board, after string, limit int) ([]podium.LeagueTierOf, error) {
	def, err := m.league(board)
	if err != nil {
		return nil, err
	}
	ls, err := m.leagueStore()
	if err != nil {
		return nil, err
	}
	ts, err := ls.LeagueTiersPage(ctx, def.ID, after, limit)
	if err != nil {
		return nil, m.unavailable("tiers", err)
	}
	return ts, nil
}

// ResultsPage returns at most limit of one period's results, those of the
// players after after (byte order), by player.
func (m *Module) ResultsPage(ctx context.Context, board, period, after string, limit int) ([]podium.LeagueResult, error) {
	def, err := m.league(board)
	if err != nil {
		return nil, err
	}
	ls, err := m.leagueStore()
	if err != nil {
		return nil, err
	}
	rs, err := ls.LeagueResultsPage(ctx, def.ID, period, after, limit)
	if err != nil {
		return nil, m.unavailable("results", err)
	}
	return rs, nil
}
