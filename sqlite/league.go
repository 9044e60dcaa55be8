package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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

// leaguePart is the league rows of a commit. It is a fencer: written
// before the log, its fence first, so a lost lease stores nothing.
type leaguePart struct {
	s *Store
	b *podium.LeagueBatch
}

func (p *leaguePart) Len() int       { return p.b.Len() }
func (p *leaguePart) Check() error   { return nil }
func (p *leaguePart) madeBy() *Store { return p.s }
func (p *leaguePart) fence()         {}

// write stores the rows inside commit's transaction: the fence first,
// then each kind through one prepared statement (a settlement writes a
// row per player).
func (p *leaguePart) write(ctx context.Context, tx *sql.Tx) error {
	b := p.b
	if b == nil {
		return nil
	}
	if f := b.Fence; f != nil {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM leases WHERE name = ? AND holder = ? AND epoch = ?",
			f.Name, f.Holder, f.Epoch).Scan(&n); err != nil {
			return fmt.Errorf("league fence: %w", err)
		}
		if n == 0 {
			return podium.Errorf(podium.ECodeConflict, "lease %s is no longer held by %s at epoch %d", f.Name, f.Holder, f.Epoch)
		}
	}
	each := func(what, q string, n int, args func(i int) []any) error {
		if n == 0 {
			return nil
		}
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("league %s: %w", what, err)
		}
		defer st.Close()
		for i := 0; i < n; i++ {
			if _, err := st.ExecContext(ctx, args(i)...); err != nil {
				return fmt.Errorf("league %s: %w", what, err)
			}
		}
		return nil
	}
	for _, pr := range b.Periods {
		var err error
		if pr.Settled() {
			_, err = tx.ExecContext(ctx, sqlstore.SettleLeaguePeriod.SQLite, pr.Board, pr.Period, podium.Millis(pr.Start),
				podium.Millis(pr.SettledAt), pr.Players, pr.Promoted, pr.Relegated, pr.Epoch, pr.Holder)
		} else {
			_, err = tx.ExecContext(ctx, sqlstore.InsertLeaguePeriod.SQLite, pr.Board, pr.Period, podium.Millis(pr.Start))
		}
		if err != nil {
			return fmt.Errorf("league period: %w", err)
		}
	}
	if err := each("member", sqlstore.InsertLeagueMember.SQLite, len(b.Members), func(i int) []any {
		m := &b.Members[i]
		return []any{m.Board, m.Period, m.Player, m.Tier, m.Cohort, m.Seq, podium.Millis(m.At)}
	}); err != nil {
		return err
	}
	if err := chunked(ctx, tx, "result", insertLeagueResult, leagueResultRow, upsertLeagueResultEnd, len(b.Results), func(args []any, i int) []any {
		r := &b.Results[i]
		return append(args, r.Board, r.Player, r.Period, r.Tier, r.Cohort, r.Rank, r.Outcome, r.NewTier)
	}); err != nil {
		return err
	}
	return chunked(ctx, tx, "tier", insertLeagueTier, leagueTierRow, upsertLeagueTierEnd, len(b.Tiers), func(args []any, i int) []any {
		return append(args, b.Board, b.Tiers[i].Player, b.Tiers[i].Tier)
	})
}

// A settlement's results and tiers (a row per player: a million at once)
// go in multi-row statements, as Commit's rows do (chunkSizes). The
// statements are prepared in the transaction: a settlement is rare.
const (
	insertLeagueResult    = "INSERT INTO league_results (board, player, period, tier, cohort, rank, outcome, new_tier) VALUES "
	leagueResultRow       = "(?,?,?,?,?,?,?,?)"
	upsertLeagueResultEnd = ` ON CONFLICT (board, player, period) DO UPDATE SET tier = excluded.tier,
		cohort = excluded.cohort, rank = excluded.rank, outcome = excluded.outcome, new_tier = excluded.new_tier`
	insertLeagueTier    = "INSERT INTO league_tiers (board, player, tier) VALUES "
	leagueTierRow       = "(?,?,?)"
	upsertLeagueTierEnd = " ON CONFLICT (board, player) DO UPDATE SET tier = excluded.tier"
)

