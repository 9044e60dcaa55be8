package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// Leagues (podium.LeagueStore): periods, placements, results and tiers
// (migration 0140). The settlement lease is the tournaments' leases table
// (tourney.go).

var _ podium.LeagueStore = (*Store)(nil)

// leagueRows is the Store's leagues (podium.LeagueStore).
type leagueRows struct{ *Store }

// LeaguePart returns b as a part of a batch this store commits.
func (s leagueRows) LeaguePart(b *podium.LeagueBatch) podium.Part { return &leaguePart{s.Store, b} }

// leaguePart is the league rows of a commit. It is a fencer: queued before
// the heads, its fence first.
type leaguePart struct {
	s *Store
	b *podium.LeagueBatch
}

func (p *leaguePart) Len() int                 { return p.b.Len() }
func (p *leaguePart) Check() error             { return nil }
func (p *leaguePart) madeBy() *Store           { return p.s }
func (p *leaguePart) fence()                   {}
func (p *leaguePart) mapError(err error) error { return fenceError(err) }

// leagueChunk is the most rows one statement carries (a settlement writes
// a row per player: a million rows go as 20 statements of one JSON
// document each).
const leagueChunk = 50_000

// queue queues the league rows: the fence first, then each kind as JSON
// documents (jsonb_to_recordset), leagueChunk rows a statement.
func (p *leaguePart) queue(w *writer, pb *pgconn.Batch, _ *statements) {
	b := p.b
	if b == nil {
		return
	}
	if f := b.Fence; f != nil {
		pb.ExecParams("SELECT podium_fence($1, $2, $3::bigint)",
			[][]byte{[]byte(f.Name), []byte(f.Holder), []byte(strconv.FormatInt(f.Epoch, 10))}, nil, nil, nil)
		w.queued++
	}
	for _, pr := range b.Periods {
		if pr.Settled() {
			pb.ExecParams(sqlstore.SettleLeaguePeriod.Postgres, [][]byte{[]byte(pr.Board), []byte(pr.Period), itoa(podium.Millis(pr.Start)),
				itoa(podium.Millis(pr.SettledAt)), itoa(pr.Players), itoa(pr.Promoted), itoa(pr.Relegated), itoa(pr.Epoch), []byte(pr.Holder)},
				nil, nil, nil)
		} else {
			pb.ExecParams(sqlstore.InsertLeaguePeriod.Postgres, [][]byte{[]byte(pr.Board), []byte(pr.Period), itoa(podium.Millis(pr.Start))},
				nil, nil, nil)
		}
		w.queued++
	}
	type member struct {
		B string `json:"b"`
		D string `json:"d"`
		P string `json:"p"`
		T int    `json:"t"`
		C int    `json:"c"`
		S int64  `json:"s"`
		A int64  `json:"a"`
	}
	for lo := 0; lo < len(b.Members); lo += leagueChunk {
		ms := b.Members[lo:min(lo+leagueChunk, len(b.Members))]
		rows := make([]member, len(ms))
		for i, m := range ms {
			rows[i] = member{m.Board, m.Period, m.Player, m.Tier, m.Cohort, m.Seq, podium.Millis(m.At)}
		}
		w.jsonRows(pb, `INSERT INTO league_members (board, period, player, tier, cohort, seq, at_ms)
			SELECT b, d, p, t, c, s, a FROM jsonb_to_recordset($1::jsonb) AS x(b text, d text, p text, t integer, c integer, s bigint, a bigint)`, rows)
	}
	type result struct {
		B string `json:"b"`
		P string `json:"p"`
		D string `json:"d"`
		T int    `json:"t"`
		C int    `json:"c"`
		R int    `json:"r"`
		O string `json:"o"`
		N int    `json:"n"`
	}
	for lo := 0; lo < len(b.Results); lo += leagueChunk {
		rs := b.Results[lo:min(lo+leagueChunk, len(b.Results))]
		rows := make([]result, len(rs))
		for i, r := range rs {
			rows[i] = result{r.Board, r.Player, r.Period, r.Tier, r.Cohort, r.Rank, r.Outcome, r.NewTier}
		}
		w.jsonRows(pb, `INSERT INTO league_results (board, player, period, tier, cohort, rank, outcome, new_tier)
			SELECT b, p, d, t, c, r, o, n FROM jsonb_to_recordset($1::jsonb)
				AS x(b text, p text, d text, t integer, c integer, r integer, o text, n integer)
			ON CONFLICT (board, player, period) DO UPDATE SET tier = excluded.tier, cohort = excluded.cohort, rank = excluded.rank,
				outcome = excluded.outcome, new_tier = excluded.new_tier`, rows)
	}
	type tier struct {
		B string `json:"b"`
		P string `json:"p"`
		T int    `json:"t"`
	}
	for lo := 0; lo < len(b.Tiers); lo += leagueChunk {
		ts := b.Tiers[lo:min(lo+leagueChunk, len(b.Tiers))]
		rows := make([]tier, len(ts))
		for i, t := range ts {
			rows[i] = tier{b.Board, t.Player, t.Tier}
		}
		w.jsonRows(pb, `INSERT INTO league_tiers (board, player, tier)
			SELECT b, p, t FROM jsonb_to_recordset($1::jsonb) AS x(b text, p text, t integer)
			ON CONFLICT (board, player) DO UPDATE SET tier = excluded.tier`, rows)
	}
}

