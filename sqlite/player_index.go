package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"

	"github.com/podiumhq/podium"
)

// The player index (migrations 0070 and 0110) finds a player's log rows on
// a board: quota counts read it, and so does a player's history. Keeping
// it for every row made each logged score a random B-tree insert, which
// cost a 1000-score group commit 4-6x its time (13-20 ms against 3 ms,
// BenchmarkCommitLog) and a single durable submit about a fifth of its
// CPU. So only boards that need it pay for it: a board with a quota (whose
// counts must be exact) or review holds (whose moderators read history).
// Their rows are logged with px 1; other boards' rows with px 0, which the
// partial index leaves out.
//
// History on a board without the index scans the board's log backwards by
// seq, at most Options.HistoryScan rows a page, and says where it stopped
// (resume); quota counts never need that, as a quota board is indexed.
// A board that gains a quota or review holds has its earlier rows brought
// into the index before PutBoard returns, in chunks of seqs so that
// commits go on between them; a backfill cut short by a crash resumes when
// the store opens. Counts and history use the index only once it is whole,
// and read the log by seq before that, which is slower but exact.

// indexState is what the store knows of a board's player index.
type indexState uint8

const (
	notIndexed  indexState = iota // new rows are logged with px 0
	indexed                       // every row of the board is in the index
	backfilling                   // new rows are indexed; older ones are being brought in
)

// backfillSeqs is the seqs one backfill transaction covers: it holds the
// write lock for a few milliseconds, so commits wait no longer than that.
var backfillSeqs = 20_000 // a variable for tests

// defaultHistoryScan is the log rows one history page may scan on a board
// without the player index (Options.HistoryScan): tens of milliseconds.
const defaultHistoryScan = 50_000

// playerIndexed reports whether board b keeps its rows in the player index.
func playerIndexed(b *podium.Board) bool { return b.Quota != nil || b.Review != nil }

// indexOf returns the state of board's player index.
func (s *Store) indexOf(board string) indexState {
	if m := s.pidx.Load(); m != nil {
		return (*m)[board]
	}
	return notIndexed
}

// setIndex records board's state (copy on write: readers load the map
// without a lock). The caller holds wmu.
func (s *Store) setIndex(board string, st indexState) {
	if s.indexOf(board) == st {
		return // most boards: not indexed before or after, and no copy of the map
	}
	var m map[string]indexState
	if old := s.pidx.Load(); old != nil {
		m = maps.Clone(*old)
	} else {
		m = map[string]indexState{}
	}
	if st == notIndexed {
		delete(m, board)
	} else {
		m[board] = st
	}
	s.pidx.Store(&m)
}

// indexedBoards lists the boards that use the player index. Only the rows
// whose document names a quota or a review are parsed (a meta object may
// name them too, so those are parsed to be sure): parsing every board's
// document here was a third of a start at 100,000 boards.
func (s *Store) indexedBoards(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, body FROM boards WHERE instr(body, '"quota":') > 0 OR instr(body, '"review":') > 0`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var on []string
	for rows.Next() {
		var (
			b    podium.Board
			body []byte
		)
		if err := rows.Scan(&b.ID, &body); err != nil {
			return nil, err
		}
		if err := b.SetDocument(body); err != nil {
			return nil, fmt.Errorf("board %s: %w", b.ID, err)
		}
		if playerIndexed(&b) {
			on = append(on, b.ID)
		}
	}
	return on, rows.Err()
}

// pxArg is the px value of a row logged now on board: 1 in the index, 0 out.
func (s *Store) pxArg(board string) int64 {
	if s.indexOf(board) == notIndexed {
		return 0
	}
	return 1
}

// loadIndexStates reads which boards are indexed and resumes the backfills
// a crash cut short. It runs in Open, before the store is shared.
func (s *Store) loadIndexStates(ctx context.Context) error {
	on, err := s.indexedBoards(ctx)
	if err != nil {
		return fmt.Errorf("player index: %w", err)
	}
	pending := map[string]bool{}
	rows, err := s.w.QueryContext(ctx, "SELECT board FROM player_index_backfill")
	if err != nil {
		return fmt.Errorf("player index: %w", err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("player index: %w", err)
		}
		pending[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("player index: %w", err)
	}
	s.wmu.Lock()
	for _, id := range on {
		if pending[id] {
			s.setIndex(id, backfilling)
		} else {
			s.setIndex(id, indexed)
		}
	}
	s.wmu.Unlock()
	for id := range pending {
		if err := s.backfill(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// putBoardIndex is PutBoard's part in tx: it starts a backfill when board
// b turns the index on, and drops a pending one when it turns it off. It
// returns the state to record once tx commits. The caller holds wmu.
func (s *Store) putBoardIndex(ctx context.Context, tx *sql.Tx, b *podium.Board) (indexState, error) {
	was := s.indexOf(b.ID)
	if !playerIndexed(b) {
		if was == backfilling {
			if _, err := tx.ExecContext(ctx, "DELETE FROM player_index_backfill WHERE board = ?", b.ID); err != nil {
				return was, err
			}
		}
		return notIndexed, nil
	}
	if was != notIndexed {
		return was, nil
	}
	var top int64
	if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(seq), 0) FROM submissions WHERE board = ?", b.ID).Scan(&top); err != nil {
		return was, err
	}
	if top == 0 {
		return indexed, nil
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO player_index_backfill (board, next) VALUES (?, ?) ON CONFLICT (board) DO UPDATE SET next = excluded.next", b.ID, top); err != nil {
		return was, err
	}
	return backfilling, nil
}

// backfill brings a board's rows logged out of the index (px 0) into it,
// from the seq its backfill row names down to 1, one chunk a transaction.
// It stops when the row is gone (done, or the board deleted or no longer
// indexed).
func (s *Store) backfill(ctx context.Context, board string) error {
	for {
		done, err := s.backfillChunk(ctx, board)
		if err != nil {
			return fmt.Errorf("player index: backfill %s: %w", board, err)
		}
		if done {
			return nil
		}
	}
}

func (s *Store) backfillChunk(ctx context.Context, board string) (bool, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer rollback(tx)
	var next int64
	err = tx.QueryRowContext(ctx, "SELECT next FROM player_index_backfill WHERE board = ?", board).Scan(&next)
	if errors.Is(err, sql.ErrNoRows) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	lo := max(next-int64(backfillSeqs), 0)
	if _, err := tx.ExecContext(ctx, "UPDATE submissions SET px = 1 WHERE board = ? AND seq > ? AND seq <= ? AND px = 0", board, lo, next); err != nil {
		return false, err
	}
	if lo == 0 {
		_, err = tx.ExecContext(ctx, "DELETE FROM player_index_backfill WHERE board = ?", board)
	} else {
		_, err = tx.ExecContext(ctx, "UPDATE player_index_backfill SET next = ? WHERE board = ?", lo, board)
	}
	if err != nil {
		return false, err
	}
	if err := s.commitTx(tx); err != nil {
		return false, err
	}
	if lo == 0 && s.indexOf(board) == backfilling {
		s.setIndex(board, indexed)
	}
	return lo == 0, nil
}
