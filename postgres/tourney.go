package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// Tournaments (podium.TourneyStore): joins, payouts, settlements and
// leases (migration 0040).

var _ podium.TourneyStore = (*Store)(nil)

// tourneyRows is the Store's tournaments: joins, payouts, settlements and leases (podium.TourneyStore).
type tourneyRows struct{ *Store }

// codeFenceLost is the SQLSTATE podium_fence raises when the lease is gone.
const codeFenceLost = "P0004"

// TourneyPart returns t as a part of a batch this store commits.
func (s tourneyRows) TourneyPart(t *podium.TourneyBatch) podium.Part { return &tourneyPart{s.Store, t} }

// tourneyPart is the tournament rows of a commit. It is a fencer: queued
// before the heads, its fence first.
type tourneyPart struct {
	s *Store
	t *podium.TourneyBatch
}

func (p *tourneyPart) Len() int       { return p.t.Len() }
func (p *tourneyPart) Check() error   { return nil }
func (p *tourneyPart) madeBy() *Store { return p.s }
func (p *tourneyPart) fence()         {}

// mapError turns the fence's failure into a conflict the engine
// recognises (nil for any other error).
func (p *tourneyPart) mapError(err error) error { return fenceError(err) }

// queue queues the tournament rows: the fence first, so a lost lease
// fails the transaction before anything else runs. Rows go as one JSON
// parameter each kind (jsonb_to_recordset): few rows, one statement, no
// per-row round trip.
func (p *tourneyPart) queue(w *writer, pb *pgconn.Batch, _ *statements) {
	t := p.t
	if t == nil {
		return
	}
	if f := t.Fence; f != nil {
		pb.ExecParams("SELECT podium_fence($1, $2, $3::bigint)",
			[][]byte{[]byte(f.Name), []byte(f.Holder), []byte(strconv.FormatInt(f.Epoch, 10))}, nil, nil, nil)
		w.queued++
	}
	if len(t.Joins) > 0 {
		type row struct {
			B string `json:"b"`
			P string `json:"p"`
			N int64  `json:"n"`
			T int64  `json:"t"`
		}
		rows := make([]row, len(t.Joins))
		for i, j := range t.Joins {
			rows[i] = row{j.Board, j.Player, j.N, podium.Millis(j.At)}
		}
		w.jsonRows(pb, `INSERT INTO tournament_joins (board, player, n, at_ms)
			SELECT b, p, n, t FROM jsonb_to_recordset($1::jsonb) AS x(b text, p text, n bigint, t bigint)`, rows)
	}
	if len(t.Payouts) > 0 {
		type row struct {
			B string `json:"b"`
			P string `json:"p"`
			R int64  `json:"r"`
			V int64  `json:"v"`
			T int64  `json:"t"`
		}
		// Upserts of one row twice in a statement fail: the last wins.
		seen := map[[2]string]int{}
		var rows []row
		for _, p := range t.Payouts {
			r := row{p.Board, p.Player, p.Rank, p.Points, podium.Millis(p.At)}
			if i, ok := seen[[2]string{p.Board, p.Player}]; ok {
				rows[i] = r
				continue
			}
			seen[[2]string{p.Board, p.Player}] = len(rows)
			rows = append(rows, r)
		}
		w.jsonRows(pb, `INSERT INTO tournament_payouts (board, player, rank, points, at_ms)
			SELECT b, p, r, v, t FROM jsonb_to_recordset($1::jsonb) AS x(b text, p text, r bigint, v bigint, t bigint)
			ON CONFLICT (board, player) DO UPDATE SET rank = excluded.rank, points = excluded.points, at_ms = excluded.at_ms`, rows)
	}
	for _, st := range t.Settlements {
		pb.ExecParams(`INSERT INTO tournament_settlements (board, settled_ms, runs, players, paid, epoch, holder)
			VALUES ($1, $2::bigint, $3::bigint, $4::bigint, $5::bigint, $6::bigint, $7)
			ON CONFLICT (board) DO UPDATE SET settled_ms = excluded.settled_ms, runs = excluded.runs, players = excluded.players,
			paid = excluded.paid, epoch = excluded.epoch, holder = excluded.holder`,
			[][]byte{[]byte(st.Board), itoa(podium.Millis(st.SettledAt)), itoa(st.Runs), itoa(st.Players), itoa(st.Paid), itoa(st.Epoch), []byte(st.Holder)},
			nil, nil, nil)
		w.queued++
	}
}

func itoa(v int64) []byte { return strconv.AppendInt(nil, v, 10) }

