package postgres

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// The statements of the write path. Each binds one array per column and
// turns them into rows with unnest, so a statement has the same text and
// the same few parameters whatever the number of rows: it is prepared once
// per connection, and no batch meets PostgreSQL's limit of 65535 bound
// parameters. A batch larger than maxRows per statement is cut into
// several statements, which bounds the size of one message.
const (
	// A board's head moves to the highest seq logged; GREATEST because a
	// batch may log seqs below the head (Commit does not require them in
	// order, and LastSeq is the highest one logged).
	sqlHeads = `INSERT INTO board_heads AS h (board, seq)
		SELECT * FROM unnest($1::text[], $2::bigint[])
		ON CONFLICT (board) DO UPDATE SET seq = greatest(h.seq, excluded.seq)`
	sqlLog = `INSERT INTO submissions (board, seq, at_ms, k1, k2, k3, k4, kind, period, player, meta)
		SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[],
			$8::smallint[], $9::text[], $10::text[], $11::text[])`
	sqlDelete = `DELETE FROM entries e USING unnest($1::text[], $2::text[], $3::text[]) AS d (board, period, player)
		WHERE e.board = d.board AND e.period = d.period AND e.player = d.player`
	sqlUpsert = `INSERT INTO entries (board, period, player, seq, at_ms, k1, k2, k3, k4, meta, results)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[],
			$8::bigint[], $9::bigint[], $10::text[], $11::text[])
		ON CONFLICT (board, period, player) DO UPDATE SET seq = excluded.seq, at_ms = excluded.at_ms,
			k1 = excluded.k1, k2 = excluded.k2, k3 = excluded.k3, k4 = excluded.k4, meta = excluded.meta,
			results = excluded.results`
	sqlWatermarks = `INSERT INTO watermarks (board, seq) SELECT * FROM unnest($1::text[], $2::bigint[])
		ON CONFLICT (board) DO UPDATE SET seq = excluded.seq`
	// A record first stored without an answer (status 0: the marker that
	// travels with the request's writes) takes the answer later; an
	// answered record never changes.
	sqlIdempotency = `INSERT INTO idempotency AS i (scope, key, request_hash, status, body, created_ms)
		SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[], $4::integer[], $5::bytea[], $6::bigint[])
		ON CONFLICT (scope, key) DO UPDATE SET status = excluded.status, body = excluded.body
		WHERE i.status = 0 AND excluded.status <> 0`
)

// maxRows is the most rows one statement of the write path binds.
const maxRows = 16384

// statements are the write path's prepared statements on one connection.
type statements struct {
	heads, log, del, upsert, watermarks, idem *pgconn.StatementDescription
	lockHeads                                 *pgconn.StatementDescription // shared.go
	feed                                      *pgconn.StatementDescription // feed.go
}

// prepare returns the write statements of conn, preparing them on first
// use (pgx keeps them per connection, so later calls are map lookups).
func prepare(ctx context.Context, conn *pgx.Conn) (*statements, error) {
	var st statements
	for _, p := range []struct {
		sd        **pgconn.StatementDescription
		name, sql string
	}{
		{&st.heads, "podium_heads", sqlHeads},
		{&st.log, "podium_log", sqlLog},
		{&st.del, "podium_delete", sqlDelete},
		{&st.upsert, "podium_upsert", sqlUpsert},
		{&st.watermarks, "podium_watermarks", sqlWatermarks},
		{&st.idem, "podium_idempotency", sqlIdempotency},
		{&st.lockHeads, "podium_lock_heads", sqlLockHeads},
		{&st.feed, "podium_feed", sqlFeed},
	} {
		sd, err := conn.Prepare(ctx, p.name, p.sql)
		if err != nil {
			return nil, fmt.Errorf("prepare %s: %w", p.name, err)
		}
		*p.sd = sd
	}
	return &st, nil
}

