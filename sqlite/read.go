package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// LoadEntries calls fn for every entry of one board and period, in player
// order. The *Entry, its Keys and its Meta are reused between calls: fn must
// copy what it keeps (the Player string may be kept). An error from fn stops
// the scan and is returned unwrapped.
//
// This is the start-up path: two columns and a varint decode per row, and no
// allocation per row beyond the driver's (the player string and its
// boxing). Reading on another goroutine so that the scan overlaps fn was
// measured slower on two busy cores, so the scan runs on the caller's.
func (s *Store) LoadEntries(ctx context.Context, board, period string, fn func(*podium.Entry) error) error {
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("load entries: %w", err)
	}
	defer conn.Close()
	// The scan talks to the driver directly: database/sql takes a lock and
	// converts every value per row, which was a third of the startup time
	// of a 1M-entry board.
	err = conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("driver %T cannot query", dc)
		}
		rows, err := q.QueryContext(ctx, "SELECT player, rec, meta, results FROM entries WHERE board = ? AND period = ?",
			[]driver.NamedValue{{Ordinal: 1, Value: board}, {Ordinal: 2, Value: period}})
		if err != nil {
			return err
		}
		defer rows.Close()
		e := podium.Entry{Board: board, Period: period, Keys: make([]int64, 0, podium.MaxKeys)}
		dest := make([]driver.Value, 4)
		for {
			if err := rows.Next(dest); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			if err := scanEntry(dest, &e); err != nil {
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
		return fmt.Errorf("load entries: %w", err)
	}
	return nil
}

// scanEntry decodes a row of (player, rec, meta, results) into e, whose
// Board and Period are set.
func scanEntry(dest []driver.Value, e *podium.Entry) error {
	switch p := dest[0].(type) {
	case string:
		e.Player = p
	case []byte:
		e.Player = string(p)
	default:
		return fmt.Errorf("player column holds %T", dest[0])
	}
	rec, _ := dest[1].([]byte)
	if err := decodeRec(rec, e); err != nil {
		return fmt.Errorf("%s/%s/%s: %w", e.Board, e.Period, e.Player, err)
	}
	switch m := dest[2].(type) {
	case nil:
		e.Meta = append(e.Meta[:0], "{}"...)
	case string:
		e.Meta = append(e.Meta[:0], m...)
	case []byte:
		e.Meta = append(e.Meta[:0], m...)
	}
	e.Results = nil
	if r := dest[3]; r != nil {
		var raw []byte
		switch v := r.(type) {
		case string:
			raw = []byte(v)
		case []byte:
			raw = v
		}
		var err error
		if e.Results, err = podium.DecodeResults(raw); err != nil {
			return fmt.Errorf("%s/%s/%s: %w", e.Board, e.Period, e.Player, err)
		}
	}
	return nil
}

// errStop carries the callback's own error out of LoadEntries unwrapped.
type errStop struct{ err error }

func (e errStop) Error() string { return e.err.Error() }

// Periods lists the periods of a board that have entries, with their entry
// counts, newest first. Period ids of one cadence sort as text in time
// order, so newest first is descending id order.
func (s *Store) Periods(ctx context.Context, board string) ([]podium.PeriodCount, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.Periods.SQLite, board)
	if err != nil {
		return nil, fmt.Errorf("periods: %w", err)
	}
	defer rows.Close()
	var out []podium.PeriodCount
	for rows.Next() {
		var p podium.PeriodCount
		if err := rows.Scan(&p.ID, &p.Entries); err != nil {
			return nil, fmt.Errorf("periods: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("periods: %w", err)
	}
	return out, nil
}

// LastSeq returns the highest seq logged for a board, 0 if none.
func (s *Store) LastSeq(ctx context.Context, board string) (uint64, error) {
	var seq int64
	if err := s.r.QueryRowContext(ctx, "SELECT coalesce(max(seq), 0) FROM submissions WHERE board = ?", board).Scan(&seq); err != nil {
		return 0, fmt.Errorf("last seq: %w", err)
	}
	return uint64(seq), nil
}

// Log calls fn for every logged submission of a board with a seq greater
// than after, in seq order. The *Submission, its Keys and its Meta are
// reused between calls. An error from fn stops the scan and is returned
// unwrapped.
func (s *Store) Log(ctx context.Context, board string, after uint64, fn func(*podium.Submission) error) error {
	if after > math.MaxInt64 {
		return nil
	}
	rows, err := s.r.QueryContext(ctx, "SELECT seq, period, player, rec, meta FROM submissions WHERE board = ? AND seq > ? ORDER BY seq", board, int64(after))
	if err != nil {
		return fmt.Errorf("log: %w", err)
	}
	defer rows.Close()
	var (
		sub  = podium.Submission{Board: board, Keys: make([]int64, 0, podium.MaxKeys)}
		seq  int64
		rec  sql.RawBytes
		meta sql.RawBytes
		dest = []any{&seq, &sub.Period, &sub.Player, &rec, &meta}
	)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("log: %w", err)
		}
		sub.Seq = uint64(seq)
		if err := decodeSubRec(rec, &sub); err != nil {
			return fmt.Errorf("log: %s seq %d: %w", board, seq, err)
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
		return fmt.Errorf("log: %w", err)
	}
	return nil
}