// chunked writes n rows in statements of chunkSizes rows (the largest
// that fit), add appending the arguments of row i. A settlement's rows
// have distinct keys (SQLite would let a later row of a statement upsert
// an earlier one; PostgreSQL would not).
func chunked(ctx context.Context, tx *sql.Tx, what, head, row, tail string, n int, add func(args []any, i int) []any) error {
	stmts := make([]*sql.Stmt, len(chunkSizes))
	defer func() {
		for _, st := range stmts {
			if st != nil {
				st.Close()
			}
		}
	}()
	var args []any
	for i := 0; i < n; {
		k := 0
		for chunkSizes[k] > n-i {
			k++
		}
		if stmts[k] == nil {
			st, err := tx.PrepareContext(ctx, head+rows(row, chunkSizes[k])+tail)
			if err != nil {
				return fmt.Errorf("league %s: %w", what, err)
			}
			stmts[k] = st
		}
		args = args[:0]
		for j := i; j < i+chunkSizes[k]; j++ {
			args = add(args, j)
		}
		if _, err := stmts[k].ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("league %s: %w", what, err)
		}
		i += chunkSizes[k]
	}
	return nil
}

// deleteLeague removes a board's league rows, inside DeleteBoard's
// transaction.
func deleteLeague(ctx context.Context, tx *sql.Tx, id string) error {
	for _, q := range []sqlstore.Stmt{sqlstore.DeleteBoardLeaguePeriods, sqlstore.DeleteBoardLeagueMembers,
		sqlstore.DeleteBoardLeagueResults, sqlstore.DeleteBoardLeagueTiers} {
		if _, err := tx.ExecContext(ctx, q.SQLite, id); err != nil {
			return err
		}
	}
	return nil
}

func scanMembers(rows *sql.Rows, board, period string) ([]podium.LeagueMember, error) {
	defer rows.Close()
	var out []podium.LeagueMember
	for rows.Next() {
		m := podium.LeagueMember{Board: board, Period: period}
		var at int64
		if err := rows.Scan(&m.Player, &m.Tier, &m.Cohort, &m.Seq, &at); err != nil {
			return nil, err
		}
		m.At = podium.FromMillis(at)
		out = append(out, m)
	}
	return out, rows.Err()
}

// LeagueMembers returns the placements of a period after seq, by seq.
func (s leagueRows) LeagueMembers(ctx context.Context, board, period string, after int64) ([]podium.LeagueMember, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.LeagueMembers.SQLite, board, period, after)
	if err != nil {
		return nil, fmt.Errorf("league members: %w", err)
	}
	out, err := scanMembers(rows, board, period)
	if err != nil {
		return nil, fmt.Errorf("league members: %w", err)
	}
	return out, nil
}

// LeagueCohort returns the members of one cohort, by seq.
func (s leagueRows) LeagueCohort(ctx context.Context, board, period string, tier, cohort int) ([]podium.LeagueMember, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.LeagueCohort.SQLite, board, period, tier, cohort)
	if err != nil {
		return nil, fmt.Errorf("league cohort: %w", err)
	}
	out, err := scanMembers(rows, board, period)
	if err != nil {
		return nil, fmt.Errorf("league cohort: %w", err)
	}
	return out, nil
}