// leagueDeletes are the statements that remove a board's league rows, run
// with the board's delete.
var leagueDeletes = []string{
	sqlstore.DeleteBoardLeaguePeriods.Postgres,
	sqlstore.DeleteBoardLeagueMembers.Postgres,
	sqlstore.DeleteBoardLeagueResults.Postgres,
	sqlstore.DeleteBoardLeagueTiers.Postgres,
}

func collectMembers(rows pgx.Rows, board, period string) ([]podium.LeagueMember, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.LeagueMember, error) {
		m := podium.LeagueMember{Board: board, Period: period}
		var at int64
		err := r.Scan(&m.Player, &m.Tier, &m.Cohort, &m.Seq, &at)
		m.At = podium.FromMillis(at)
		return m, err
	})
}

// LeagueMembers returns the placements of a period after seq, by seq.
func (s leagueRows) LeagueMembers(ctx context.Context, board, period string, after int64) ([]podium.LeagueMember, error) {
	rows, err := s.pool.Query(ctx, sqlstore.LeagueMembers.Postgres, board, period, after)
	if err != nil {
		return nil, fmt.Errorf("league members: %w", err)
	}
	out, err := collectMembers(rows, board, period)
	if err != nil {
		return nil, fmt.Errorf("league members: %w", err)
	}
	return out, nil
}

// LeagueCohort returns the members of one cohort, by seq.
func (s leagueRows) LeagueCohort(ctx context.Context, board, period string, tier, cohort int) ([]podium.LeagueMember, error) {
	rows, err := s.pool.Query(ctx, sqlstore.LeagueCohort.Postgres, board, period, tier, cohort)
	if err != nil {
		return nil, fmt.Errorf("league cohort: %w", err)
	}
	out, err := collectMembers(rows, board, period)
	if err != nil {
		return nil, fmt.Errorf("league cohort: %w", err)
	}
	return out, nil
}

// LeagueMember returns one player's placement in a period.
func (s leagueRows) LeagueMember(ctx context.Context, board, period, player string) (podium.LeagueMember, bool, error) {
	m := podium.LeagueMember{Board: board, Period: period}
	var at int64
	err := s.pool.QueryRow(ctx, sqlstore.LeagueMember.Postgres, board, period, player).Scan(&m.Player, &m.Tier, &m.Cohort, &m.Seq, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return podium.LeagueMember{}, false, nil
	}
	if err != nil {
		return podium.LeagueMember{}, false, fmt.Errorf("league member: %w", err)
	}
	m.At = podium.FromMillis(at)
	return m, true, nil
}

