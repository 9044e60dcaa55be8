package sqlite

import (
	"context"
	"fmt"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

var _ podium.RetentionStore = (*Store)(nil)

// PrunePeriods deletes at most limit rows of a board's periods before
// before, in one transaction (see podium.RetentionStore). It holds the
// write connection for that transaction only, so the writer's commits
// wait at most one batch.
func (s *Store) PrunePeriods(ctx context.Context, board, before string, limit int) (int, error) {
	if limit < 1 {
		return 0, nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("prune periods: %w", err)
	}
	defer rollback(tx)
	res, err := tx.ExecContext(ctx, sqlstore.PruneEntries.SQLite, board, before, board, before, limit)
	if err != nil {
		return 0, fmt.Errorf("prune periods: entries: %w", err)
	}
	k, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("prune periods: entries: %w", err)
	}
	n := int(k)
	if rest := limit - n; rest > 0 {
		var last uint64
		if err := tx.QueryRowContext(ctx, sqlstore.LogLastSeq.SQLite, board).Scan(&last); err != nil {
			return 0, fmt.Errorf("prune periods: log: %w", err)
		}
		rows, err := tx.QueryContext(ctx, sqlstore.LogHead.SQLite, board, rest)
		if err != nil {
			return 0, fmt.Errorf("prune periods: log: %w", err)
		}
		var (
			seqs    []uint64
			periods []string
		)
		for rows.Next() {
			var (
				seq    uint64
				period string
			)
			if err := rows.Scan(&seq, &period); err != nil {
				rows.Close()
				return 0, fmt.Errorf("prune periods: log: %w", err)
			}
			if period >= before {
				break // the first kept row ends the batch
			}
			seqs, periods = append(seqs, seq), append(periods, period)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, fmt.Errorf("prune periods: log: %w", err)
		}
		if from, to, ok := podium.PruneStep(seqs, periods, before, last); ok {
			res, err := tx.ExecContext(ctx, sqlstore.PruneLog.SQLite, board, from, to)
			if err != nil {
				return 0, fmt.Errorf("prune periods: log: %w", err)
			}
			k, err := res.RowsAffected()
			if err != nil {
				return 0, fmt.Errorf("prune periods: log: %w", err)
			}
			n += int(k)
		}
	}
	if n == 0 {
		return 0, nil // nothing written: nothing to commit or sync
	}
	if err := s.commitTx(tx); err != nil {
		return 0, fmt.Errorf("prune periods: %w", err)
	}
	return n, s.durable(ctx)
}
