package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// Moderation (podium.ReviewStore): held submissions, decisions, freezes
// and a player's history (migration 0090).

var _ podium.ReviewStore = (*Store)(nil)

// reviewRows is the Store's moderation: held submissions, decisions, freezes and a player's history (podium.ReviewStore).
type reviewRows struct{ *Store }

func scanReview(r rowScanner) (podium.ReviewItem, error) {
	var (
		it           podium.ReviewItem
		keys         string
		meta         sql.NullString
		submitted    int64
		decided, seq sql.NullInt64
	)
	err := r.Scan(&it.ID, &it.Board, &it.Period, &it.Player, &keys, &meta, &submitted, &it.Reason, &it.Status,
		&decided, &it.DecidedBy, &it.Note, &seq)
	if err != nil {
		return it, err
	}
	if err := json.Unmarshal([]byte(keys), &it.Keys); err != nil {
		return it, fmt.Errorf("review item %s: keys: %w", it.ID, err)
	}
	if meta.Valid {
		it.Meta = []byte(meta.String)
	}
	it.SubmittedAt = podium.FromMillis(submitted)
	if decided.Valid {
		it.DecidedAt = podium.FromMillis(decided.Int64)
	}
	if seq.Valid {
		it.Seq = uint64(seq.Int64)
	}
	return it, nil
}

// ReviewPart returns held items and decisions as a part of a batch this
// store commits.
func (s reviewRows) ReviewPart(items []podium.ReviewItem, decisions []podium.ReviewDecision) podium.Part {
	return &reviewPart{s.Store, items, decisions}
}

// reviewPart is the held submissions and decisions of a commit.
type reviewPart struct {
	s     *Store
	items []podium.ReviewItem
	decs  []podium.ReviewDecision
}

func (p *reviewPart) Len() int       { return len(p.items) + len(p.decs) }
func (p *reviewPart) Check() error   { return podium.CheckReview(p.items, p.decs) }
func (p *reviewPart) madeBy() *Store { return p.s }

func (p *reviewPart) write(ctx context.Context, tx *sql.Tx) error {
	if err := insertReview(ctx, tx, p.items, p.decs); err != nil {
		return fmt.Errorf("review: %w", err)
	}
	return nil
}

// insertReview stores held submissions and decisions, in a commit's
// transaction. A decision of an item that is not pending is
// podium.ErrDecided.
func insertReview(ctx context.Context, tx *sql.Tx, items []podium.ReviewItem, decs []podium.ReviewDecision) error {
	for i := range items {
		it := &items[i]
		keys, err := json.Marshal(it.Keys)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO review_items ("+sqlstore.ReviewCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, '', '', NULL)`,
			it.ID, it.Board, it.Period, it.Player, string(keys), metaArg(it.Meta), podium.Millis(it.SubmittedAt), it.Reason, podium.ReviewPending); err != nil {
			return err
		}
	}
	for _, d := range decs {
		var seq any
		if d.Seq > 0 {
			seq = int64(d.Seq)
		}
		res, err := tx.ExecContext(ctx, `UPDATE review_items SET status = ?, decided_ms = ?, decided_by = ?, note = ?, seq = ?
			WHERE id = ? AND status = 'pending'`, d.Status, podium.Millis(d.At), d.By, d.Note, seq, d.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return podium.ErrDecided
		}
		if d.Evidence != nil && d.Status == podium.ReviewApproved && d.Seq > 0 {
			if err := followEvidence(ctx, tx, &d); err != nil { // evidence_review.go
				return err
			}
		}
	}
	return nil
}

// ReviewItem returns one item, nil if there is none.
func (s reviewRows) ReviewItem(ctx context.Context, id string) (*podium.ReviewItem, error) {
	it, err := scanReview(s.r.QueryRowContext(ctx, sqlstore.ReviewItem.SQLite, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("review item: %w", err)
	}
	return &it, nil
}

// ReviewItems lists the items f selects in (submitted, id) order.
func (s reviewRows) ReviewItems(ctx context.Context, f podium.ReviewFilter) ([]podium.ReviewItem, error) {
	var (
		where []string
		args  []any
	)
	if f.Board != "" {
		where, args = append(where, "board = ?"), append(args, f.Board)
	}
	if f.Player != "" {
		where, args = append(where, "player = ?"), append(args, f.Player)
	}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, f.Status)
	}
	if f.After.ID != "" {
		where, args = append(where, "(submitted_ms, id) > (?, ?)"), append(args, podium.Millis(f.After.At), f.After.ID)
	}
	q := sqlstore.SelectReviewItems.SQLite
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY submitted_ms, id LIMIT ?"
	rows, err := s.r.QueryContext(ctx, q, append(args, f.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("review items: %w", err)
	}
	defer rows.Close()
	var out []podium.ReviewItem
	for rows.Next() {
		it, err := scanReview(rows)
		if err != nil {
			return nil, fmt.Errorf("review items: %w", err)
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("review items: %w", err)
	}
	return out, nil
}

// Freezes lists every frozen player.
func (s reviewRows) Freezes(ctx context.Context) ([]podium.Freeze, error) {
	return s.queryFreezes(ctx, sqlstore.Freezes.SQLite)
}

// LoadFreeze returns a player's freeze, nil if not frozen.
func (s reviewRows) LoadFreeze(ctx context.Context, player string) (*podium.Freeze, error) {
	list, err := s.queryFreezes(ctx, sqlstore.LoadFreeze.SQLite, player)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return &list[0], nil
}

func (s reviewRows) queryFreezes(ctx context.Context, q string, args ...any) ([]podium.Freeze, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("freezes: %w", err)
	}
	defer rows.Close()
	var out []podium.Freeze
	for rows.Next() {
		var (
			f  podium.Freeze
			at int64
		)
		if err := rows.Scan(&f.Player, &f.By, &f.Reason, &at); err != nil {
			return nil, fmt.Errorf("freezes: %w", err)
		}
		f.At = podium.FromMillis(at)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("freezes: %w", err)
	}
	return out, nil
}

