package postgres

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/podiumhq/podium"
)

var _ podium.QuotaStore = (*Store)(nil)

// quotaRows is the Store's submission counts that quotas read (podium.QuotaStore).
type quotaRows struct{ *Store }

// sqlCountSubmissions counts, per player of $3, the score submissions in a
// period up to a seq and within [since, until) in unix milliseconds,
// through the index of migration 0070.
const sqlCountSubmissions = `SELECT player, count(*) FROM submissions
	WHERE board = $1 AND period = $2 AND player = ANY($3::text[]) AND seq <= $4 AND kind = 0 AND at_ms >= $5 AND at_ms < $6
	GROUP BY player`

// CountSubmissions counts, per player, the score submissions on a board in
// a period up to seq upTo and, unless since and until are zero, made in
// [since, until), in one statement. A writer holding the board's head lock
// gets exact counts: no other transaction can log to the board meanwhile.
func (s quotaRows) CountSubmissions(ctx context.Context, board, period string, players []string, upTo uint64, since, until time.Time) (map[string]int, error) {
	out := map[string]int{}
	if len(players) == 0 {
		return out, nil
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !since.IsZero() || !until.IsZero() {
		lo, hi = since.UnixMilli(), until.UnixMilli()
	}
	rows, err := s.pool.Query(ctx, sqlCountSubmissions, board, period, players, int64(min(upTo, math.MaxInt64)), lo, hi)
	if err != nil {
		return nil, fmt.Errorf("count submissions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			player string
			n      int64
		)
		if err := rows.Scan(&player, &n); err != nil {
			return nil, fmt.Errorf("count submissions: %w", err)
		}
		out[player] = int(n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count submissions: %w", err)
	}
	return out, nil
}
