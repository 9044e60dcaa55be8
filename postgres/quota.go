package postgres

import (
	"context"
	"fmt"
	"math"
	"time"
)

// sqlCountSubmissions counts a player's score submissions in a period up to
// a seq and within [since, until) in unix milliseconds, through the index
// of migration 0070.
const sqlCountSubmissions = `SELECT count(*) FROM submissions
	WHERE board = $1 AND period = $2 AND player = $3 AND seq <= $4 AND kind = 0 AND at_ms >= $5 AND at_ms < $6`

// CountSubmissions counts one player's score submissions on a board in a
// period, up to seq upTo and, unless since and until are zero, made in
// [since, until). A writer holding the board's head lock gets an exact
// count: no other transaction can log to the board meanwhile.
func (s *Store) CountSubmissions(ctx context.Context, board, period, player string, upTo uint64, since, until time.Time) (int, error) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !since.IsZero() || !until.IsZero() {
		lo, hi = since.UnixMilli(), until.UnixMilli()
	}
	var n int64
	err := s.pool.QueryRow(ctx, sqlCountSubmissions, board, period, player, int64(min(upTo, math.MaxInt64)), lo, hi).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count submissions: %w", err)
	}
	return int(n), nil
}
