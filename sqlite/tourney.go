package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// Tournaments (podium.TourneyStore): joins, payouts, settlements and
// leases (migration 0040).

var _ podium.TourneyStore = (*Store)(nil)

// tourneyRows is the Store's tournaments: joins, payouts, settlements and leases (podium.TourneyStore).
type tourneyRows struct{ *Store }

// TourneyPart returns t as a part of a batch this store commits.
func (s tourneyRows) TourneyPart(t *podium.TourneyBatch) podium.Part { return &tourneyPart{s.Store, t} }

// tourneyPart is the tournament rows of a commit. It is a fencer: written
// before the log, its fence first, so a lost lease stores nothing.
type tourneyPart struct {
	s *Store
	t *podium.TourneyBatch
}

func (p *tourneyPart) Len() int       { return p.t.Len() }
func (p *tourneyPart) Check() error   { return nil }
func (p *tourneyPart) madeBy() *Store { return p.s }
func (p *tourneyPart) fence()         {}

// write stores the rows inside commit's transaction: the fence first.
func (p *tourneyPart) write(ctx context.Context, tx *sql.Tx) error {
	t := p.t
	if t == nil {
		return nil
	}
	if f := t.Fence; f != nil {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM leases WHERE name = ? AND holder = ? AND epoch = ?",
			f.Name, f.Holder, f.Epoch).Scan(&n); err != nil {
			return fmt.Errorf("fence: %w", err)
		}
		if n == 0 {
			return podium.Errorf(podium.ECodeConflict, "lease %s is no longer held by %s at epoch %d", f.Name, f.Holder, f.Epoch)
		}
	}
	for _, j := range t.Joins {
		if _, err := tx.ExecContext(ctx, "INSERT INTO tournament_joins (board, player, n, at_ms) VALUES (?, ?, ?, ?)",
			j.Board, j.Player, j.N, podium.Millis(j.At)); err != nil {
			return fmt.Errorf("join: %w", err)
		}
	}
	for _, p := range t.Payouts {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tournament_payouts (board, player, rank, points, at_ms) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (board, player) DO UPDATE SET rank = excluded.rank, points = excluded.points, at_ms = excluded.at_ms`,
			p.Board, p.Player, p.Rank, p.Points, podium.Millis(p.At)); err != nil {
			return fmt.Errorf("payout: %w", err)
		}
	}
	for _, st := range t.Settlements {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tournament_settlements (board, settled_ms, runs, players, paid, epoch, holder)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (board) DO UPDATE SET settled_ms = excluded.settled_ms, runs = excluded.runs,
			players = excluded.players, paid = excluded.paid, epoch = excluded.epoch, holder = excluded.holder`,
			st.Board, podium.Millis(st.SettledAt), st.Runs, st.Players, st.Paid, st.Epoch, st.Holder); err != nil {
			return fmt.Errorf("settlement: %w", err)
		}
	}
	return nil
}

// deleteTourney removes what a board's tournament accumulated, inside
// DeleteBoard's transaction.
func deleteTourney(ctx context.Context, tx *sql.Tx, id string) error {
	for _, q := range []string{sqlstore.DeleteBoardJoins.SQLite, sqlstore.DeleteBoardPayouts.SQLite,
		sqlstore.DeleteBoardSettlement.SQLite} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return err
		}
	}
	return nil
}

// Joins returns the joins of a board with n above after, by n.
func (s tourneyRows) Joins(ctx context.Context, board string, after int64) ([]podium.Join, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.Joins.SQLite, board, after)
	if err != nil {
		return nil, fmt.Errorf("joins: %w", err)
	}
	defer rows.Close()
	var out []podium.Join
	for rows.Next() {
		j := podium.Join{Board: board}
		var at int64
		if err := rows.Scan(&j.Player, &j.N, &at); err != nil {
			return nil, fmt.Errorf("joins: %w", err)
		}
		j.At = podium.FromMillis(at)
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("joins: %w", err)
	}
	return out, nil
}

// Payouts returns every payout of a board, by player.
func (s tourneyRows) Payouts(ctx context.Context, board string) ([]podium.Payout, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.Payouts.SQLite, board)
	if err != nil {
		return nil, fmt.Errorf("payouts: %w", err)
	}
	defer rows.Close()
	var out []podium.Payout
	for rows.Next() {
		p := podium.Payout{Board: board}
		var at int64
		if err := rows.Scan(&p.Player, &p.Rank, &p.Points, &at); err != nil {
			return nil, fmt.Errorf("payouts: %w", err)
		}
		p.At = podium.FromMillis(at)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("payouts: %w", err)
	}
	return out, nil
}

// Settlements returns the status of every settled tournament, by board.
func (s tourneyRows) Settlements(ctx context.Context) ([]podium.Settlement, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.Settlements.SQLite)
	if err != nil {
		return nil, fmt.Errorf("settlements: %w", err)
	}
	defer rows.Close()
	var out []podium.Settlement
	for rows.Next() {
		var st podium.Settlement
		var at int64
		if err := rows.Scan(&st.Board, &at, &st.Runs, &st.Players, &st.Paid, &st.Epoch, &st.Holder); err != nil {
			return nil, fmt.Errorf("settlements: %w", err)
		}
		st.SettledAt = podium.FromMillis(at)
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("settlements: %w", err)
	}
	return out, nil
}

// AcquireLease takes or renews a lease (see podium.TourneyStore). On SQLite
// one process owns the database, so the lease is trivially its own; it is
// kept anyway so that the same settlement code, fence included, runs on
// both stores.
func (s tourneyRows) AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (podium.Lease, bool, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return podium.Lease{}, false, fmt.Errorf("lease: %w", err)
	}
	defer rollback(tx)
	var l podium.Lease
	var exp int64
	err = tx.QueryRowContext(ctx, sqlstore.Lease.SQLite, name).Scan(&l.Holder, &l.Epoch, &exp)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return podium.Lease{}, false, fmt.Errorf("lease: %w", err)
	default:
		if l.Holder != holder && exp > podium.Millis(now) {
			l.Name, l.Expires = name, podium.FromMillis(exp)
			return l, false, nil
		}
	}
	epoch := l.Epoch
	if l.Holder != holder || exp <= podium.Millis(now) {
		epoch++
	}
	until := now.Add(ttl)
	if _, err := tx.ExecContext(ctx, `INSERT INTO leases (name, holder, epoch, expires_ms) VALUES (?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, epoch = excluded.epoch, expires_ms = excluded.expires_ms`,
		name, holder, epoch, podium.Millis(until)); err != nil {
		return podium.Lease{}, false, fmt.Errorf("lease: %w", err)
	}
	if err := s.commitTx(tx); err != nil {
		return podium.Lease{}, false, fmt.Errorf("lease: %w", err)
	}
	return podium.Lease{Name: name, Holder: holder, Epoch: epoch, Expires: podium.FromMillis(podium.Millis(until))}, true, nil
}

// ReleaseLease gives a lease up if holder still has it at epoch: it
// expires at once, and the next holder takes the next epoch.
func (s tourneyRows) ReleaseLease(ctx context.Context, name, holder string, epoch int64) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.w.ExecContext(ctx, sqlstore.ReleaseLease.SQLite, name, holder, epoch); err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	return nil
}
