package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// What a start reads of every board, in one statement each
// (podium.StartLoader), where the per-board queries cost a round trip
// each, three to five per board.

var _ podium.StartLoader = (*Store)(nil)

// oidTextArray is text[].
const oidTextArray = 1009

// LastSeqs returns every board's head: the highest seq it logged.
func (s *Store) LastSeqs(ctx context.Context) (map[string]uint64, error) {
	rows, err := s.pool.Query(ctx, "SELECT board, seq FROM board_heads WHERE seq > 0")
	if err != nil {
		return nil, fmt.Errorf("last seqs: %w", err)
	}
	defer rows.Close()
	out := map[string]uint64{}
	for rows.Next() {
		var (
			board string
			seq   int64
		)
		if err := rows.Scan(&board, &seq); err != nil {
			return nil, fmt.Errorf("last seqs: %w", err)
		}
		out[board] = uint64(seq)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("last seqs: %w", err)
	}
	return out, nil
}

// AllPeriods returns, per board, the periods that have entries with their
// counts, newest first.
func (s *Store) AllPeriods(ctx context.Context) (map[string][]podium.PeriodCount, error) {
	rows, err := s.pool.Query(ctx, sqlstore.AllPeriods.Postgres)
	if err != nil {
		return nil, fmt.Errorf("all periods: %w", err)
	}
	out := map[string][]podium.PeriodCount{}
	var (
		board string
		p     podium.PeriodCount
	)
	_, err = pgx.ForEachRow(rows, []any{&board, &p.ID, &p.Entries}, func() error {
		out[board] = append(out[board], p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("all periods: %w", err)
	}
	for _, ps := range out {
		slices.SortFunc(ps, func(a, b podium.PeriodCount) int { return strings.Compare(b.ID, a.ID) })
	}
	return out, nil
}

// sqlTails reads every board's log after its watermark: an index range of
// submissions per board (LATERAL keeps the planner from reading the whole
// log to join it).
const sqlTails = `SELECT b.id, s.seq, s.period, s.player, s.kind, s.at_ms, s.k1, s.k2, s.k3, s.k4, s.meta
	FROM boards b LEFT JOIN watermarks w ON w.board = b.id
	CROSS JOIN LATERAL (SELECT * FROM submissions s WHERE s.board = b.id AND s.seq > coalesce(w.seq, 0)) s`

// Tails calls fn for every logged submission after its board's watermark.
func (s *Store) Tails(ctx context.Context, fn func(*podium.Submission) error) error {
	sub := podium.Submission{Keys: make([]int64, 0, podium.MaxKeys)}
	err := s.scan(ctx, sqlTails, nil, nil, func(v [][]byte) error {
		if len(v) != 11 {
			return fmt.Errorf("tails row has %d columns", len(v))
		}
		if string(v[0]) != sub.Board {
			sub.Board = string(v[0])
		}
		if err := decodeLogRow(v[1:], &sub); err != nil {
			return err
		}
		if err := fn(&sub); err != nil {
			return errStop{err}
		}
		return nil
	})
	if err := stopped(err); err != nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("tails: %w", err)
	}
	return nil
}

// sqlLoadPeriods reads the entries of a list of (board, period).
const sqlLoadPeriods = `SELECT w.board, w.period, e.player, e.seq, e.at_ms, e.k1, e.k2, e.k3, e.k4, e.meta, e.results
	FROM unnest($1::text[], $2::text[]) AS w(board, period)
	CROSS JOIN LATERAL (SELECT * FROM entries e WHERE e.board = w.board AND e.period = w.period) e`

// LoadPeriods calls fn for every entry of the given board periods.
func (s *Store) LoadPeriods(ctx context.Context, periods []podium.EntryRef, fn func(*podium.Entry) error) error {
	if len(periods) == 0 {
		return nil
	}
	var p params
	p.beginArray(oidText, len(periods))
	for _, r := range periods {
		elemText(&p, r.Board)
	}
	p.endArray()
	p.beginArray(oidText, len(periods))
	for _, r := range periods {
		elemText(&p, r.Period)
	}
	p.endArray()
	e := podium.Entry{Keys: make([]int64, 0, podium.MaxKeys)}
	err := s.scan(ctx, sqlLoadPeriods, p.values(), []uint32{oidTextArray, oidTextArray}, func(v [][]byte) error {
		if len(v) != 11 {
			return fmt.Errorf("entries row has %d columns", len(v))
		}
		// A board or period repeats over many rows: keep the string.
		if string(v[0]) != e.Board {
			e.Board = string(v[0])
		}
		if string(v[1]) != e.Period {
			e.Period = string(v[1])
		}
		if err := decodeEntryRow(v[2:], &e); err != nil {
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
		return fmt.Errorf("load periods: %w", err)
	}
	return nil
}
