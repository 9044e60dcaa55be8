package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// Shared mode: several podium nodes write one database (podium.SharedStore).
//
// A write transaction (Begin) locks the head rows of the boards it writes,
// in id order, with SELECT ... FOR UPDATE, pipelined with its BEGIN: one
// round trip. The writers of a board therefore take turns, and two writers
// never deadlock on heads. Commit pipelines the batch's statements with
// the COMMIT: one more round trip. lock_timeout bounds how long Begin
// waits behind another node, and idle_in_transaction_session_timeout ends
// the transaction of a node that paused while holding a board, so that it
// cannot commit later (Options).
//
// Lock order, for every transaction of this package: docs/LOCKS.md
// ("Database locks").

// sqlLockHeads locks the head rows of the named boards. ORDER BY puts the
// locking after the sort, so the rows are locked in id order (the "C"
// collation: byte order, as Go sorts strings).
const sqlLockHeads = `SELECT board, seq, gen FROM board_heads WHERE board = ANY($1::text[]) ORDER BY board FOR UPDATE`

// SQLSTATEs the write transaction tells apart.
const codeLockNotAvailable = "55P03" // lock_timeout

// head is a board's head as a transaction holds it.
type head struct {
	seq, gen uint64
	ok       bool // the board exists (its head row is locked)
}

// writeTx is a podium.WriteTx: an explicit transaction on a connection of
// its own.
type writeTx struct {
	s     *Store
	conn  *pgxpool.Conn
	st    *statements
	heads map[string]head // every board named in Begin
	done  bool
	// lastChange is the change feed position read after the locks.
	lastChange int64
	// err is why the server aborted the transaction (a statement failed):
	// then only Rollback is left.
	err error
}

var _ podium.WriteTx = (*writeTx)(nil)

// Begin starts a write transaction holding the head rows of boards, taken
// in id order. A board that does not exist is not locked: Head reports it
// missing, and PutBoard may create it. Waiting longer than the lock
// timeout for a board another transaction holds is ECodeUnavailable.
func (s *Store) Begin(ctx context.Context, boards []string) (podium.WriteTx, error) {
	ids := slices.Clone(boards)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	st, err := prepare(ctx, conn.Conn())
	if err != nil {
		conn.Release()
		return nil, fmt.Errorf("begin: %w", err)
	}
	tx := &writeTx{s: s, conn: conn, st: st, heads: make(map[string]head, len(ids))}
	var pb pgconn.Batch
	pb.ExecParams("BEGIN", nil, nil, nil, nil)
	if len(ids) > 0 {
		for _, id := range ids {
			tx.heads[id] = head{}
		}
		var p params
		p.beginArray(oidText, len(ids))
		for _, id := range ids {
			elemText(&p, id)
		}
		p.endArray()
		pb.ExecStatement(st.lockHeads, p.values(), binaryFormat, binaryFormat)
	}
	// After the locks, in the same round trip: the feed position that every
	// change committed before them has reached.
	pb.ExecParams(sqlLastChange, nil, nil, nil, binaryFormat)
	mrr := conn.Conn().PgConn().ExecBatch(ctx, &pb)
	var first error
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		last := rr.FieldDescriptions() != nil && len(rr.FieldDescriptions()) == 1
		for rr.NextRow() {
			var err error
			if last {
				tx.lastChange, err = int8Value(rr.Values()[0])
			} else {
				err = tx.readHead(rr.Values())
			}
			if err != nil && first == nil {
				first = err
			}
		}
		if _, err := rr.Close(); err != nil && first == nil {
			first = err
		}
	}
	if err := mrr.Close(); err != nil && first == nil {
		first = err
	}
	if first != nil {
		tx.Rollback()
		if code, _ := pgCode(first); code == codeLockNotAvailable {
			return nil, errHeld()
		}
		return nil, fmt.Errorf("begin: %w", first)
	}
	return tx, nil
}

// errHeld is the error of a write that waited for a board longer than the
// lock timeout.
func errHeld() error {
	return podium.Errorf(podium.ECodeUnavailable, "another writer held a board of this write for longer than the lock timeout; nothing was applied, retry shortly")
}