func (w *writer) jsonRows(pb *pgconn.Batch, sql string, rows any) {
	doc, err := json.Marshal(rows)
	if err != nil {
		panic(err) // strings and integers only
	}
	pb.ExecParams(sql, [][]byte{doc}, nil, nil, nil)
	w.queued++
}

// fenceError turns the fence's failure into a conflict the engine
// recognises (nil for any other error).
func fenceError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == codeFenceLost {
		return podium.Errorf(podium.ECodeConflict, "%s", pe.Message)
	}
	return nil
}

// tourneyDeletes are the statements that remove what a board's tournament
// accumulated, run with the board's delete.
var tourneyDeletes = []string{
	sqlstore.DeleteBoardJoins.Postgres,
	sqlstore.DeleteBoardPayouts.Postgres,
	sqlstore.DeleteBoardSettlement.Postgres,
}

// Joins returns the joins of a board with n above after, by n.
func (s tourneyRows) Joins(ctx context.Context, board string, after int64) ([]podium.Join, error) {
	rows, err := s.pool.Query(ctx, sqlstore.Joins.Postgres, board, after)
	if err != nil {
		return nil, fmt.Errorf("joins: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.Join, error) {
		j := podium.Join{Board: board}
		var at int64
		err := r.Scan(&j.Player, &j.N, &at)
		j.At = podium.FromMillis(at)
		return j, err
	})
	if err != nil {
		return nil, fmt.Errorf("joins: %w", err)
	}
	return out, nil
}

// Payouts returns every payout of a board, by player.
func (s tourneyRows) Payouts(ctx context.Context, board string) ([]podium.Payout, error) {
	rows, err := s.pool.Query(ctx, sqlstore.Payouts.Postgres, board)
	if err != nil {
		return nil, fmt.Errorf("payouts: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.Payout, error) {
		p := podium.Payout{Board: board}
		var at int64
		err := r.Scan(&p.Player, &p.Rank, &p.Points, &at)
		p.At = podium.FromMillis(at)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("payouts: %w", err)
	}
	return out, nil
}

// Settlements returns the status of every settled tournament, by board.
func (s tourneyRows) Settlements(ctx context.Context) ([]podium.Settlement, error) {
	rows, err := s.pool.Query(ctx, sqlstore.Settlements.Postgres)
	if err != nil {
		return nil, fmt.Errorf("settlements: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.Settlement, error) {
		var st podium.Settlement
		var at int64
		err := r.Scan(&st.Board, &at, &st.Runs, &st.Players, &st.Paid, &st.Epoch, &st.Holder)
		st.SettledAt = podium.FromMillis(at)
		return st, err
	})
	if err != nil {
		return nil, fmt.Errorf("settlements: %w", err)
	}
	return out, nil
}

// AcquireLease takes or renews a lease (see podium.TourneyStore) in one
// statement: the row lock orders it against every other taker and against
// the fence of a commit in flight, which holds the row until it commits.
// now is the caller's clock: nodes with skewed clocks may disagree on
// expiry by the skew, which only delays a takeover; the fence, not the
// clock, is what keeps two holders from both committing.
func (s tourneyRows) AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (podium.Lease, bool, error) {
	nowMs, until := podium.Millis(now), podium.Millis(now.Add(ttl))
	var l podium.Lease
	var exp int64
	err := s.pool.QueryRow(ctx, `INSERT INTO leases AS l (name, holder, epoch, expires_ms) VALUES ($1, $2, 1, $4)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_ms = excluded.expires_ms,
			epoch = CASE WHEN l.holder = excluded.holder AND l.expires_ms > $3 THEN l.epoch ELSE l.epoch + 1 END
		WHERE l.holder = excluded.holder OR l.expires_ms <= $3
		RETURNING holder, epoch, expires_ms`, name, holder, nowMs, until).Scan(&l.Holder, &l.Epoch, &exp)
	if errors.Is(err, pgx.ErrNoRows) {
		err = s.pool.QueryRow(ctx, sqlstore.Lease.Postgres, name).Scan(&l.Holder, &l.Epoch, &exp)
		if err != nil {
			return podium.Lease{}, false, fmt.Errorf("lease: %w", err)
		}
		l.Name, l.Expires = name, podium.FromMillis(exp)
		return l, false, nil
	}
	if err != nil {
		return podium.Lease{}, false, fmt.Errorf("lease: %w", err)
	}
	l.Name, l.Expires = name, podium.FromMillis(exp)
	return l, true, nil
}

// ReleaseLease gives a lease up if holder still has it at epoch.
func (s tourneyRows) ReleaseLease(ctx context.Context, name, holder string, epoch int64) error {
	if _, err := s.pool.Exec(ctx, sqlstore.ReleaseLease.Postgres, name, holder, epoch); err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	return nil
}
