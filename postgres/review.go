package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// Moderation (podium.ReviewStore): held submissions, decisions, freezes
// and a player's history (migration 0090).

var _ podium.ReviewStore = (*Store)(nil)

// reviewRows is the Store's moderation: held submissions, decisions, freezes and a player's history (podium.ReviewStore).
type reviewRows struct{ *Store }

// codeDecided is the SQLSTATE podium_review_decide raises for an item
// that is not pending.
const codeDecided = "P0005"

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

// mapError turns podium_review_decide's failure into podium.ErrDecided
// (nil for any other error).
func (p *reviewPart) mapError(err error) error { return decidedError(err) }

// queue queues the held submissions and decisions, one JSON parameter
// each kind.
func (p *reviewPart) queue(w *writer, pb *pgconn.Batch, _ *statements) {
	items, decs := p.items, p.decs
	if len(items) > 0 {
		type row struct {
			I string  `json:"i"`
			B string  `json:"b"`
			P string  `json:"p"`
			L string  `json:"l"`
			K []int64 `json:"k"`
			M *string `json:"m"`
			T int64   `json:"t"`
			R string  `json:"r"`
		}
		rows := make([]row, len(items))
		for i := range items {
			it := &items[i]
			rows[i] = row{I: it.ID, B: it.Board, P: it.Period, L: it.Player, K: it.Keys, T: podium.Millis(it.SubmittedAt), R: it.Reason}
			if podium.StoredMeta(it.Meta) != nil {
				m := string(it.Meta)
				rows[i].M = &m
			}
		}
		w.jsonRows(pb, `INSERT INTO review_items (id, board, period, player, keys, meta, submitted_ms, reason, status)
			SELECT i, b, p, l, k, m, t, r, 'pending' FROM jsonb_to_recordset($1::jsonb)
			AS x(i text, b text, p text, l text, k bigint[], m text, t bigint, r text)`, rows)
	}
	if len(decs) > 0 {
		type row struct {
			ID string `json:"id"`
			S  string `json:"s"`
			T  int64  `json:"t"`
			B  string `json:"b"`
			N  string `json:"n"`
			Q  uint64 `json:"q"`
		}
		rows := make([]row, len(decs))
		for i, d := range decs {
			rows[i] = row{d.ID, d.Status, podium.Millis(d.At), d.By, d.Note, d.Seq}
		}
		w.jsonRows(pb, "SELECT podium_review_decide($1::jsonb)", rows)
		w.followEvidence(pb, decs) // evidence_review.go
	}
}

// decidedError turns podium_review_decide's failure into podium.ErrDecided
// (nil for any other error).
func decidedError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == codeDecided {
		return fmt.Errorf("commit: %w", podium.ErrDecided)
	}
	return nil
}

func scanReview(r pgx.CollectableRow) (podium.ReviewItem, error) {
	var (
		it           podium.ReviewItem
		meta         *string
		submitted    int64
		decided, seq *int64
	)
	err := r.Scan(&it.ID, &it.Board, &it.Period, &it.Player, &it.Keys, &meta, &submitted, &it.Reason, &it.Status,
		&decided, &it.DecidedBy, &it.Note, &seq)
	if meta != nil {
		it.Meta = []byte(*meta)
	}
	it.SubmittedAt = podium.FromMillis(submitted)
	if decided != nil {
		it.DecidedAt = podium.FromMillis(*decided)
	}
	if seq != nil {
		it.Seq = uint64(*seq)
	}
	return it, err
}

