package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

var _ podium.FeedStore = (*Store)(nil)

// feedRows is the Store's activity feed (podium.FeedStore).
type feedRows struct{ *Store }

// sqlFeed stores a commit's feed events (feedPart) in its
// transaction, as the other statements of the write path: one array per
// column. The keys travel as array literals ("{1,2}") cast to bigint[].
// DO NOTHING also keeps the first of two equal events within one batch.
const sqlFeed = `INSERT INTO feed (board, seq, kind, at_ms, period, player, keys, old, other, data)
	SELECT b, s, k, a, p, pl, ke::bigint[], o::bigint[], ot, d
	FROM unnest($1::text[], $2::bigint[], $3::smallint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[],
		$9::text[], $10::text[]) AS t (b, s, k, a, p, pl, ke, o, ot, d)
	ON CONFLICT (board, seq, kind) DO NOTHING`

// FeedPart returns evs as a part of a batch this store commits.
func (s feedRows) FeedPart(evs []podium.FeedEvent) podium.Part { return &feedPart{s.Store, evs} }

// feedPart is the feed events of a commit.
type feedPart struct {
	s   *Store
	evs []podium.FeedEvent
}

func (p *feedPart) Len() int       { return len(p.evs) }
func (p *feedPart) madeBy() *Store { return p.s }

func (p *feedPart) Check() error {
	for i := range p.evs {
		if err := p.evs[i].Check(); err != nil {
			return err
		}
	}
	return nil
}

// queue queues the insert of the events.
func (p *feedPart) queue(w *writer, pb *pgconn.Batch, st *statements) {
	evs := p.evs
	chunks(len(evs), func(lo, hi int) {
		evs := evs[lo:hi]
		n := len(evs)
		p := &w.p
		p.reset()
		text := func(f func(*podium.FeedEvent) string) {
			p.beginArray(oidText, n)
			for i := range evs {
				elemText(p, f(&evs[i]))
			}
			p.endArray()
		}
		keys := func(f func(*podium.FeedEvent) []int64) {
			p.beginArray(oidText, n)
			for i := range evs {
				if k := f(&evs[i]); k == nil {
					p.elemNull()
				} else {
					elemText(p, arrayLiteral(k))
				}
			}
			p.endArray()
		}
		text(func(ev *podium.FeedEvent) string { return ev.Board })
		p.beginArray(oidInt8, n)
		for i := range evs {
			p.elemInt8(int64(evs[i].Seq))
		}
		p.endArray()
		p.beginArray(oidInt2, n)
		for i := range evs {
			p.elemInt2(int16(evs[i].Kind))
		}
		p.endArray()
		p.beginArray(oidInt8, n)
		for i := range evs {
			p.elemInt8(podium.Millis(evs[i].At))
		}
		p.endArray()
		text(func(ev *podium.FeedEvent) string { return ev.Period })
		text(func(ev *podium.FeedEvent) string { return ev.Player })
		keys(func(ev *podium.FeedEvent) []int64 { return ev.Keys })
		keys(func(ev *podium.FeedEvent) []int64 { return ev.Old })
		text(func(ev *podium.FeedEvent) string { return ev.Other })
		p.beginArray(oidText, n)
		for i := range evs {
			if evs[i].Data == nil {
				p.elemNull()
			} else {
				elemText(p, []byte(evs[i].Data))
			}
		}
		p.endArray()
		w.queue(pb, st.feed)
	})
}

// arrayLiteral is keys as a PostgreSQL array literal.
func arrayLiteral(keys []int64) string {
	b := make([]byte, 0, 2+8*len(keys))
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, k, 10)
	}
	return string(append(b, '}'))
}

// Feed returns the events q selects, newest first.
func (s feedRows) Feed(ctx context.Context, q podium.FeedQuery) ([]podium.FeedEvent, error) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.Boards != nil {
		if len(q.Boards) == 0 {
			return nil, nil
		}
		if len(q.Boards) == 1 {
			where = append(where, "board = "+arg(q.Boards[0]))
		} else {
			where = append(where, "board = ANY("+arg(q.Boards)+"::text[])")
		}
	}
	if p := q.Before; p != nil {
		where = append(where, fmt.Sprintf("(at_ms, board, seq, kind) < (%s, %s, %s, %s)",
			arg(p.At), arg(p.Board), arg(int64(p.Seq)), arg(int16(p.Kind))))
	}
	query := sqlstore.SelectFeed.Postgres
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY at_ms DESC, board DESC, seq DESC, kind DESC LIMIT " + arg(q.Limit)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("feed: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.FeedEvent, error) {
		var (
			ev       podium.FeedEvent
			seq, at  int64
			kind     int16
			data     *string
			keys, ol []int64
		)
		if err := r.Scan(&ev.Board, &seq, &kind, &at, &ev.Period, &ev.Player, &keys, &ol, &ev.Other, &data); err != nil {
			return ev, err
		}
		ev.Seq, ev.Kind, ev.At, ev.Keys, ev.Old = uint64(seq), podium.FeedKind(kind), podium.FromMillis(at), keys, ol
		if data != nil {
			ev.Data = []byte(*data)
		}
		return ev, nil
	})
	if err != nil {
		return nil, fmt.Errorf("feed: %w", err)
	}
	return out, nil
}

// PruneFeed deletes the events of boards past the keep newest of each, at
// most max rows in all, the oldest first, one short statement per board
// (keep at least 1). Nodes may prune
// the same board at once: each deletes rows past the cap, which is the
// same set.
func (s feedRows) PruneFeed(ctx context.Context, boards []string, keep, max int) (int, error) {
	n := 0
	for _, b := range boards {
		if n >= max {
			break
		}
		// The oldest first, so that a partial prune keeps the newest.
		tag, err := s.pool.Exec(ctx, `DELETE FROM feed f USING (
			SELECT seq, kind FROM feed WHERE board = $1 AND (at_ms, seq, kind) < (
				SELECT at_ms, seq, kind FROM feed WHERE board = $1
				ORDER BY at_ms DESC, seq DESC, kind DESC LIMIT 1 OFFSET $2 - 1)
			ORDER BY at_ms, seq, kind LIMIT $3) AS old
			WHERE f.board = $1 AND f.seq = old.seq AND f.kind = old.kind`, b, keep, max-n)
		if err != nil {
			return n, fmt.Errorf("prune feed: %w", err)
		}
		n += int(tag.RowsAffected())
	}
	return n, nil
}

var _ podium.FeedOverCap = (*Store)(nil)

// FeedBoardsOver returns the boards that hold more than keep events.
func (s feedRows) FeedBoardsOver(ctx context.Context, keep int) ([]string, error) {
	rows, err := s.pool.Query(ctx, sqlstore.FeedBoardsOver.Postgres, keep)
	if err != nil {
		return nil, fmt.Errorf("feed boards over the cap: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("feed boards over the cap: %w", err)
	}
	return out, nil
}