// LeagueCohorts counts the members of a tier's cohorts.
func (s leagueRows) LeagueCohorts(ctx context.Context, board, period string, tier, offset, limit int) ([]podium.CohortCount, error) {
	rows, err := s.pool.Query(ctx, sqlstore.LeagueCohorts.Postgres, board, period, tier, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("league cohorts: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.CohortCount, error) {
		var c podium.CohortCount
		var n int64
		err := r.Scan(&c.Cohort, &n)
		c.Members = int(n)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("league cohorts: %w", err)
	}
	return out, nil
}

// LeagueTierCounts returns the members of each tier in a period.
func (s leagueRows) LeagueTierCounts(ctx context.Context, board, period string) ([]int64, error) {
	rows, err := s.pool.Query(ctx, sqlstore.LeagueTierCounts.Postgres, board, period)
	if err != nil {
		return nil, fmt.Errorf("league tier counts: %w", err)
	}
	type tc struct {
		t int
		n int64
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tc, error) {
		var x tc
		err := r.Scan(&x.t, &x.n)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("league tier counts: %w", err)
	}
	var out []int64
	for _, x := range list {
		if x.t >= 0 && x.t < podium.MaxLeagueTiers {
			for len(out) <= x.t {
				out = append(out, 0)
			}
			out[x.t] = x.n
		}
	}
	return out, nil
}

// LeagueTiers returns every player whose tier a settlement set.
func (s leagueRows) LeagueTiers(ctx context.Context, board string) ([]podium.LeagueTierOf, error) {
	return s.tiers(ctx, sqlstore.LeagueTiers.Postgres, board)
}

// LeagueTiersPage returns the tiers of the players after after, at most
// limit.
func (s leagueRows) LeagueTiersPage(ctx context.Context, board, after string, limit int) ([]podium.LeagueTierOf, error) {
	return s.tiers(ctx, sqlstore.LeagueTiersPage.Postgres, board, after, limit)
}

func (s leagueRows) tiers(ctx context.Context, q string, args ...any) ([]podium.LeagueTierOf, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("league tiers: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.LeagueTierOf, error) {
		var t podium.LeagueTierOf
		err := r.Scan(&t.Player, &t.Tier)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("league tiers: %w", err)
	}
	return out, nil
}

// LeaguePlayerTier returns one player's tier.
func (s leagueRows) LeaguePlayerTier(ctx context.Context, board, player string) (int, bool, error) {
	var t int
	err := s.pool.QueryRow(ctx, sqlstore.LeaguePlayerTier.Postgres, board, player).Scan(&t)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("league tier: %w", err)
	}
	return t, true, nil
}

// LeaguePeriods returns the periods of a league with placements, by start.
func (s leagueRows) LeaguePeriods(ctx context.Context, board string) ([]podium.LeaguePeriod, error) {
	rows, err := s.pool.Query(ctx, sqlstore.LeaguePeriods.Postgres, board)
	if err != nil {
		return nil, fmt.Errorf("league periods: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.LeaguePeriod, error) {
		p := podium.LeaguePeriod{Board: board}
		var start, settled int64
		err := r.Scan(&p.Period, &start, &settled, &p.Players, &p.Promoted, &p.Relegated, &p.Epoch, &p.Holder)
		p.Start = podium.FromMillis(start)
		if settled > 0 {
			p.SettledAt = podium.FromMillis(settled)
		}
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("league periods: %w", err)
	}
	return out, nil
}

// LeagueResults returns the results of a period, by player.
func (s leagueRows) LeagueResults(ctx context.Context, board, period string) ([]podium.LeagueResult, error) {
	return s.results(ctx, sqlstore.LeagueResults.Postgres, board, period)
}

// LeagueResultsPage returns the results of a period of the players after
// after, at most limit.
func (s leagueRows) LeagueResultsPage(ctx context.Context, board, period, after string, limit int) ([]podium.LeagueResult, error) {
	return s.results(ctx, sqlstore.LeagueResultsPage.Postgres, board, period, after, limit)
}

func (s leagueRows) results(ctx context.Context, q, board, period string, more ...any) ([]podium.LeagueResult, error) {
	rows, err := s.pool.Query(ctx, q, append([]any{board, period}, more...)...)
	if err != nil {
		return nil, fmt.Errorf("league results: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.LeagueResult, error) {
		x := podium.LeagueResult{Board: board, Period: period}
		err := r.Scan(&x.Player, &x.Tier, &x.Cohort, &x.Rank, &x.Outcome, &x.NewTier)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("league results: %w", err)
	}
	return out, nil
}

// LeagueHistory returns a player's results, newest first.
func (s leagueRows) LeagueHistory(ctx context.Context, board, player string, limit int) ([]podium.LeagueResult, error) {
	rows, err := s.pool.Query(ctx, sqlstore.LeagueHistory.Postgres, board, player, limit)
	if err != nil {
		return nil, fmt.Errorf("league history: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.LeagueResult, error) {
		x := podium.LeagueResult{Board: board, Player: player}
		err := r.Scan(&x.Period, &x.Tier, &x.Cohort, &x.Rank, &x.Outcome, &x.NewTier)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("league history: %w", err)
	}
	return out, nil
}
