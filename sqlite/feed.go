package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

var _ podium.FeedStore = (*Store)(nil)

// feedRows is the Store's activity feed (podium.FeedStore).
type feedRows struct{ *Store }

const (
	insertFeed    = "INSERT INTO feed (board, seq, kind, at_ms, period, player, keys, old, other, data) VALUES "
	feedRow       = "(?,?,?,?,?,?,?,?,?,?)"
	insertFeedEnd = " ON CONFLICT (board, seq, kind) DO NOTHING"
)

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

// write stores the events in commit's transaction, in chunks of rows as
// the log is (one statement per 64 events).
func (p *feedPart) write(ctx context.Context, tx *sql.Tx) error {
	if len(p.evs) == 0 {
		return nil
	}
	evs := p.evs
	err := p.s.execChunks(ctx, tx, p.s.ws.feed, len(evs), nil, func(args []any, i int) []any {
		ev := &evs[i]
		return append(args, ev.Board, int64(ev.Seq), int64(ev.Kind), podium.Millis(ev.At), ev.Period, ev.Player,
			textArg(podium.FeedKeysJSON(ev.Keys)), textArg(podium.FeedKeysJSON(ev.Old)), ev.Other, textArg(ev.Data))
	})
	if err != nil {
		return fmt.Errorf("feed: %w", err)
	}
	return nil
}

func textArg(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// Feed returns the events q selects, newest first.
func (s feedRows) Feed(ctx context.Context, q podium.FeedQuery) ([]podium.FeedEvent, error) {
	var (
		where []string
		args  []any
	)
	if q.Boards != nil {
		if len(q.Boards) == 0 {
			return nil, nil
		}
		if len(q.Boards) == 1 {
			where = append(where, "board = ?")
			args = append(args, q.Boards[0])
		} else {
			// Many boards (the all-boards feed): walk the feed's order
			// and keep their events, rather than gather and sort every
			// event of each board: 0.3-0.45 ms against 4.8-7.7 ms for
			// 100 boards of 200 events (engine's BenchmarkFeedRead/all).
			// The unary + keeps SQLite from using the board index here.
			where = append(where, "+board IN (SELECT value FROM json_each(?))")
			args = append(args, jsonStrings(q.Boards))
		}
	}
	if p := q.Before; p != nil {
		where = append(where, "(at_ms, board, seq, kind) < (?, ?, ?, ?)")
		args = append(args, p.At, p.Board, int64(p.Seq), int64(p.Kind))
	}
	query := sqlstore.SelectFeed.SQLite
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY at_ms DESC, board DESC, seq DESC, kind DESC LIMIT ?"
	args = append(args, q.Limit)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("feed: %w", err)
	}
	defer rows.Close()
	var out []podium.FeedEvent
	for rows.Next() {
		var (
			ev              podium.FeedEvent
			seq, kind, at   int64
			keys, old, data []byte
		)
		if err := rows.Scan(&ev.Board, &seq, &kind, &at, &ev.Period, &ev.Player, &keys, &old, &ev.Other, &data); err != nil {
			return nil, fmt.Errorf("feed: %w", err)
		}
		ev.Seq, ev.Kind, ev.At = uint64(seq), podium.FeedKind(kind), podium.FromMillis(at)
		if ev.Keys, err = podium.ParseFeedKeys(keys); err != nil {
			return nil, fmt.Errorf("feed: %w", err)
		}
		if ev.Old, err = podium.ParseFeedKeys(old); err != nil {
			return nil, fmt.Errorf("feed: %w", err)
		}
		if data != nil {
			ev.Data = append([]byte(nil), data...)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("feed: %w", err)
	}
	return out, nil
}

// PruneFeed deletes the events of boards past the keep newest of each,
// at most max rows in all, the oldest first, in one short transaction per
// board. keep must be at least 1.
func (s feedRows) PruneFeed(ctx context.Context, boards []string, keep, max int) (int, error) {
	n := 0
	for _, b := range boards {
		if n >= max {
			break
		}
		s.wmu.Lock()
		// The oldest first, so that a partial prune keeps the newest.
		res, err := s.w.ExecContext(ctx, `DELETE FROM feed WHERE board = ?1 AND (seq, kind) IN (
			SELECT seq, kind FROM feed WHERE board = ?1 AND (at_ms, seq, kind) < (
				SELECT at_ms, seq, kind FROM feed WHERE board = ?1
				ORDER BY at_ms DESC, seq DESC, kind DESC LIMIT 1 OFFSET ?3 - 1)
			ORDER BY at_ms, seq, kind LIMIT ?2)`, b, max-n, keep)
		s.wmu.Unlock()
		if err != nil {
			return n, fmt.Errorf("prune feed: %w", err)
		}
		d, err := res.RowsAffected()
		if err != nil {
			return n, fmt.Errorf("prune feed: %w", err)
		}
		n += int(d)
	}
	return n, nil
}

// jsonStrings encodes ids (board ids: no quote or backslash) as a JSON
// array for json_each.
func jsonStrings(ids []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(id)
		b.WriteByte('"')
	}
	b.WriteByte(']')
	return b.String()
}

var _ podium.FeedOverCap = (*Store)(nil)

// FeedBoardsOver returns the boards that hold more than keep events: one
// walk of the feed's primary key, which is in board order.
func (s feedRows) FeedBoardsOver(ctx context.Context, keep int) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.FeedBoardsOver.SQLite, keep)
	if err != nil {
		return nil, fmt.Errorf("feed boards over the cap: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("feed boards over the cap: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("feed boards over the cap: %w", err)
	}
	return out, nil
}
