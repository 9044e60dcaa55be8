package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/podiumhq/podium"
)

// CountSubmissions counts one player's score submissions on a board in a
// period, up to seq upTo and, unless since and until are zero, made in
// [since, until). It reads the player's rows through the index of
// migration 0070 and decodes kind and time from each rec (they are packed,
// not columns): a player's rows in one period are few.
func (s *Store) CountSubmissions(ctx context.Context, board, period, player string, upTo uint64, since, until time.Time) (int, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT rec FROM submissions INDEXED BY submissions_player WHERE board = ? AND period = ? AND player = ? AND seq <= ?",
		board, period, player, int64(min(upTo, math.MaxInt64)))
	if err != nil {
		return 0, fmt.Errorf("count submissions: %w", err)
	}
	defer rows.Close()
	bounded := !since.IsZero() || !until.IsZero()
	sub := podium.Submission{Keys: make([]int64, 0, podium.MaxKeys)}
	var rec sql.RawBytes
	n := 0
	for rows.Next() {
		if err := rows.Scan(&rec); err != nil {
			return 0, fmt.Errorf("count submissions: %w", err)
		}
		if err := decodeSubRec(rec, &sub); err != nil {
			return 0, fmt.Errorf("count submissions of %s on %s: %w", player, board, err)
		}
		if sub.Kind != podium.KindScore || bounded && (sub.At.Before(since) || !sub.At.Before(until)) {
			continue
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("count submissions: %w", err)
	}
	return n, nil
}