// Watermarks returns the seq up to which each board's entries reflect its
// log; boards without a row are at 0.
func (s *Store) Watermarks(ctx context.Context) (map[string]uint64, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.Watermarks.SQLite)
	if err != nil {
		return nil, fmt.Errorf("watermarks: %w", err)
	}
	defer rows.Close()
	out := map[string]uint64{}
	for rows.Next() {
		var board string
		var seq int64
		if err := rows.Scan(&board, &seq); err != nil {
			return nil, fmt.Errorf("watermarks: %w", err)
		}
		out[board] = uint64(seq)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("watermarks: %w", err)
	}
	return out, nil
}

// IdempotencyIndex calls fn with each record created at or after since,
// newest first, without its body, until fn returns false.
func (s *Store) IdempotencyIndex(ctx context.Context, since time.Time, fn func(*podium.IdempotencyRecord) bool) error {
	rows, err := s.r.QueryContext(ctx, sqlstore.IdempotencyIndex.SQLite, podium.Millis(since))
	if err != nil {
		return fmt.Errorf("idempotency index: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r       podium.IdempotencyRecord
			created int64
		)
		if err := rows.Scan(&r.Scope, &r.Key, &r.RequestHash, &r.Status, &created); err != nil {
			return fmt.Errorf("idempotency index: %w", err)
		}
		r.CreatedAt = podium.FromMillis(created)
		if !fn(&r) {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("idempotency index: %w", err)
	}
	return nil
}

const sqlLookupIdem = `SELECT request_hash, status, body, created_ms FROM idempotency WHERE scope = ? AND key = ?`

// LookupIdempotency returns the record of scope and key, if stored.
func (s *Store) LookupIdempotency(ctx context.Context, scope, key string) (podium.IdempotencyRecord, bool, error) {
	r := podium.IdempotencyRecord{Scope: scope, Key: key}
	var created int64
	err := s.lookupIdem.QueryRowContext(ctx, scope, key).Scan(&r.RequestHash, &r.Status, &r.Body, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return podium.IdempotencyRecord{}, false, nil
	}
	if err != nil {
		return podium.IdempotencyRecord{}, false, fmt.Errorf("look up idempotency record: %w", err)
	}
	r.CreatedAt = podium.FromMillis(created)
	return r, true, nil
}

// IdempotencyRecords returns the records created at or after since, oldest
// first.
func (s *Store) IdempotencyRecords(ctx context.Context, since time.Time) ([]podium.IdempotencyRecord, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.IdempotencyRecords.SQLite, podium.Millis(since))
	if err != nil {
		return nil, fmt.Errorf("idempotency records: %w", err)
	}
	defer rows.Close()
	var out []podium.IdempotencyRecord
	for rows.Next() {
		var (
			r       podium.IdempotencyRecord
			created int64
		)
		if err := rows.Scan(&r.Scope, &r.Key, &r.RequestHash, &r.Status, &r.Body, &created); err != nil {
			return nil, fmt.Errorf("idempotency records: %w", err)
		}
		r.CreatedAt = podium.FromMillis(created)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("idempotency records: %w", err)
	}
	return out, nil
}