// readHead decodes one row of sqlLockHeads.
func (tx *writeTx) readHead(v [][]byte) error {
	if len(v) != 3 {
		return fmt.Errorf("head row has %d columns", len(v))
	}
	seq, err := int8Value(v[1])
	if err != nil {
		return err
	}
	gen, err := int8Value(v[2])
	if err != nil {
		return err
	}
	tx.heads[string(v[0])] = head{seq: uint64(seq), gen: uint64(gen), ok: true}
	return nil
}

// sqlLastChange reads the change feed position (changes.go).
const sqlLastChange = "SELECT last FROM change_lock"

// LastChange is the change feed position read after the locks were taken.
func (tx *writeTx) LastChange() int64 { return tx.lastChange }

// Head returns the last logged seq and the generation of a board the
// transaction holds; ok is false for a board that does not exist (or was
// not named in Begin).
func (tx *writeTx) Head(board string) (seq, gen uint64, ok bool) {
	h := tx.heads[board]
	return h.seq, h.gen, h.ok
}

// usable returns why no statement may be sent, or nil.
func (tx *writeTx) usable() error {
	switch {
	case tx.done:
		return errors.New("the transaction has ended")
	case tx.err != nil:
		return fmt.Errorf("an earlier statement of the transaction failed: %w", tx.err)
	}
	return nil
}

// failed records the error of a statement: one from the server, or a lost
// connection, aborts the transaction.
func (tx *writeTx) failed(err error) error {
	if err != nil && tx.err == nil {
		tx.err = err
	}
	return err
}

// Log calls fn for every logged submission of a board with a seq above
// after, in seq order, as the transaction sees the log. The *Submission is
// reused between calls; an error from fn stops the scan and is returned
// unwrapped.
func (tx *writeTx) Log(ctx context.Context, board string, after uint64, fn func(*podium.Submission) error) error {
	if err := tx.usable(); err != nil {
		return fmt.Errorf("log: %w", err)
	}
	if after > math.MaxInt64 {
		return nil
	}
	p, oids := logParams(board, after)
	rr := tx.conn.Conn().PgConn().ExecParams(ctx, sqlReadLog, p.values(), oids, binaryFormat, binaryFormat)
	row := logRow(board, fn)
	for rr.NextRow() {
		if err := row(rr.Values()); err != nil {
			if _, cerr := rr.Close(); cerr != nil {
				tx.failed(cerr)
			}
			if ferr := stopped(err); ferr != nil {
				return ferr // the callback's own error
			}
			return fmt.Errorf("log: %w", err)
		}
	}
	if _, err := rr.Close(); err != nil {
		return fmt.Errorf("log: %w", tx.failed(err))
	}
	return nil
}

// sqlIdempotencyLocks takes a transaction-level advisory lock per key, in
// key order (the OFFSET 0 keeps the sort below the locking). The lock's
// key is a hash of the schema, scope and key: a collision only makes two
// writers take turns.
const sqlIdempotencyLocks = `SELECT pg_advisory_xact_lock(k) FROM (
	SELECT DISTINCT hashtextextended(format('%s/%s/%s', current_schema(), r.scope, r.key), 0) AS k
	FROM unnest($1::text[], $2::text[]) AS r (scope, key) ORDER BY k OFFSET 0) l`

// Idempotency returns the stored records among refs, and holds their keys
// until the transaction ends (an advisory lock each), so that writers of
// other boards that look up one key take turns.
func (tx *writeTx) Idempotency(ctx context.Context, refs []podium.IdempotencyRef) ([]podium.IdempotencyRecord, error) {
	if err := tx.usable(); err != nil {
		return nil, fmt.Errorf("idempotency: %w", err)
	}
	if len(refs) == 0 {
		return nil, nil
	}
	scopes, keys := make([]string, len(refs)), make([]string, len(refs))
	for i, r := range refs {
		scopes[i], keys[i] = r.Scope, r.Key
	}
	var b pgx.Batch
	b.Queue(sqlIdempotencyLocks, scopes, keys)
	var out []podium.IdempotencyRecord
	b.Queue(`SELECT scope, key, request_hash, status, body, created_ms FROM idempotency
		WHERE (scope, key) IN (SELECT * FROM unnest($1::text[], $2::text[])) ORDER BY scope, key`, scopes, keys).
		Query(func(rows pgx.Rows) error {
			var err error
			out, err = pgx.CollectRows(rows, scanRecord)
			return err
		})
	if err := tx.conn.SendBatch(ctx, &b).Close(); err != nil {
		tx.failed(err)
		if code, _ := pgCode(err); code == codeLockNotAvailable {
			return nil, errHeld()
		}
		return nil, fmt.Errorf("idempotency: %w", err)
	}
	return out, nil
}

