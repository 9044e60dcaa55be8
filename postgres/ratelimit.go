package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium/ratelimit"
)

// RateLimits is a ratelimit.Store on the store's database: a row per
// bucket in rate_limit_buckets (migration 0060), decided and updated by
// one statement, so every node on the database shares every limit. Rows
// of full buckets are deleted by Sweep in bounded batches.
type RateLimits struct {
	s *Store
}

var (
	_ ratelimit.Store    = (*RateLimits)(nil)
	_ ratelimit.Sweeper  = (*RateLimits)(nil)
	_ ratelimit.Refunder = (*RateLimits)(nil)
)

// RateLimits returns the rate limit store on s's database.
func (s *Store) RateLimits() *RateLimits { return &RateLimits{s: s} }

// takeSQL is ratelimit.Decide as one statement: the upsert's WHERE admits
// the request (ON CONFLICT DO UPDATE locks the row, so concurrent takes of
// one bucket queue on it and never both see one TAT), RETURNING gives the
// new TAT, and old gives the TAT a refused request saw. $1 key, $2 now,
// $3 cost·T, $4 τ (all µs).
//
// synchronous_commit is off for this statement's own transaction only
// (set_config local): a bucket lost in a crash only refills, and waiting
// for the WAL flush on every request made the hot bucket's row lock the
// bottleneck (docs/BENCHMARKS.md).
const takeSQL = `
WITH cfg AS (SELECT set_config('synchronous_commit', 'off', true) AS v),
old AS (SELECT tat_us FROM rate_limit_buckets WHERE key = $1),
up AS (
	INSERT INTO rate_limit_buckets AS b (key, tat_us)
	SELECT $1, $2::bigint + $3::bigint WHERE $3::bigint <= $4::bigint
	ON CONFLICT (key) DO UPDATE SET tat_us = GREATEST(b.tat_us, $2::bigint) + $3::bigint
	WHERE GREATEST(b.tat_us, $2::bigint) + $3::bigint - $2::bigint <= $4::bigint
	RETURNING tat_us
)
SELECT (SELECT tat_us FROM up), (SELECT tat_us FROM old) FROM cfg`

// Take implements ratelimit.Store.
func (r *RateLimits) Take(ctx context.Context, key string, lim ratelimit.Limit, cost int, now time.Time) (ratelimit.Result, error) {
	us := ratelimit.Micros(now)
	if cost <= 0 { // a peek reads and writes nothing
		var tat int64
		err := r.s.pool.QueryRow(ctx, `SELECT tat_us FROM rate_limit_buckets WHERE key = $1`, key).Scan(&tat)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return ratelimit.Result{}, fmt.Errorf("postgres: rate limit: %w", err)
		}
		_, res := ratelimit.Decide(tat, us, lim, 0)
		return res, nil
	}
	var up, old *int64
	err := r.s.pool.QueryRow(ctx, takeSQL, key, us, int64(cost)*lim.Interval(), lim.Tolerance()).Scan(&up, &old)
	if err != nil {
		return ratelimit.Result{}, fmt.Errorf("postgres: rate limit: %w", err)
	}
	if up != nil {
		return ratelimit.Admitted(*up, us, lim), nil
	}
	base := us
	if old != nil {
		// The statement's snapshot: under a concurrent take this may lag
		// the row that refused us by a request, which only shifts the
		// headers of a refusal.
		base = max(*old, us)
	}
	return ratelimit.Denied(base, us, lim, cost), nil
}

// Refund implements ratelimit.Refunder (ratelimit.Refunded as one
// statement; a full bucket's row is left for Sweep).
func (r *RateLimits) Refund(ctx context.Context, key string, lim ratelimit.Limit, cost int, now time.Time) error {
	if lim.Unlimited() || cost <= 0 {
		return nil
	}
	_, err := r.s.pool.Exec(ctx, `UPDATE rate_limit_buckets SET tat_us = GREATEST(tat_us - $3::bigint, $2::bigint)
		WHERE key = $1 AND tat_us > $2::bigint`, key, ratelimit.Micros(now), int64(cost)*lim.Interval())
	if err != nil {
		return fmt.Errorf("postgres: rate limit refund: %w", err)
	}
	return nil
}

// Sweep implements ratelimit.Sweeper: it deletes at most limit rows whose
// TAT is before now.
func (r *RateLimits) Sweep(ctx context.Context, now time.Time, limit int) (int, error) {
	tag, err := r.s.pool.Exec(ctx, `DELETE FROM rate_limit_buckets WHERE key IN (
		SELECT key FROM rate_limit_buckets WHERE tat_us < $1 ORDER BY tat_us LIMIT $2 FOR UPDATE SKIP LOCKED)`,
		ratelimit.Micros(now), limit)
	if err != nil {
		return 0, fmt.Errorf("postgres: sweep rate limits: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
