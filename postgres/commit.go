package postgres

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/podiumhq/podium"
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
// status 0, takes the first answer that comes). On any error nothing of b
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
		return commitError(err)
	}
	return nil
}

// commitError adds context to the error of a commit's statements.
func commitError(err error) error {
	if fe := fenceError(err); fe != nil { // tourney.go
		return fe
	}
	if de := decidedError(err); de != nil { // review.go
		return de
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
	w.tourney(pb, b.Tourney) // tourney.go: the lease fence runs first
	w.heads(pb, st, b.Submissions)
	w.log(pb, st, b.Submissions)
	w.deletes(pb, st, b.Deletes)
	w.pickUpserts(b.Upserts)
	w.upserts(pb, st, b.Upserts, w.pick)
	w.watermarks(pb, st, b.Watermarks)
	w.idempotency(pb, st, b.Idempotency)
	w.feed(pb, st, b.Feed)              // feed.go
	w.review(pb, b.Review, b.Decisions) // review.go
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

// writer holds the buffers of one commit; Store.scratch recycles them.
type writer struct {
	p    params
	head []podium.Watermark // one per board
	pick []int              // the indexes of the upserts to store
	idem []podium.IdempotencyRecord

	// Positions in head, pick or idem.
	boards  map[string]int
	entries map[podium.EntryRef]int
	records map[[2]string]int

	queued int // statements queued since batch began
}

func (s *Store) writer() *writer {
	if w, ok := s.scratch.Get().(*writer); ok {
		return w
	}
	return &writer{boards: map[string]int{}, entries: map[podium.EntryRef]int{}, records: map[[2]string]int{}}
}

// chunks calls queue for each run of at most maxRows of n rows.
func chunks(n int, queue func(lo, hi int)) {
	for lo := 0; lo < n; lo += maxRows {
		queue(lo, min(lo+maxRows, n))
	}
}

func (w *writer) queue(pb *pgconn.Batch, sd *pgconn.StatementDescription) {
	pb.ExecStatement(sd, w.p.values(), binaryFormat, nil)
	w.queued++
}

// heads queues the move of each board's head to the highest seq of subs,
// in board order.
func (w *writer) heads(pb *pgconn.Batch, st *statements, subs []podium.Submission) {
	if len(subs) == 0 {
		return
	}
	w.head = w.head[:0]
	clear(w.boards)
	for i := range subs {
		sub := &subs[i]
		if j, ok := w.boards[sub.Board]; ok {
			w.head[j].Seq = max(w.head[j].Seq, sub.Seq)
			continue
		}
		w.boards[sub.Board] = len(w.head)
		w.head = append(w.head, podium.Watermark{Board: sub.Board, Seq: sub.Seq})
	}
	slices.SortFunc(w.head, func(a, b podium.Watermark) int { return strings.Compare(a.Board, b.Board) })
	w.boardSeqs(pb, st.heads, w.head)
}

// boardSeqs queues sd over (board, seq) rows.
func (w *writer) boardSeqs(pb *pgconn.Batch, sd *pgconn.StatementDescription, rows []podium.Watermark) {
	chunks(len(rows), func(lo, hi int) {
		rows := rows[lo:hi]
		w.p.reset()
		w.p.beginArray(oidText, len(rows))
		for i := range rows {
			elemText(&w.p, rows[i].Board)
		}
		w.p.endArray()
		w.p.beginArray(oidInt8, len(rows))
		for i := range rows {
			w.p.elemInt8(int64(rows[i].Seq))
		}
		w.p.endArray()
		w.queue(pb, sd)
	})
}

func (w *writer) log(pb *pgconn.Batch, st *statements, subs []podium.Submission) {
	chunks(len(subs), func(lo, hi int) {
		subs := subs[lo:hi]
		n := len(subs)
		p := &w.p
		p.reset()
		p.beginArray(oidText, n)
		for i := range subs {
			elemText(p, subs[i].Board)
		}
		p.endArray()
		p.beginArray(oidInt8, n)
		for i := range subs {
			p.elemInt8(int64(subs[i].Seq))
		}
		p.endArray()
		p.beginArray(oidInt8, n)
		for i := range subs {
			p.elemInt8(podium.Millis(subs[i].At))
		}
		p.endArray()
		for k := range podium.MaxKeys {
			p.beginArray(oidInt8, n)
			for i := range subs {
				p.elemKey(subs[i].Keys, k)
			}
			p.endArray()
		}
		p.beginArray(oidInt2, n)
		for i := range subs {
			p.elemInt2(int16(subs[i].Kind))
		}
		p.endArray()
		p.beginArray(oidText, n)
		for i := range subs {
			elemText(p, subs[i].Period)
		}
		p.endArray()
		p.beginArray(oidText, n)
		for i := range subs {
			elemText(p, subs[i].Player)
		}
		p.endArray()
		p.beginArray(oidText, n)
		for i := range subs {
			p.elemMeta(subs[i].Meta)
		}
		p.endArray()
		w.queue(pb, st.log)
	})
}

func (w *writer) deletes(pb *pgconn.Batch, st *statements, dels []podium.EntryRef) {
	chunks(len(dels), func(lo, hi int) {
		dels := dels[lo:hi]
		p := &w.p
		p.reset()
		for _, field := range []func(*podium.EntryRef) string{
			func(d *podium.EntryRef) string { return d.Board },
			func(d *podium.EntryRef) string { return d.Period },
			func(d *podium.EntryRef) string { return d.Player },
		} {
			p.beginArray(oidText, len(dels))
			for i := range dels {
				elemText(p, field(&dels[i]))
			}
			p.endArray()
		}
		w.queue(pb, st.del)
	})
}

// pickUpserts sets w.pick to the indexes of the upserts of es to store:
// the last of each entry (one INSERT ... ON CONFLICT statement may not
// update a row twice), in key order. Key order makes the inserts into the
// primary key's B-tree local (about twice as fast as random order for a
// large rebuild) and locks rows in one order, so two commits writing the
// same entries cannot deadlock.
func (w *writer) pickUpserts(es []podium.Entry) {
	w.pick = w.pick[:0]
	if len(es) == 1 {
		w.pick = append(w.pick, 0)
		return
	}
	clear(w.entries)
	for i := range es {
		w.entries[entryRef(&es[i])] = i
	}
	for i := range es {
		if w.entries[entryRef(&es[i])] == i {
			w.pick = append(w.pick, i)
		}
	}
	slices.SortFunc(w.pick, func(i, j int) int {
		a, b := &es[i], &es[j]
		return cmp.Or(strings.Compare(a.Board, b.Board), strings.Compare(a.Period, b.Period), strings.Compare(a.Player, b.Player))
	})
}

// upserts queues the upserts of es that pick names, maxRows a statement.
func (w *writer) upserts(pb *pgconn.Batch, st *statements, es []podium.Entry, pick []int) {
	chunks(len(pick), func(lo, hi int) {
		pick := pick[lo:hi]
		n := len(pick)
		p := &w.p
		p.reset()
		for _, field := range []func(*podium.Entry) string{
			func(e *podium.Entry) string { return e.Board },
			func(e *podium.Entry) string { return e.Period },
			func(e *podium.Entry) string { return e.Player },
		} {
			p.beginArray(oidText, n)
			for _, i := range pick {
				elemText(p, field(&es[i]))
			}
			p.endArray()
		}
		p.beginArray(oidInt8, n)
		for _, i := range pick {
			p.elemInt8(int64(es[i].Seq))
		}
		p.endArray()
		p.beginArray(oidInt8, n)
		for _, i := range pick {
			p.elemInt8(podium.Millis(es[i].At))
		}
		p.endArray()
		for k := range podium.MaxKeys {
			p.beginArray(oidInt8, n)
			for _, i := range pick {
				p.elemKey(es[i].Keys, k)
			}
			p.endArray()
		}
		p.beginArray(oidText, n)
		for _, i := range pick {
			p.elemMeta(es[i].Meta)
		}
		p.endArray()
		p.beginArray(oidText, n) // the kept results of a best_k board
		for _, i := range pick {
			if rs := es[i].Results; len(rs) > 0 {
				elemText(p, podium.EncodeResults(rs))
			} else {
				p.elemNull()
			}
		}
		p.endArray()
		w.queue(pb, st.upsert)
	})
}

func entryRef(e *podium.Entry) podium.EntryRef {
	return podium.EntryRef{Board: e.Board, Period: e.Period, Player: e.Player}
}

// watermarks queues the last watermark of each board of wms.
func (w *writer) watermarks(pb *pgconn.Batch, st *statements, wms []podium.Watermark) {
	if len(wms) == 0 {
		return
	}
	w.head = w.head[:0]
	clear(w.boards)
	for _, wm := range wms {
		if j, ok := w.boards[wm.Board]; ok {
			w.head[j].Seq = wm.Seq
			continue
		}
		w.boards[wm.Board] = len(w.head)
		w.head = append(w.head, wm)
	}
	w.boardSeqs(pb, st.watermarks, w.head)
}

// idempotency queues recs, merged per (scope, key) as storing them one by
// one would leave them: the first record, with the first answer that came
// if it had none.
func (w *writer) idempotency(pb *pgconn.Batch, st *statements, recs []podium.IdempotencyRecord) {
	if len(recs) == 0 {
		return
	}
	w.idem = w.idem[:0]
	clear(w.records)
	for _, r := range recs {
		k := [2]string{r.Scope, r.Key}
		if j, ok := w.records[k]; ok {
			if m := &w.idem[j]; m.Status == 0 && r.Status != 0 {
				m.Status, m.Body = r.Status, r.Body
			}
			continue
		}
		w.records[k] = len(w.idem)
		w.idem = append(w.idem, r)
	}
	recs = w.idem
	chunks(len(recs), func(lo, hi int) {
		recs := recs[lo:hi]
		n := len(recs)
		p := &w.p
		p.reset()
		p.beginArray(oidText, n)
		for i := range recs {
			elemText(p, recs[i].Scope)
		}
		p.endArray()
		p.beginArray(oidText, n)
		for i := range recs {
			elemText(p, recs[i].Key)
		}
		p.endArray()
		p.beginArray(oidBytea, n)
		for i := range recs {
			elemText(p, recs[i].RequestHash)
		}
		p.endArray()
		p.beginArray(oidInt4, n)
		for i := range recs {
			p.elemInt4(int32(recs[i].Status))
		}
		p.endArray()
		p.beginArray(oidBytea, n)
		for i := range recs {
			elemText(p, recs[i].Body)
		}
		p.endArray()
		p.beginArray(oidInt8, n)
		for i := range recs {
			p.elemInt8(podium.Millis(recs[i].CreatedAt))
		}
		p.endArray()
		w.queue(pb, st.idem)
	})
	clear(w.idem) // let the bodies be collected
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
		if _, err := tx.Exec(ctx, "DELETE FROM entries WHERE board = $1", board); err != nil {
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
	tag, err := s.pool.Exec(ctx, "DELETE FROM idempotency WHERE created_ms < $1", podium.Millis(before))
	if err != nil {
		return 0, fmt.Errorf("prune idempotency: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
