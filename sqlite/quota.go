package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/podiumhq/podium"
)

var _ podium.QuotaStore = (*Store)(nil)

// quotaRows is the Store's submission counts that quotas read (podium.QuotaStore).
type quotaRows struct{ *Store }

// countChunk bounds the players of one count query (SQLite binds each as
// a variable).
const countChunk = 500

const (
	countIndexed = "SELECT player, rec FROM submissions INDEXED BY submissions_player WHERE board = ? AND period = ? AND seq <= ? AND px IS NOT 0 AND player IN (?"
	countScan    = "SELECT player, rec FROM submissions WHERE board = ? AND period = ? AND seq <= ? AND player IN (?"
)

// CountSubmissions counts, per player, the score submissions on a board in
// a period up to seq upTo and, unless since and until are zero, made in
// [since, until). It reads the players' rows through the player index
// (player_index.go), named: on a large log the planner otherwise preferred
// the primary key's seq range and read the board's whole log. Kind and
// time are packed in rec, so they are decoded here; a player's rows in
// one period are few.
func (s quotaRows) CountSubmissions(ctx context.Context, board, period string, players []string, upTo uint64, since, until time.Time) (map[string]int, error) {
	out := map[string]int{}
	bounded := !since.IsZero() || !until.IsZero()
	// A board with a quota is in the player index; another board (a
	// count asked for anyway, or while its backfill runs) is read by seq.
	useIndex := s.indexOf(board) == indexed
	sub := podium.Submission{Keys: make([]int64, 0, podium.MaxKeys)}
	for len(players) > 0 {
		chunk := players[:min(len(players), countChunk)]
		players = players[len(chunk):]
		args := make([]any, 0, len(chunk)+3)
		args = append(args, board, period, int64(min(upTo, math.MaxInt64)))
		for _, p := range chunk {
			args = append(args, p)
		}
		q := countIndexed
		if !useIndex {
			q = countScan
		}
		q += strings.Repeat(",?", len(chunk)-1) + ")"
		rows, err := s.r.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("count submissions: %w", err)
		}
		var (
			player string
			rec    sql.RawBytes
		)
		for rows.Next() {
			if err := rows.Scan(&player, &rec); err != nil {
				rows.Close()
				return nil, fmt.Errorf("count submissions: %w", err)
			}
			if err := decodeSubRec(rec, &sub); err != nil {
				rows.Close()
				return nil, fmt.Errorf("count submissions of %s on %s: %w", player, board, err)
			}
			if sub.Kind != podium.KindScore || bounded && (sub.At.Before(since) || !sub.At.Before(until)) {
				continue
			}
			out[player]++
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("count submissions: %w", err)
		}
	}
	return out, nil
}