// ReviewItem returns one item, nil if there is none.
func (s reviewRows) ReviewItem(ctx context.Context, id string) (*podium.ReviewItem, error) {
	rows, err := s.pool.Query(ctx, sqlstore.ReviewItem.Postgres, id)
	if err != nil {
		return nil, fmt.Errorf("review item: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanReview)
	if err != nil || len(out) == 0 {
		return nil, wrap("review item", err)
	}
	return &out[0], nil
}

// ReviewItems lists the items f selects in (submitted, id) order.
func (s reviewRows) ReviewItems(ctx context.Context, f podium.ReviewFilter) ([]podium.ReviewItem, error) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.Board != "" {
		where = append(where, "board = "+arg(f.Board))
	}
	if f.Player != "" {
		where = append(where, "player = "+arg(f.Player))
	}
	if f.Status != "" {
		where = append(where, "status = "+arg(f.Status))
	}
	if f.After.ID != "" {
		where = append(where, "(submitted_ms, id) > ("+arg(podium.Millis(f.After.At))+"::bigint, "+arg(f.After.ID)+")")
	}
	q := sqlstore.SelectReviewItems.Postgres
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY submitted_ms, id LIMIT " + arg(f.Limit)
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("review items: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanReview)
	return out, wrap("review items", err)
}

func scanFreeze(r pgx.CollectableRow) (podium.Freeze, error) {
	var (
		f  podium.Freeze
		at int64
	)
	err := r.Scan(&f.Player, &f.By, &f.Reason, &at)
	f.At = podium.FromMillis(at)
	return f, err
}

// Freezes lists every frozen player.
func (s reviewRows) Freezes(ctx context.Context) ([]podium.Freeze, error) {
	rows, err := s.pool.Query(ctx, sqlstore.Freezes.Postgres)
	if err != nil {
		return nil, fmt.Errorf("freezes: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanFreeze)
	return out, wrap("freezes", err)
}

// LoadFreeze returns a player's freeze, nil if not frozen.
func (s reviewRows) LoadFreeze(ctx context.Context, player string) (*podium.Freeze, error) {
	rows, err := s.pool.Query(ctx, sqlstore.LoadFreeze.Postgres, player)
	if err != nil {
		return nil, fmt.Errorf("load freeze: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanFreeze)
	if err != nil || len(out) == 0 {
		return nil, wrap("load freeze", err)
	}
	return &out[0], nil
}

// PutFreeze freezes a player and announces it on the change feed (a
// player change), in one transaction.
func (s reviewRows) PutFreeze(ctx context.Context, f *podium.Freeze) error {
	var b pgx.Batch
	s.queueChange(&b, podium.ChangePlayer, f.Player)
	b.Queue(sqlstore.PutFreeze.Postgres,
		f.Player, f.By, f.Reason, podium.Millis(f.At))
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("put freeze: %w", err)
	}
	return nil
}

// DeleteFreeze unfreezes a player; one not frozen is ECodeNotFound.
func (s reviewRows) DeleteFreeze(ctx context.Context, player string) error {
	return inWriteTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockChanges(ctx, tx); err != nil {
			return fmt.Errorf("delete freeze: %w", err)
		}
		tag, err := tx.Exec(ctx, sqlstore.DeleteFreeze.Postgres, player)
		if err != nil {
			return fmt.Errorf("delete freeze: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return podium.Errorf(podium.ECodeNotFound, "player %q is not frozen", player)
		}
		var b pgx.Batch
		s.queueChange(&b, podium.ChangePlayer, player)
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return fmt.Errorf("delete freeze: %w", err)
		}
		return nil
	})
}

// History returns a player's logged submissions on a board, newest first.
// Every board's log is indexed by player here (submissions_player), so a
// page is always complete: resume is 0.
func (s reviewRows) History(ctx context.Context, board, player string, periods []string, before uint64, limit int) ([]podium.HistoryRow, uint64, error) {
	if len(periods) == 0 {
		return nil, 0, nil
	}
	if before == 0 || before > math.MaxInt64 {
		before = math.MaxInt64
	}
	// One range of submissions_player per period.
	rows, err := s.pool.Query(ctx, `SELECT s.seq, s.period, s.kind, s.at_ms, s.k1, s.k2, s.k3, s.k4, s.meta, r.id
		FROM submissions s LEFT JOIN review_items r ON r.board = s.board AND r.seq = s.seq
		WHERE s.board = $1 AND s.period = ANY($2::text[]) AND s.player = $3 AND s.seq < $4
		ORDER BY s.seq DESC LIMIT $5`, board, periods, player, int64(before), limit)
	if err != nil {
		return nil, 0, fmt.Errorf("history: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.HistoryRow, error) {
		var (
			h      podium.HistoryRow
			seq    int64
			kind   int16
			at     int64
			k      [4]*int64
			meta   *string
			review *string
		)
		if err := r.Scan(&seq, &h.Period, &kind, &at, &k[0], &k[1], &k[2], &k[3], &meta, &review); err != nil {
			return h, err
		}
		h.Seq, h.Board, h.Player, h.Kind, h.At = uint64(seq), board, player, podium.Kind(kind), podium.FromMillis(at)
		for _, v := range k {
			if v != nil {
				h.Keys = append(h.Keys, *v)
			}
		}
		if meta != nil {
			h.Meta = []byte(*meta)
		}
		if review != nil {
			h.ReviewID = *review
		}
		return h, nil
	})
	return out, 0, wrap("history", err)
}