// PutBoard creates or replaces a board named in Begin and sets b.Gen. A
// new board gets its head (seq 0) and a new generation; an existing one a
// new generation when its keys, mode or reset change. A board that
// another transaction created since Begin looked is ECodeConflict (the
// transaction is then aborted).
func (tx *writeTx) PutBoard(ctx context.Context, b *podium.Board) error {
	if err := tx.usable(); err != nil {
		return fmt.Errorf("put board: %w", err)
	}
	h, named := tx.heads[b.ID]
	if !named {
		return fmt.Errorf("put board: board %s was not named in Begin", b.ID)
	}
	body, err := boardJSON(b)
	if err != nil {
		return fmt.Errorf("put board: %w", err)
	}
	var batch pgx.Batch
	gen := int64(h.gen)
	if h.ok {
		batch.Queue(sqlNewGen, b.ID, body).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				if err := rows.Scan(&gen); err != nil {
					return err
				}
			}
			return rows.Err()
		})
	} else {
		batch.Queue(sqlNewHead+" RETURNING gen", b.ID).QueryRow(func(r pgx.Row) error { return r.Scan(&gen) })
	}
	tx.s.queueChange(&batch, podium.ChangeBoard, b.ID)
	batch.Queue(sqlstore.PutBoard.Postgres, b.ID, body, podium.Millis(b.CreatedAt), podium.Millis(b.UpdatedAt))
	if err := tx.conn.SendBatch(ctx, &batch).Close(); err != nil {
		tx.failed(err)
		code, constraint := pgCode(err)
		switch {
		case code == codeUniqueViolation && constraint == "board_heads_pkey":
			return podium.Errorf(podium.ECodeConflict, "board %q was created by another request at the same time; retry", b.ID)
		case code == codeLockNotAvailable:
			return errHeld()
		}
		return fmt.Errorf("put board: %w", err)
	}
	if !h.ok {
		h = head{ok: true}
	}
	h.gen = uint64(gen)
	tx.heads[b.ID] = h
	b.Gen = h.gen
	return nil
}

// DeleteBoard removes a board named in Begin with its head, log, entries
// and watermark. A missing board is ECodeBoardNotFound.
func (tx *writeTx) DeleteBoard(ctx context.Context, id string) error {
	if err := tx.usable(); err != nil {
		return fmt.Errorf("delete board: %w", err)
	}
	h, named := tx.heads[id]
	if !named {
		return fmt.Errorf("delete board: board %s was not named in Begin", id)
	}
	if !h.ok {
		return podium.Errorf(podium.ECodeBoardNotFound, "board %q does not exist", id)
	}
	var b pgx.Batch
	tx.s.queueChange(&b, podium.ChangeBoard, id)
	queueDeleteBoard(&b, id)
	if err := tx.conn.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("delete board: %w", tx.failed(err))
	}
	tx.heads[id] = head{}
	return nil
}

