package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
)

// The change feed: every change of a board, player or API key appends a
// row to changes in the transaction that makes it, and the nodes read the
// feed after the last id they applied (SharedStore.Changes).
//
// Writers of the feed serialise on the one row of change_lock: the append
// takes the next id by updating that row, which holds it locked until the
// transaction ends. A change therefore commits, and becomes visible,
// before the next writer can even number its own, so ids become visible
// in id order and a reader polling the feed never skips one. (With a
// sequence, a transaction could take id 7, commit after another took and
// committed 8, and a reader that had seen 8 would never look back for 7.)
// The lock comes after any board head a transaction locks and before the
// board, player or key row it changes: one order for every writer.

const (
	// sqlAppendChange numbers and appends one change.
	sqlAppendChange = `WITH l AS (UPDATE change_lock SET last = last + 1 RETURNING last)
		INSERT INTO changes (id, kind, key) SELECT last, $1, $2 FROM l`
	// sqlPruneChanges deletes the changes older than $1 milliseconds by
	// the server's clock (the oldest ids: a prefix of the feed) and
	// records the highest id deleted.
	sqlPruneChanges = `WITH d AS (
			DELETE FROM changes WHERE id <= (SELECT max(id) FROM changes WHERE at < clock_timestamp() - $1 * interval '1 millisecond')
			RETURNING id)
		UPDATE change_lock SET pruned = greatest(pruned, (SELECT coalesce(max(id), 0) FROM d))
		RETURNING (SELECT count(*) FROM d)`
)

// pruneEvery is how often a store prunes the change feed, at most: on the
// first metadata write after this long.
const pruneEvery = time.Hour

// queueChange queues the append of one change to b, preceded, at most
// once per pruneEvery, by the pruning of changes older than the retention
// (before: the new change is never among those pruned). Both take the
// change feed's lock; queue them after any board head the transaction
// locks and before the object's row.
func (s *Store) queueChange(b *pgx.Batch, kind podium.ChangeKind, key string) {
	now := time.Now().UnixNano()
	if next := s.nextPrune.Load(); now >= next && s.nextPrune.CompareAndSwap(next, now+int64(pruneEvery)) {
		b.Queue(sqlPruneChanges, s.retention.Milliseconds())
	}
	b.Queue(sqlAppendChange, string(kind), key)
}

// Changes returns the changes after the one with id after, oldest first,
// at most limit. If changes after after were pruned, it returns an error
// wrapping podium.ErrChangesPruned.
func (s *Store) Changes(ctx context.Context, after int64, limit int) ([]podium.Change, error) {
	if limit <= 0 {
		return nil, nil
	}
	// One statement, so one snapshot: the pruned mark and the rows agree.
	rows, err := s.pool.Query(ctx, `SELECT l.pruned, c.id, c.kind, c.key FROM change_lock l
		LEFT JOIN LATERAL (SELECT id, kind, key FROM changes WHERE id > $1 ORDER BY id LIMIT $2) c ON true`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	defer rows.Close()
	var (
		out    []podium.Change
		pruned int64
	)
	for rows.Next() {
		var (
			id        *int64
			kind, key *string
		)
		if err := rows.Scan(&pruned, &id, &kind, &key); err != nil {
			return nil, fmt.Errorf("changes: %w", err)
		}
		if id != nil {
			out = append(out, podium.Change{ID: *id, Kind: podium.ChangeKind(*kind), Key: *key})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	if after < pruned {
		return nil, fmt.Errorf("changes after %d: changes up to %d were pruned: %w", after, pruned, podium.ErrChangesPruned)
	}
	return out, nil
}

// LastChange returns the id of the newest committed change, 0 if none.
func (s *Store) LastChange(ctx context.Context) (int64, error) {
	var last int64
	if err := s.pool.QueryRow(ctx, "SELECT last FROM change_lock").Scan(&last); err != nil {
		return 0, fmt.Errorf("last change: %w", err)
	}
	return last, nil
}

// PruneChanges deletes the changes older than age, by the database
// server's clock, and returns how many it deleted. Metadata writes call it
// by themselves about once an hour with Options.ChangeRetention; a reader
// whose position it passes gets podium.ErrChangesPruned from Changes.
func (s *Store) PruneChanges(ctx context.Context, age time.Duration) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, sqlPruneChanges, age.Milliseconds()).Scan(&n); err != nil {
		return 0, fmt.Errorf("prune changes: %w", err)
	}
	return n, nil
}
