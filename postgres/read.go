package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// scan runs one query that streams rows to row, in a read-only transaction
// without the statement timeout (a scan lasts as long as its callback
// takes). params are binary, of the types in oids; rows come in binary. An
// error from row stops the scan and is returned.
func (s *Store) scan(ctx context.Context, sql string, params [][]byte, oids []uint32, row func(vals [][]byte) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	return pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
			return err
		}
		rr := tx.Conn().PgConn().ExecParams(ctx, sql, params, oids, binaryFormat, binaryFormat)
		for rr.NextRow() {
			if err := row(rr.Values()); err != nil {
				rr.Close() // reads the rest: the connection stays usable
				return err
			}
		}
		_, err := rr.Close()
		return err
	})
}

// errStop carries a callback's own error out of scan, to be returned
// unwrapped.
type errStop struct{ err error }

func (e errStop) Error() string { return e.err.Error() }

// stopped returns the callback's error that ended a scan, unwrapped, or
// nil if err is not one.
func stopped(err error) error {
	var stop errStop
	if errors.As(err, &stop) {
		return stop.err
	}
	return nil
}

// LoadEntries calls fn for every entry of one board and period, in no
// particular order. The *Entry, its Keys and its Meta are reused between
// calls: fn must copy what it keeps (the Player string may be kept). An
// error from fn stops the scan and is returned unwrapped.
//
// This is the start-up path: rows come in binary and are decoded in place,
// with no allocation per row but the player's string.
func (s *Store) LoadEntries(ctx context.Context, board, period string, fn func(*podium.Entry) error) error {
	e := podium.Entry{Board: board, Period: period, Keys: make([]int64, 0, podium.MaxKeys)}
	err := s.scan(ctx, "SELECT player, seq, at_ms, k1, k2, k3, k4, meta, results FROM entries WHERE board = $1 AND period = $2",
		[][]byte{[]byte(board), []byte(period)}, []uint32{oidText, oidText},
		func(v [][]byte) error {
			if err := decodeEntryRow(v, &e); err != nil {
				return err
			}
			if err := fn(&e); err != nil {
				return errStop{err}
			}
			return nil
		})
	if err := stopped(err); err != nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("load entries: %w", err)
	}
	return nil
}

// decodeEntryRow decodes the columns (player, seq, at_ms, k1, k2, k3, k4,
// meta, results) of an entries row into e (its Board and Period set).
func decodeEntryRow(v [][]byte, e *podium.Entry) error {
	if len(v) != 9 {
		return fmt.Errorf("entries row has %d columns", len(v))
	}
	seq, err := int8Value(v[1])
	if err != nil {
		return err
	}
	at, err := int8Value(v[2])
	if err != nil {
		return err
	}
	e.Player = string(v[0])
	e.Seq, e.At = uint64(seq), podium.FromMillis(at)
	if e.Keys, err = appendKeys(e.Keys[:0], v[3:7]); err != nil || len(e.Keys) == 0 {
		return fmt.Errorf("%s/%s/%s: malformed keys", e.Board, e.Period, e.Player)
	}
	e.Meta = appendMeta(e.Meta[:0], v[7])
	if e.Results, err = podium.DecodeResults(v[8]); err != nil {
		return fmt.Errorf("%s/%s/%s: %w", e.Board, e.Period, e.Player, err)
	}
	return nil
}

// appendMeta appends a stored meta object, {} for NULL.
func appendMeta(dst, v []byte) []byte {
	if v == nil {
		return append(dst, "{}"...)
	}
	return append(dst, v...)
}

// Log calls fn for every logged submission of a board with a seq greater
// than after, in seq order. The *Submission, its Keys and its Meta are
// reused between calls. An error from fn stops the scan and is returned
// unwrapped.
func (s *Store) Log(ctx context.Context, board string, after uint64, fn func(*podium.Submission) error) error {
	if after > math.MaxInt64 {
		return nil
	}
	p, oids := logParams(board, after)
	err := s.scan(ctx, sqlReadLog, p.values(), oids, logRow(board, fn))
	if err := stopped(err); err != nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("log: %w", err)
	}
	return nil
}

// sqlReadLog reads a board's log after a seq; logParams are its parameters.
const sqlReadLog = "SELECT seq, period, player, kind, at_ms, k1, k2, k3, k4, meta FROM submissions WHERE board = $1 AND seq > $2 ORDER BY seq"

func logParams(board string, after uint64) (*params, []uint32) {
	var p params
	p.text(board)
	p.int8(int64(after))
	return &p, []uint32{oidText, oidInt8}
}

