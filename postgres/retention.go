package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

var _ podium.RetentionStore = (*Store)(nil)

// PrunePeriods deletes at most limit rows of a board's periods before
// before, in one transaction (see podium.RetentionStore). It takes no
// lock of the board's writers (its head row): the rows it deletes are
// ones no writer touches, so scores go on meanwhile. Two nodes running it
// at once delete the same rows, the second waiting on the first's row
// locks and then finding them gone.
func (s *Store) PrunePeriods(ctx context.Context, board, before string, limit int) (int, error) {
	if limit < 1 {
		return 0, nil
	}
	var n int
	err := inWriteTx(ctx, s.pool, func(tx pgx.Tx) error {
		n = 0
		tag, err := tx.Exec(ctx, sqlstore.PruneEntries.Postgres, board, before, board, before, limit)
		if err != nil {
			return fmt.Errorf("entries: %w", err)
		}
		n = int(tag.RowsAffected())
		rest := limit - n
		if rest <= 0 {
			return nil
		}
		var last int64
		if err := tx.QueryRow(ctx, sqlstore.LogLastSeq.Postgres, board).Scan(&last); err != nil {
			return fmt.Errorf("log: %w", err)
		}
		rows, err := tx.Query(ctx, sqlstore.LogHead.Postgres, board, rest)
		if err != nil {
			return fmt.Errorf("log: %w", err)
		}
		var (
			seqs    []uint64
			periods []string
		)
		for rows.Next() {
			var (
				seq    int64
				period string
			)
			if err := rows.Scan(&seq, &period); err != nil {
				rows.Close()
				return fmt.Errorf("log: %w", err)
			}
			if period >= before {
				break // the first kept row ends the batch
			}
			seqs, periods = append(seqs, uint64(seq)), append(periods, period)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("log: %w", err)
		}
		if from, to, ok := podium.PruneStep(seqs, periods, before, uint64(last)); ok {
			tag, err := tx.Exec(ctx, sqlstore.PruneLog.Postgres, board, int64(from), int64(to))
			if err != nil {
				return fmt.Errorf("log: %w", err)
			}
			n += int(tag.RowsAffected())
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune periods: %w", err)
	}
	return n, nil
}