// PutFreeze freezes a player.
func (s reviewRows) PutFreeze(ctx context.Context, f *podium.Freeze) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.w.ExecContext(ctx, sqlstore.PutFreeze.SQLite,
		f.Player, f.By, f.Reason, podium.Millis(f.At))
	if err != nil {
		return fmt.Errorf("put freeze: %w", err)
	}
	return s.durable(ctx)
}

// DeleteFreeze unfreezes a player; one not frozen is ECodeNotFound.
func (s reviewRows) DeleteFreeze(ctx context.Context, player string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	res, err := s.w.ExecContext(ctx, sqlstore.DeleteFreeze.SQLite, player)
	if err != nil {
		return fmt.Errorf("delete freeze: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete freeze: %w", err)
	} else if n == 0 {
		return podium.Errorf(podium.ECodeNotFound, "player %q is not frozen", player)
	}
	return s.durable(ctx)
}

// History returns a player's logged submissions on a board, newest first.
// A board in the player index reads one range of it per period; another
// board's log is scanned backwards by seq, at most s.historyScan rows, and
// where the scan stopped short of limit rows it says so (resume).
func (s reviewRows) History(ctx context.Context, board, player string, periods []string, before uint64, limit int) ([]podium.HistoryRow, uint64, error) {
	if len(periods) == 0 {
		return nil, 0, nil
	}
	if before == 0 || before > 1<<63-1 {
		before = 1<<63 - 1
	}
	// json_each keeps the statement one text whatever the number of
	// periods.
	ps, err := json.Marshal(periods)
	if err != nil {
		return nil, 0, err
	}
	if s.indexOf(board) == indexed {
		rows, err := s.r.QueryContext(ctx, `SELECT s.seq, s.period, s.rec, s.meta, r.id FROM submissions s INDEXED BY submissions_player
			LEFT JOIN review_items r ON r.board = s.board AND r.seq = s.seq
			WHERE s.board = ? AND s.period IN (SELECT value FROM json_each(?)) AND s.player = ? AND s.px IS NOT 0 AND s.seq < ?
			ORDER BY s.seq DESC LIMIT ?`, board, string(ps), player, int64(before), limit)
		if err != nil {
			return nil, 0, fmt.Errorf("history: %w", err)
		}
		out, err := scanHistory(rows, board, player)
		return out, 0, err
	}
	if before == 1<<63-1 {
		var top int64
		if err := s.r.QueryRowContext(ctx, "SELECT coalesce(max(seq), 0) FROM submissions WHERE board = ?", board).Scan(&top); err != nil {
			return nil, 0, fmt.Errorf("history: %w", err)
		}
		before = uint64(top) + 1
	}
	lo := uint64(1)
	if before > uint64(s.historyScan)+1 {
		lo = before - uint64(s.historyScan)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT s.seq, s.period, s.rec, s.meta, r.id FROM submissions s
		LEFT JOIN review_items r ON r.board = s.board AND r.seq = s.seq
		WHERE s.board = ? AND s.seq >= ? AND s.seq < ? AND s.player = ? AND s.period IN (SELECT value FROM json_each(?))
		ORDER BY s.seq DESC LIMIT ?`, board, int64(lo), int64(before), player, string(ps), limit)
	if err != nil {
		return nil, 0, fmt.Errorf("history: %w", err)
	}
	out, err := scanHistory(rows, board, player)
	if err != nil || len(out) == limit || lo <= 1 {
		return out, 0, err
	}
	return out, lo, nil
}

// scanHistory reads History's rows and closes them.
func scanHistory(rows *sql.Rows, board, player string) ([]podium.HistoryRow, error) {
	defer rows.Close()
	var out []podium.HistoryRow
	for rows.Next() {
		var (
			h    podium.HistoryRow
			seq  int64
			rec  []byte
			meta sql.NullString
			rid  sql.NullString
		)
		if err := rows.Scan(&seq, &h.Period, &rec, &meta, &rid); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		h.Seq, h.Board, h.Player, h.ReviewID = uint64(seq), board, player, rid.String
		if err := decodeSubRec(rec, &h.Submission); err != nil {
			return nil, fmt.Errorf("history: %s seq %d: %w", board, seq, err)
		}
		h.Keys = append([]int64(nil), h.Keys...)
		if meta.Valid {
			h.Meta = []byte(meta.String)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return out, nil
}
