package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// What a start reads of every board, in one statement each
// (podium.StartLoader): the per-board queries cost ~40 us each in
// statement preparation and round trips, three to five per board.

var _ podium.StartLoader = (*Store)(nil)

// LastSeqs returns the highest seq logged for every board that logged
// anything: one index probe per board, in one statement.
func (s *Store) LastSeqs(ctx context.Context) (map[string]uint64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT b.id, (SELECT seq FROM submissions s WHERE s.board = b.id ORDER BY seq DESC LIMIT 1) FROM boards b`)
	if err != nil {
		return nil, fmt.Errorf("last seqs: %w", err)
	}
	defer rows.Close()
	out := map[string]uint64{}
	for rows.Next() {
		var (
			board string
			seq   sql.NullInt64
		)
		if err := rows.Scan(&board, &seq); err != nil {
			return nil, fmt.Errorf("last seqs: %w", err)
		}
		if seq.Valid && seq.Int64 > 0 {
			out[board] = uint64(seq.Int64)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("last seqs: %w", err)
	}
	return out, nil
}

// AllPeriods returns, per board, the periods that have entries with their
// counts, newest first: one walk of the entries' primary key.
func (s *Store) AllPeriods(ctx context.Context) (map[string][]podium.PeriodCount, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.AllPeriods.SQLite)
	if err != nil {
		return nil, fmt.Errorf("all periods: %w", err)
	}
	defer rows.Close()
	out := map[string][]podium.PeriodCount{}
	for rows.Next() {
		var (
			board string
			p     podium.PeriodCount
		)
		if err := rows.Scan(&board, &p.ID, &p.Entries); err != nil {
			return nil, fmt.Errorf("all periods: %w", err)
		}
		out[board] = append(out[board], p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("all periods: %w", err)
	}
	for _, ps := range out {
		slices.SortFunc(ps, func(a, b podium.PeriodCount) int { return strings.Compare(b.ID, a.ID) })
	}
	return out, nil
}

// Tails calls fn for every logged submission after its board's watermark:
// for each board, a seek into the log past the watermark.
func (s *Store) Tails(ctx context.Context, fn func(*podium.Submission) error) error {
	rows, err := s.r.QueryContext(ctx, `SELECT s.board, s.seq, s.period, s.player, s.rec, s.meta
		FROM boards b LEFT JOIN watermarks w ON w.board = b.id
		CROSS JOIN submissions s ON s.board = b.id AND s.seq > coalesce(w.seq, 0)`)
	if err != nil {
		return fmt.Errorf("tails: %w", err)
	}
	defer rows.Close()
	var (
		sub  = podium.Submission{Keys: make([]int64, 0, podium.MaxKeys)}
		seq  int64
		rec  sql.RawBytes
		meta sql.RawBytes
		dest = []any{&sub.Board, &seq, &sub.Period, &sub.Player, &rec, &meta}
	)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("tails: %w", err)
		}
		sub.Seq = uint64(seq)
		if err := decodeSubRec(rec, &sub); err != nil {
			return fmt.Errorf("tails: %s seq %d: %w", sub.Board, seq, err)
		}
		if len(meta) == 0 {
			sub.Meta = append(sub.Meta[:0], "{}"...)
		} else {
			sub.Meta = append(sub.Meta[:0], meta...)
		}
		if err := fn(&sub); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("tails: %w", err)
	}
	return nil
}

// LoadPeriods calls fn for every entry of the given board periods: one
// statement that seeks each (board, period) of a JSON list, read from the
// driver directly as LoadEntries is.
func (s *Store) LoadPeriods(ctx context.Context, periods []podium.EntryRef, fn func(*podium.Entry) error) error {
	if len(periods) == 0 {
		return nil
	}
	pairs := make([][2]string, len(periods))
	for i, p := range periods {
		pairs[i] = [2]string{p.Board, p.Period}
	}
	list, err := json.Marshal(pairs)
	if err != nil {
		return fmt.Errorf("load periods: %w", err)
	}
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("load periods: %w", err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("driver %T cannot query", dc)
		}
		rows, err := q.QueryContext(ctx, `SELECT e.board, e.period, e.player, e.rec, e.meta, e.results
			FROM json_each(?) w JOIN entries e ON e.board = w.value ->> 0 AND e.period = w.value ->> 1`,
			[]driver.NamedValue{{Ordinal: 1, Value: string(list)}})
		if err != nil {
			return err
		}
		defer rows.Close()
		e := podium.Entry{Keys: make([]int64, 0, podium.MaxKeys)}
		dest := make([]driver.Value, 6)
		for {
			if err := rows.Next(dest); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			// A board or period repeats over many rows: keep the string.
			e.Board = sameString(e.Board, dest[0])
			e.Period = sameString(e.Period, dest[1])
			if err := scanEntry(dest[2:], &e); err != nil {
				return err
			}
			if err := fn(&e); err != nil {
				return errStop{err}
			}
		}
	})
	var stop errStop
	if errors.As(err, &stop) {
		return stop.err
	}
	if err != nil {
		return fmt.Errorf("load periods: %w", err)
	}
	return nil
}

// sameString returns cur when the column v holds the same text, else the
// text of v as a new string.
func sameString(cur string, v driver.Value) string {
	switch t := v.(type) {
	case string:
		if t == cur {
			return cur
		}
		return t
	case []byte:
		if string(t) == cur {
			return cur
		}
		return string(t)
	}
	return ""
}