// Commit stores b as Store.Commit does, moves the heads of the boards it
// logs for, and commits, in one round trip; the transaction ends whatever
// happens. Every submission must be for a board the transaction holds,
// and a board's seqs must follow its head in order (head+1, head+2, ...);
// a batch that breaks this is refused whole, before anything is sent (a
// fence against a bug: seqs are never reused or skipped). When the
// connection fails once the COMMIT may have reached the server, the error
// wraps podium.ErrOutcomeUnknown; any other error means nothing was
// stored.
func (tx *writeTx) Commit(ctx context.Context, b *podium.Batch) error {
	if err := tx.usable(); err != nil {
		tx.Rollback()
		return fmt.Errorf("commit: %w", err)
	}
	if err := tx.fence(b); err != nil {
		tx.Rollback()
		return fmt.Errorf("commit: %w", err)
	}
	pc := tx.conn.Conn().PgConn()
	if err := ctx.Err(); err != nil {
		tx.Rollback()
		return fmt.Errorf("commit: %w", err)
	}
	if pc.IsClosed() {
		tx.Rollback()
		return errors.New("commit: the connection was lost before the commit was sent")
	}
	w := tx.s.writer()
	defer tx.s.scratch.Put(w)
	var pb pgconn.Batch
	w.batch(&pb, tx.st, b)
	at := w.queued // the COMMIT's position in the pipeline
	pb.ExecParams("COMMIT", nil, nil, nil, nil)
	failedAt, err := execCounted(ctx, pc, &pb)
	if err == nil {
		tx.done = true
		tx.conn.Release()
		return nil
	}
	if !storedNothing(err, failedAt, at) {
		tx.done = true
		tx.conn.Release() // in an unknown state: the pool closes it
		return podium.OutcomeUnknown(fmt.Errorf("commit: %w", err))
	}
	tx.failed(err)
	tx.Rollback()
	return commitError(err, b.Parts)
}

// fence checks that every submission of b is for a board the transaction
// holds and continues its head.
func (tx *writeTx) fence(b *podium.Batch) error {
	if err := b.Check(); err != nil {
		return err
	}
	if err := tx.s.ownParts(b.Parts); err != nil {
		return err
	}
	next := map[string]uint64{}
	for i := range b.Submissions {
		sub := &b.Submissions[i]
		want, ok := next[sub.Board]
		if !ok {
			h := tx.heads[sub.Board]
			if !h.ok {
				return fmt.Errorf("board %s is not held by this transaction", sub.Board)
			}
			want = h.seq + 1
		}
		if sub.Seq != want {
			return fmt.Errorf("seq %d of board %s does not follow the board's head (want %d)", sub.Seq, sub.Board, want)
		}
		next[sub.Board] = want + 1
	}
	return nil
}

// execCounted runs a pipeline and returns its first error with the
// position of the statement it belongs to (statements before it
// succeeded).
func execCounted(ctx context.Context, pc *pgconn.PgConn, b *pgconn.Batch) (int, error) {
	mrr := pc.ExecBatch(ctx, b)
	n := 0
	for mrr.NextResult() {
		if _, err := mrr.ResultReader().Close(); err != nil {
			mrr.Close()
			return n, err
		}
		n++
	}
	return n, mrr.Close()
}

// storedNothing reports whether a pipeline whose COMMIT is statement
// commitAt certainly stored nothing, given its first error and where it
// came: the server reported an error before the COMMIT (the rest of the
// pipeline is then skipped), or the COMMIT itself failed with an ERROR
// (the server rolled back). A lost connection, or a FATAL at the COMMIT,
// leaves the outcome unknown: the server may have committed before the
// answer was lost. (pgconn.SafeToRetry cannot tell: a connection lost
// while reading the answers is reported as "conn closed", an error it
// deems safe to retry; TestCommitOutcomeUnknown.)
func storedNothing(err error, failedAt, commitAt int) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	return failedAt < commitAt || failedAt == commitAt && pe.Severity == "ERROR"
}

// Rollback ends the transaction without storing anything; after Commit or
// Rollback it does nothing.
func (tx *writeTx) Rollback() {
	if tx.done {
		return
	}
	tx.done = true
	pc := tx.conn.Conn().PgConn()
	if !pc.IsClosed() && pc.TxStatus() != 'I' {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		pc.Exec(ctx, "ROLLBACK").Close()
		cancel()
	}
	tx.conn.Release() // a connection still in a transaction is closed
}

// Heads returns the last logged seq of every board.
func (s *Store) Heads(ctx context.Context) (map[string]uint64, error) {
	rows, err := s.pool.Query(ctx, "SELECT board, seq FROM board_heads")
	if err != nil {
		return nil, fmt.Errorf("heads: %w", err)
	}
	defer rows.Close()
	out := map[string]uint64{}
	for rows.Next() {
		var board string
		var seq int64
		if err := rows.Scan(&board, &seq); err != nil {
			return nil, fmt.Errorf("heads: %w", err)
		}
		out[board] = uint64(seq)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("heads: %w", err)
	}
	return out, nil
}
