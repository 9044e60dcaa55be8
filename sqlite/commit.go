package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// chunkSizes are the rows per INSERT statement that Commit uses, largest
// first; a batch is cut into as many of the largest as fit, then smaller
// ones, so that every statement is prepared once. One 64-row statement
// binds the same values as 64 one-row statements but runs one statement:
// `go test -bench Commit1000 ./sqlite -args -chunks` compares sizes (64 was
// about 1.8x faster than row at a time, 128 no better).
var chunkSizes = []int{64, 16, 4, 1}

const (
	insertSubmission = "INSERT INTO submissions (board, period, px, seq, player, rec, meta) VALUES "
	// A statement of the log binds its run's board, period and px once,
	// as ?1, ?2 and ?3, and each row's seq, player, rec and meta after
	// them: 4 values a row instead of 7. The pure-Go driver copies every
	// text and blob into C memory, binds it, and unbinds and frees it
	// after the statement, so a value not bound is work not done (the
	// log's inserts were about a third of a server's CPU under batch
	// load, most of it binding; docs/ARCHITECTURE.md, "The log's
	// statements"). The numbered parameters come first in every row: a
	// bare ? takes the number after the largest seen so far, so the
	// first row's seq is ?4. A run without a meta leaves the column out
	// (NULL, as metaArg stores an empty one): a value less a row.
	submissionRow = "(?1,?2,?3,?,?,?,?)"
	insertSubBare = "INSERT INTO submissions (board, period, px, seq, player, rec) VALUES "
	subBareRow    = "(?1,?2,?3,?,?,?)"
	upsertEntry   = "INSERT INTO entries (board, period, player, rec, meta, results) VALUES "
	entryRow      = "(?1,?2,?,?,?,?)" // a run's board and period once, as the log's

	upsertEntryEnd = " ON CONFLICT (board, period, player) DO UPDATE SET rec = excluded.rec, meta = excluded.meta, results = excluded.results"
	insertIdem     = "INSERT INTO idempotency (scope, key, request_hash, status, body, created_ms) VALUES "
	idemRow        = "(?,?,?,?,?,?)"
	// A record first stored without an answer (status 0: the marker that
	// travels with the request's writes) takes the answer later; an
	// answered record never changes.
	insertIdemEnd = " ON CONFLICT (scope, key) DO UPDATE SET status = excluded.status, body = excluded.body" +
		" WHERE idempotency.status = 0 AND excluded.status <> 0"
	setWatermark = "INSERT INTO watermarks (board, seq) VALUES (?, ?) ON CONFLICT (board) DO UPDATE SET seq = excluded.seq"
	deleteEntry  = "DELETE FROM entries WHERE board = ? AND period = ? AND player = ?"
)

// writeStmts are the statements of the commit path, prepared once on the
// write connection. sub, subBare (the log without meta), entry and idem
// hold one statement per chunkSizes.
type writeStmts struct {
	sub, subBare []*sql.Stmt
	entry, idem  []*sql.Stmt
	feed         []*sql.Stmt // feed.go
	whEvent      []*sql.Stmt // webhooks.go
	whDelivery   []*sql.Stmt
	del          *sql.Stmt
	board        *sql.Stmt // admin.go: a board's row (parsing it again was 12% of a PUT's CPU)
}

func (ws *writeStmts) prepare(db *sql.DB) error {
	prep := func(q string) (*sql.Stmt, error) { return db.Prepare(q) }
	for _, n := range chunkSizes {
		st, err := prep(insertSubmission + rows(submissionRow, n))
		if err != nil {
			return err
		}
		ws.sub = append(ws.sub, st)
		if st, err = prep(insertSubBare + rows(subBareRow, n)); err != nil {
			return err
		}
		ws.subBare = append(ws.subBare, st)
		if st, err = prep(upsertEntry + rows(entryRow, n) + upsertEntryEnd); err != nil {
			return err
		}
		ws.entry = append(ws.entry, st)
		if st, err = prep(insertIdem + rows(idemRow, n) + insertIdemEnd); err != nil {
			return err
		}
		ws.idem = append(ws.idem, st)
		if st, err = prep(insertFeed + rows(feedRow, n) + insertFeedEnd); err != nil {
			return err
		}
		ws.feed = append(ws.feed, st)
		if st, err = prep(insertWebhookEvent + rows(webhookEventRow, n) + insertWebhookEventEnd); err != nil {
			return err
		}
		ws.whEvent = append(ws.whEvent, st)
		if st, err = prep(insertWebhookDelivery + rows(webhookDeliveryRow, n) + insertWebhookDeliveryEnd); err != nil {
			return err
		}
		ws.whDelivery = append(ws.whDelivery, st)
	}
	var err error
	if ws.del, err = prep(deleteEntry); err != nil {
		return err
	}
	ws.board, err = prep(sqlstore.PutBoard.SQLite)
	return err
}

func (ws *writeStmts) close() {
	for _, group := range [][]*sql.Stmt{ws.sub, ws.subBare, ws.entry, ws.idem, ws.feed, ws.whEvent, ws.whDelivery, {ws.del, ws.board}} {
		for _, st := range group {
			if st != nil {
				st.Close()
			}
		}
	}
}