// logRow decodes the binary rows of sqlReadLog and calls fn with each; an
// error of fn is returned as errStop.
func logRow(board string, fn func(*podium.Submission) error) func(v [][]byte) error {
	sub := podium.Submission{Board: board, Keys: make([]int64, 0, podium.MaxKeys)}
	return func(v [][]byte) error {
		if err := decodeLogRow(v, &sub); err != nil {
			return err
		}
		if err := fn(&sub); err != nil {
			return errStop{err}
		}
		return nil
	}
}

// decodeLogRow decodes the columns of sqlReadLog into sub (its Board set).
func decodeLogRow(v [][]byte, sub *podium.Submission) error {
	if len(v) != 10 {
		return fmt.Errorf("submissions row has %d columns", len(v))
	}
	seq, err := int8Value(v[0])
	if err != nil {
		return err
	}
	kind, err := int2Value(v[3])
	if err != nil {
		return err
	}
	at, err := int8Value(v[4])
	if err != nil {
		return err
	}
	sub.Seq, sub.Kind, sub.At = uint64(seq), podium.Kind(kind), podium.FromMillis(at)
	// The log is read rarely enough, and a period or player repeats
	// rarely enough between rows, that a string each is fine.
	sub.Period, sub.Player = string(v[1]), string(v[2])
	if sub.Keys, err = appendKeys(sub.Keys[:0], v[5:9]); err != nil {
		return fmt.Errorf("%s seq %d: malformed keys", sub.Board, seq)
	}
	sub.Meta = appendMeta(sub.Meta[:0], v[9])
	return nil
}

// Periods lists the periods of a board that have entries, with their entry
// counts, newest first. Period ids of one cadence sort as text (byte
// order) in time order, so newest first is descending id order.
func (s *Store) Periods(ctx context.Context, board string) ([]podium.PeriodCount, error) {
	rows, err := s.pool.Query(ctx, sqlstore.Periods.Postgres, board)
	if err != nil {
		return nil, fmt.Errorf("periods: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.PeriodCount, error) {
		var p podium.PeriodCount
		err := r.Scan(&p.ID, &p.Entries)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("periods: %w", err)
	}
	return out, nil
}

// LastSeq returns the highest seq logged for a board, 0 if none: one read
// of the board's head.
func (s *Store) LastSeq(ctx context.Context, board string) (uint64, error) {
	var seq int64
	err := s.pool.QueryRow(ctx, "SELECT seq FROM board_heads WHERE board = $1", board).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("last seq: %w", err)
	}
	return uint64(seq), nil
}

// Watermarks returns the seq up to which each board's entries reflect its
// log; boards without a row are at 0.
func (s *Store) Watermarks(ctx context.Context) (map[string]uint64, error) {
	rows, err := s.pool.Query(ctx, sqlstore.Watermarks.Postgres)
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
	rows, err := s.pool.Query(ctx, sqlstore.IdempotencyIndex.Postgres, podium.Millis(since))
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

// LookupIdempotency returns the record of scope and key, if stored.
func (s *Store) LookupIdempotency(ctx context.Context, scope, key string) (podium.IdempotencyRecord, bool, error) {
	rows, err := s.pool.Query(ctx, `SELECT scope, key, request_hash, status, body, created_ms FROM idempotency
		WHERE scope = $1 AND key = $2`, scope, key)
	if err != nil {
		return podium.IdempotencyRecord{}, false, fmt.Errorf("look up idempotency record: %w", err)
	}
	recs, err := pgx.CollectRows(rows, scanRecord)
	if err != nil {
		return podium.IdempotencyRecord{}, false, fmt.Errorf("look up idempotency record: %w", err)
	}
	if len(recs) == 0 {
		return podium.IdempotencyRecord{}, false, nil
	}
	return recs[0], true, nil
}

// IdempotencyRecords returns the records created at or after since, oldest
// first.
func (s *Store) IdempotencyRecords(ctx context.Context, since time.Time) ([]podium.IdempotencyRecord, error) {
	rows, err := s.pool.Query(ctx, sqlstore.IdempotencyRecords.Postgres, podium.Millis(since))
	if err != nil {
		return nil, fmt.Errorf("idempotency records: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanRecord)
	if err != nil {
		return nil, fmt.Errorf("idempotency records: %w", err)
	}
	return out, nil
}

// scanRecord reads scope, key, request_hash, status, body, created_ms.
func scanRecord(r pgx.CollectableRow) (podium.IdempotencyRecord, error) {
	var (
		rec     podium.IdempotencyRecord
		created int64
	)
	err := r.Scan(&rec.Scope, &rec.Key, &rec.RequestHash, &rec.Status, &rec.Body, &created)
	rec.CreatedAt = podium.FromMillis(created)
	return rec, err
}