// Commit stores b in one transaction: the log rows (and the heads of their
// boards), then the entry deletes, then the entry upserts (a later upsert of
// the same entry wins), then the watermarks (a later one of the same board
// wins), then the idempotency records (a record whose scope and key are
// already stored keeps its first answer; a record stored without one,
// status 0, takes the first answer that comes), then the parts (a
// fencer's before the heads). A part made by another store fails the
// commit. On any error nothing of b
// is stored; a submission whose (board, seq) is already logged is such an
// error.
//
// The whole batch is one round trip: its statements are pipelined and run
// as one implicit transaction, committed when the server has them all. It
// returns once the commit is as durable as the server's synchronous_commit
// says. If ctx ends while the batch is in flight, the server is asked to
// cancel it and Commit waits briefly for its answer; only if none comes is
// the outcome unknown (as with any database), and the log then says which
// seqs were stored.
func (s *Store) Commit(ctx context.Context, b *podium.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	if err := b.Check(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if err := s.ownParts(b.Parts); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	defer conn.Release()
	st, err := prepare(ctx, conn.Conn())
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	w := s.writer()
	defer s.scratch.Put(w)
	var pb pgconn.Batch
	w.batch(&pb, st, b)
	if err := execBatch(ctx, conn.Conn().PgConn(), &pb); err != nil {
		return commitError(err, b.Parts)
	}
	return nil
}

// part is a podium.Part made by this package's Store, for the features'
// rows (feed.go, tourney.go, review.go): Commit queues its statements
// without knowing what it holds.
type part interface {
	podium.Part
	// madeBy is the store that made the part: the only one that writes it.
	madeBy() *Store
	// queue adds the part's statements to the commit's pipeline.
	queue(w *writer, pb *pgconn.Batch, st *statements)
}

// fencer is a part whose statements go before the heads: a lease fence,
// whose loss fails the transaction before anything is written
// (tourney.go).
type fencer interface{ fence() }

// errorMapper is a part whose statements raise errors of their own:
// mapError turns one into the error Commit returns (nil: not its error).
type errorMapper interface{ mapError(err error) error }

// ownParts refuses a part that this store did not make.
func (s *Store) ownParts(parts []podium.Part) error {
	for _, p := range parts {
		if sp, ok := p.(part); !ok || sp.madeBy() != s {
			return fmt.Errorf("a part (%T) was not made by this store", p)
		}
	}
	return nil
}

// checkParts refuses the parts of a board change (PutBoard, DeleteBoard)
// that Commit would refuse, before anything is written.
func (s *Store) checkParts(parts []podium.Part) error {
	if len(parts) == 0 {
		return nil
	}
	if err := (&podium.Batch{Parts: parts}).Check(); err != nil {
		return err
	}
	return s.ownParts(parts)
}

// writeParts writes parts in tx, a board change's transaction, as Commit
// queues them (the fencers first); checkParts has checked them.
func (s *Store) writeParts(ctx context.Context, tx pgx.Tx, parts []podium.Part) error {
	if len(parts) == 0 {
		return nil
	}
	st, err := prepare(ctx, tx.Conn())
	if err != nil {
		return err
	}
	w := s.writer()
	defer s.scratch.Put(w)
	w.queued = 0
	var pb pgconn.Batch
	w.parts(&pb, st, parts, true)
	w.parts(&pb, st, parts, false)
	if err := execBatch(ctx, tx.Conn().PgConn(), &pb); err != nil {
		return commitError(err, parts)
	}
	return nil
}

// commitError adds context to the error of a commit's statements: a
// part's own error as the part maps it.
func commitError(err error, parts []podium.Part) error {
	for _, p := range parts {
		if m, ok := p.(errorMapper); ok {
			if me := m.mapError(err); me != nil {
				return me
			}
		}
	}
	if code, constraint := pgCode(err); code == codeUniqueViolation && constraint == "submissions_pkey" {
		return fmt.Errorf("commit: log: a submission's (board, seq) is already logged: %w", err)
	}
	return fmt.Errorf("commit: %w", err)
}

// batch queues the statements that store b, in the order Commit documents.
// The heads go first: with several writers, locking a board's head before
// anything else is what serialises them (and heads are locked in board
// order, so two commits cannot deadlock on them).
func (w *writer) batch(pb *pgconn.Batch, st *statements, b *podium.Batch) {
	w.queued = 0
	w.parts(pb, st, b.Parts, true) // a lease fence runs first
	w.heads(pb, st, b.Submissions)
	w.log(pb, st, b.Submissions)
	w.deletes(pb, st, b.Deletes)
	w.pickUpserts(b.Upserts)
	w.upserts(pb, st, b.Upserts, w.pick)
	w.watermarks(pb, st, b.Watermarks)
	w.idempotency(pb, st, b.Idempotency)
	w.parts(pb, st, b.Parts, false)
}

// parts queues, in order, the parts that are fencers (fences true) or the
// others; ownParts has checked them.
func (w *writer) parts(pb *pgconn.Batch, st *statements, parts []podium.Part, fences bool) {
	for _, p := range parts {
		if _, f := p.(fencer); f == fences {
			p.(part).queue(w, pb, st)
		}
	}
}

// execBatch runs b and returns the first error of its statements.
func execBatch(ctx context.Context, pc *pgconn.PgConn, b *pgconn.Batch) error {
	mrr := pc.ExecBatch(ctx, b)
	var first error
	for mrr.NextResult() {
		if _, err := mrr.ResultReader().Close(); err != nil && first == nil {
			first = err
		}
	}
	if err := mrr.Close(); err != nil && first == nil {
		first = err
	}
	return first
}

// ReplaceEntries replaces every entry of board, in every period, with
// entries and sets the board's watermark, in one transaction. Every entry
// must belong to board; a later entry of the same period and player wins.
func (s *Store) ReplaceEntries(ctx context.Context, board string, entries []podium.Entry, watermark uint64) error {
	for i := range entries {
		if entries[i].Board != board {
			return fmt.Errorf("replace entries: entry %d belongs to board %q, not %q", i, entries[i].Board, board)
		}
		if err := entries[i].Check(); err != nil {
			return fmt.Errorf("replace entries: %w", err)
		}
	}
	if watermark > math.MaxInt64 {
		return fmt.Errorf("replace entries: watermark %d is out of range", watermark)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("replace entries: %w", err)
	}
	defer conn.Release()
	st, err := prepare(ctx, conn.Conn())
	if err != nil {
		return fmt.Errorf("replace entries: %w", err)
	}
	w := s.writer()
	defer s.scratch.Put(w)
	err = inWriteTx(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sqlstore.DeleteBoardEntries.Postgres, board); err != nil {
			return err
		}
		// One round trip per maxRows entries, so that a rebuild of
		// millions of entries never holds them all encoded at once.
		w.pickUpserts(entries)
		for lo := 0; lo < len(w.pick); lo += maxRows {
			var pb pgconn.Batch
			w.upserts(&pb, st, entries, w.pick[lo:min(lo+maxRows, len(w.pick))])
			if err := execBatch(ctx, conn.Conn().PgConn(), &pb); err != nil {
				return err
			}
		}
		var pb pgconn.Batch
		w.watermarks(&pb, st, []podium.Watermark{{Board: board, Seq: watermark}})
		return execBatch(ctx, conn.Conn().PgConn(), &pb)
	})
	if err != nil {
		return fmt.Errorf("replace entries: %w", err)
	}
	return nil
}

// PruneIdempotency deletes the idempotency records created before before
// and returns how many it deleted.
func (s *Store) PruneIdempotency(ctx context.Context, before time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, sqlstore.PruneIdempotency.Postgres, podium.Millis(before))
	if err != nil {
		return 0, fmt.Errorf("prune idempotency: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