func rows(row string, n int) string {
	return strings.TrimSuffix(strings.Repeat(row+",", n), ",")
}

// Commit stores b in one transaction: the log rows, then the entry deletes,
// then the entry upserts (a later upsert of the same entry wins), then the
// watermarks, then the idempotency records (a record whose scope and key are already stored
// keeps its first answer; a record stored without one, status 0, takes
// the first answer that comes), then the parts (a fencer's before the
// log). A part made by another store fails the commit. It returns once the transaction is committed as
// durably as Options.Sync says. On any error nothing of b is stored; a
// submission whose (board, seq) is already logged is such an error.
func (s *Store) Commit(ctx context.Context, b *podium.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	ticket, err := s.CommitDeferred(ctx, b)
	if err != nil {
		return err
	}
	return s.Sync(ctx, ticket)
}

// commit is one transaction of Commit, without the wait for the disk. A
// transaction that fails for lack of space is tried once more if a
// checkpoint of the WAL freed some (wal.go): nothing of it was stored.
func (s *Store) commit(ctx context.Context, b *podium.Batch) error {
	if err := b.Check(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if err := s.ownParts(b.Parts); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.commitLocked(ctx, b)
	if s.afterWrite(ctx, err, b.Len()) {
		err = s.commitLocked(ctx, b)
		s.afterWrite(ctx, err, b.Len())
	}
	return err
}

// commitLocked is commit's transaction; the caller holds wmu.
func (s *Store) commitLocked(ctx context.Context, b *podium.Batch) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	defer rollback(tx)
	if err := writeParts(ctx, tx, b.Parts, true); err != nil { // fences first
		return fmt.Errorf("commit: %w", err)
	}
	if err := s.insertSubmissions(ctx, tx, b.Submissions); err != nil {
		return fmt.Errorf("commit: log: %w", err)
	}
	if len(b.Deletes) > 0 {
		del := tx.StmtContext(ctx, s.ws.del)
		for _, d := range b.Deletes {
			if _, err := del.ExecContext(ctx, d.Board, d.Period, d.Player); err != nil {
				return fmt.Errorf("commit: delete entry: %w", err)
			}
		}
	}
	if err := s.upsertEntries(ctx, tx, b.Upserts); err != nil {
		return fmt.Errorf("commit: entries: %w", err)
	}
	for _, w := range b.Watermarks {
		if _, err := tx.ExecContext(ctx, setWatermark, w.Board, int64(w.Seq)); err != nil {
			return fmt.Errorf("commit: watermark: %w", err)
		}
	}
	if err := s.insertIdempotency(ctx, tx, b.Idempotency); err != nil {
		return fmt.Errorf("commit: idempotency: %w", err)
	}
	if err := writeParts(ctx, tx, b.Parts, false); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if err := commitOutcome(tx); err != nil { // commit reclaims the WAL on a full disk
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// part is a podium.Part made by this package's Store, for the features'
// rows (feed.go, tourney.go, review.go): Commit writes it in its
// transaction without knowing what it holds.
type part interface {
	podium.Part
	// madeBy is the store that made the part: the only one that writes it.
	madeBy() *Store
	// write stores the rows in commit's transaction, the caller holding
	// wmu; its error names the part ("feed: ...").
	write(ctx context.Context, tx *sql.Tx) error
}

// fencer is a part whose rows go before the log: a lease fence, whose
// loss fails the transaction before anything is written (tourney.go).
type fencer interface{ fence() }

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

// writeAllParts writes parts as Commit does, the fencers first, in a
// board change's transaction; checkParts has checked them.
func writeAllParts(ctx context.Context, tx *sql.Tx, parts []podium.Part) error {
	if err := writeParts(ctx, tx, parts, true); err != nil {
		return err
	}
	return writeParts(ctx, tx, parts, false)
}

// writeParts writes, in order, the parts that are fencers (fences true)
// or the others; ownParts has checked them.
func writeParts(ctx context.Context, tx *sql.Tx, parts []podium.Part, fences bool) error {
	for _, p := range parts {
		if _, f := p.(fencer); f != fences {
			continue
		}
		if err := p.(part).write(ctx, tx); err != nil {
			return err
		}
	}
	return nil
}

// execChunks inserts n rows with stmts (one per chunkSizes), add appending
// the arguments of row i after head, the arguments every row shares (a
// statement with numbered parameters, as the log's).
func (s *Store) execChunks(ctx context.Context, tx *sql.Tx, stmts []*sql.Stmt, n int, head []any, add func(args []any, i int) []any) error {
	var txStmts [8]*sql.Stmt
	for i := 0; i < n; {
		k := 0
		for chunkSizes[k] > n-i {
			k++
		}
		if txStmts[k] == nil {
			txStmts[k] = tx.StmtContext(ctx, stmts[k])
		}
		args := append(s.args[:0], head...)
		s.buf = s.buf[:0]
		for j := i; j < i+chunkSizes[k]; j++ {
			args = add(args, j)
		}
		s.args = args
		if _, err := txStmts[k].ExecContext(ctx, args...); err != nil {
			return err
		}
		i += chunkSizes[k]
	}
	clear(s.args[:cap(s.args)]) // let the values be collected
	return nil
}

// insertSubmissions logs subs, each run of rows of one board and period
// with the statements that bind those once (submissionRow).
func (s *Store) insertSubmissions(ctx context.Context, tx *sql.Tx, subs []podium.Submission) error {
	var head [3]any
	for i := 0; i < len(subs); {
		first := &subs[i]
		j := i + 1
		for j < len(subs) && subs[j].Board == first.Board && subs[j].Period == first.Period {
			j++
		}
		run := subs[i:j]
		stmts, withMeta := s.ws.subBare, false
		for k := range run {
			if podium.StoredMeta(run[k].Meta) != nil {
				stmts, withMeta = s.ws.sub, true
				break
			}
		}
		head = [3]any{first.Board, first.Period, s.pxArg(first.Board)} // player_index.go
		err := s.execChunks(ctx, tx, stmts, len(run), head[:], func(args []any, k int) []any {
			sub := &run[k]
			start := len(s.buf)
			s.buf = appendSubRec(s.buf, sub)
			args = append(args, int64(sub.Seq), sub.Player, s.buf[start:len(s.buf):len(s.buf)])
			if withMeta {
				args = append(args, metaArg(sub.Meta))
			}
			return args
		})
		if code := sqliteCode(err); code == codeConstraintPrimaryKey || code == codeConstraintUnique {
			return fmt.Errorf("a submission's (board, seq) is already logged: %w", err)
		}
		if err != nil {
			return err
		}
		i = j
	}
	return nil
}

// upsertEntries writes entries, each run of one board and period with
// the statements that bind those once (entryRow), in order: a later
// upsert of the same entry wins.
func (s *Store) upsertEntries(ctx context.Context, tx *sql.Tx, entries []podium.Entry) error {
	var head [2]any
	for i := 0; i < len(entries); {
		first := &entries[i]
		j := i + 1
		for j < len(entries) && entries[j].Board == first.Board && entries[j].Period == first.Period {
			j++
		}
		run := entries[i:j]
		head = [2]any{first.Board, first.Period}
		err := s.execChunks(ctx, tx, s.ws.entry, len(run), head[:], func(args []any, k int) []any {
			e := &run[k]
			start := len(s.buf)
			s.buf = appendRec(s.buf, e)
			return append(args, e.Player, s.buf[start:len(s.buf):len(s.buf)], metaArg(e.Meta), resultsArg(e.Results))
		})
		if err != nil {
			return err
		}
		i = j
	}
	return nil
}

func (s *Store) insertIdempotency(ctx context.Context, tx *sql.Tx, recs []podium.IdempotencyRecord) error {
	return s.execChunks(ctx, tx, s.ws.idem, len(recs), nil, func(args []any, i int) []any {
		r := &recs[i]
		return append(args, r.Scope, r.Key, nonNilBytes(r.RequestHash), int64(r.Status), nonNilBytes(r.Body), podium.Millis(r.CreatedAt))
	})
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// ReplaceEntries replaces every entry of board, in every period, with
// entries and sets the board's watermark, in one transaction. Every entry must belong to board.
func (s *Store) ReplaceEntries(ctx context.Context, board string, entries []podium.Entry, watermark uint64) error {
	for i := range entries {
		if entries[i].Board != board {
			return fmt.Errorf("replace entries: entry %d belongs to board %q, not %q", i, entries[i].Board, board)
		}
		if err := entries[i].Check(); err != nil {
			return fmt.Errorf("replace entries: %w", err)
		}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("replace entries: %w", err)
	}
	defer rollback(tx)
	if _, err := tx.ExecContext(ctx, sqlstore.DeleteBoardEntries.SQLite, board); err != nil {
		return fmt.Errorf("replace entries: %w", err)
	}
	if err := s.upsertEntries(ctx, tx, entries); err != nil {
		return fmt.Errorf("replace entries: %w", err)
	}
	if _, err := tx.ExecContext(ctx, setWatermark, board, int64(watermark)); err != nil {
		return fmt.Errorf("replace entries: watermark: %w", err)
	}
	if err := s.commitTx(tx); err != nil {
		return fmt.Errorf("replace entries: %w", err)
	}
	if err := s.durable(ctx); err != nil {
		return fmt.Errorf("replace entries: %w", err)
	}
	return nil
}

// PruneIdempotency deletes the idempotency records created before before
// and returns how many it deleted.
func (s *Store) PruneIdempotency(ctx context.Context, before time.Time) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	res, err := s.w.ExecContext(ctx, sqlstore.PruneIdempotency.SQLite, podium.Millis(before))
	if err != nil {
		return 0, fmt.Errorf("prune idempotency: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("prune idempotency: %w", err)
	}
	return int(n), nil
}

// resultsArg is the results column of an entry: NULL unless it keeps
// results (a best_k board).
func resultsArg(rs []podium.Result) any {
	if len(rs) == 0 {
		return nil
	}
	return string(podium.EncodeResults(rs))
}