// LeagueMember returns one player's placement in a period.
func (s leagueRows) LeagueMember(ctx context.Context, board, period, player string) (podium.LeagueMember, bool, error) {
	m := podium.LeagueMember{Board: board, Period: period}
	var at int64
	err := s.r.QueryRowContext(ctx, sqlstore.LeagueMember.SQLite, board, period, player).Scan(&m.Player, &m.Tier, &m.Cohort, &m.Seq, &at)
	if errors.Is(err, sql.ErrNoRows) {
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
	rows, err := s.r.QueryContext(ctx, sqlstore.LeagueCohorts.SQLite, board, period, tier, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("league cohorts: %w", err)
	}
	defer rows.Close()
	var out []podium.CohortCount
	for rows.Next() {
		var c podium.CohortCount
		if err := rows.Scan(&c.Cohort, &c.Members); err != nil {
			return nil, fmt.Errorf("league cohorts: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("league cohorts: %w", err)
	}
	return out, nil
}

// LeagueTierCounts returns the members of each tier in a period.
func (s leagueRows) LeagueTierCounts(ctx context.Context, board, period string) ([]int64, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.LeagueTierCounts.SQLite, board, period)
	if err != nil {
		return nil, fmt.Errorf("league tier counts: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var t int
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			return nil, fmt.Errorf("league tier counts: %w", err)
		}
		if t >= 0 && t < podium.MaxLeagueTiers {
			for len(out) <= t {
				out = append(out, 0)
			}
			out[t] = n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("league tier counts: %w", err)
	}
	return out, nil
}

// LeagueTiers returns every player whose tier a settlement set.
func (s leagueRows) LeagueTiers(ctx context.Context, board string) ([]podium.LeagueTierOf, error) {
	return s.tiers(ctx, sqlstore.LeagueTiers.SQLite, board)
}

// LeagueTiersPage returns the tiers of the players after after, at most
// limit.
func (s leagueRows) LeagueTiersPage(ctx context.Context, board, after string, limit int) ([]podium.LeagueTierOf, error) {
	return s.tiers(ctx, sqlstore.LeagueTiersPage.SQLite, board, after, limit)
}

func (s leagueRows) tiers(ctx context.Context, q string, args ...any) ([]podium.LeagueTierOf, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("league tiers: %w", err)
	}
	defer rows.Close()
	var out []podium.LeagueTierOf
	for rows.Next() {
		var t podium.LeagueTierOf
		if err := rows.Scan(&t.Player, &t.Tier); err != nil {
			return nil, fmt.Errorf("league tiers: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("league tiers: %w", err)
	}
	return out, nil
}

// LeaguePlayerTier returns one player's tier.
func (s leagueRows) LeaguePlayerTier(ctx context.Context, board, player string) (int, bool, error) {
	var t int
	err := s.r.QueryRowContext(ctx, sqlstore.LeaguePlayerTier.SQLite, board, player).Scan(&t)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("league tier: %w", err)
	}
	return t, true, nil
}

// LeaguePeriods returns the periods of a league with placements, by start.
func (s leagueRows) LeaguePeriods(ctx context.Context, board string) ([]podium.LeaguePeriod, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.LeaguePeriods.SQLite, board)
	if err != nil {
		return nil, fmt.Errorf("league periods: %w", err)
	}
	defer rows.Close()
	var out []podium.LeaguePeriod
	for rows.Next() {
		p := podium.LeaguePeriod{Board: board}
		var start, settled int64
		if err := rows.Scan(&p.Period, &start, &settled, &p.Players, &p.Promoted, &p.Relegated, &p.Epoch, &p.Holder); err != nil {
			return nil, fmt.Errorf("league periods: %w", err)
		}
		p.Start = podium.FromMillis(start)
		if settled > 0 {
			p.SettledAt = podium.FromMillis(settled)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("league periods: %w", err)
	}
	return out, nil
}

// LeagueResults returns the results of a period, by player.
func (s leagueRows) LeagueResults(ctx context.Context, board, period string) ([]podium.LeagueResult, error) {
	return s.results(ctx, sqlstore.LeagueResults.SQLite, board, period)
}

// LeagueResultsPage returns the results of a period of the players after
// after, at most limit.
func (s leagueRows) LeagueResultsPage(ctx context.Context, board, period, after string, limit int) ([]podium.LeagueResult, error) {
	return s.results(ctx, sqlstore.LeagueResultsPage.SQLite, board, period, after, limit)
}

func (s leagueRows) results(ctx context.Context, q, board, period string, more ...any) ([]podium.LeagueResult, error) {
	rows, err := s.r.QueryContext(ctx, q, append([]any{board, period}, more...)...)
	if err != nil {
		return nil, fmt.Errorf("league results: %w", err)
	}
	defer rows.Close()
	var out []podium.LeagueResult
	for rows.Next() {
		r := podium.LeagueResult{Board: board, Period: period}
		if err := rows.Scan(&r.Player, &r.Tier, &r.Cohort, &r.Rank, &r.Outcome, &r.NewTier); err != nil {
			return nil, fmt.Errorf("league results: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("league results: %w", err)
	}
	return out, nil
}

// LeagueHistory returns a player's results, newest first.
func (s leagueRows) LeagueHistory(ctx context.Context, board, player string, limit int) ([]podium.LeagueResult, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.LeagueHistory.SQLite, board, player, limit)
	if err != nil {
		return nil, fmt.Errorf("league history: %w", err)
	}
	defer rows.Close()
	var out []podium.LeagueResult
	for rows.Next() {
		r := podium.LeagueResult{Board: board, Player: player}
		if err := rows.Scan(&r.Period, &r.Tier, &r.Cohort, &r.Rank, &r.Outcome, &r.NewTier); err != nil {
			return nil, fmt.Errorf("league history: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("league history: %w", err)
	}
	return out, nil
}
