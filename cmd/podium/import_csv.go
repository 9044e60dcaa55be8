package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/client"
	"github.com/podiumhq/podium/internal/csvcell"
)

// csv restores the rows of a CSV file (header row first) into board.
func (x *importer) csv(ctx context.Context, r io.Reader, board, columns, atFlag string) error {
	b, err := x.c.GetBoard(ctx, board)
	if err != nil {
		return fmt.Errorf("board %s: %w (create it first: a CSV does not say how to rank)", board, err)
	}
	reset := podium.Reset{Every: podium.Every(b.Reset.Every), TZ: b.Reset.TZ}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("the CSV header row: %w", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	var names []string
	if columns != "" {
		for _, c := range strings.Split(columns, ",") {
			names = append(names, strings.TrimSpace(c))
		}
		if len(names) != 1+len(b.Keys) && len(names) != 2+len(b.Keys) {
			return usagef("import", "--columns names %d columns; board %s needs player, its %d keys and optionally at", len(names), board, len(b.Keys))
		}
	} else {
		names = append(names, "player")
		for _, k := range b.Keys {
			names = append(names, k.Name)
		}
		if _, ok := col["at"]; ok {
			names = append(names, "at")
		}
	}
	idx := make([]int, len(names))
	for i, n := range names {
		j, ok := col[n]
		if !ok {
			return fmt.Errorf("the CSV has no column %q (its header: %s)", n, strings.Join(head, ","))
		}
		idx[i] = j
	}
	hasAt := len(names) == 2+len(b.Keys)
	periodCol := -1 // a "period" column: each row's period (its start when there is no at)
	if j, ok := col["period"]; ok {
		periodCol = j
	}
	var fixed time.Time
	if !hasAt && periodCol < 0 {
		switch {
		case atFlag != "":
			if fixed, err = time.Parse(time.RFC3339Nano, atFlag); err != nil {
				return usagef("import", "--at %q is not an RFC 3339 time (e.g. 2026-11-30T12:00:00Z)", atFlag)
			}
		case reset.Every == podium.Never || reset.Every == "":
			return usagef("import", "the CSV has no at column and board %s never resets: give --at TIME, the same on every run, so that a re-run changes nothing", board)
		default:
			fixed = podium.PeriodAt(reset, time.Now()).Start
		}
	}
	x.board = board
	line := 1
	for {
		rec, err := cr.Read()
		line++
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("CSV line %d: %w", line, err)
		}
		e, err := csvEntry(rec, idx, len(b.Keys), hasAt, fixed, reset)
		if err == nil && periodCol >= 0 {
			err = csvPeriod(&e, rec, periodCol, hasAt, reset)
		}
		if err != nil {
			x.refused++
			x.note("CSV line %d: %v", line, err)
			continue
		}
		if err := x.add(ctx, e); err != nil {
			return err
		}
	}
	return x.flush(ctx)
}

func csvEntry(rec []string, idx []int, nkeys int, hasAt bool, at time.Time, reset podium.Reset) (client.RestoreEntry, error) {
	field := func(i int) (string, error) {
		if idx[i] >= len(rec) {
			return "", fmt.Errorf("%d fields; column %d is missing", len(rec), idx[i]+1)
		}
		return strings.TrimSpace(rec[idx[i]]), nil
	}
	player, err := field(0)
	if err != nil {
		return client.RestoreEntry{}, err
	}
	// A podium export wrote the player cell through csvcell.Escape.
	e := client.RestoreEntry{Player: csvcell.Unescape(player), Keys: make([]int64, nkeys)}
	for k := range nkeys {
		v, err := field(1 + k)
		if err != nil {
			return e, err
		}
		if e.Keys[k], err = strconv.ParseInt(v, 10, 64); err != nil {
			return e, fmt.Errorf("key %d: %q is not an integer", k+1, v)
		}
	}
	if hasAt {
		v, err := field(1 + nkeys)
		if err != nil {
			return e, err
		}
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			at = time.UnixMilli(ms)
		} else if at, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return e, fmt.Errorf("at: %q is neither RFC 3339 nor unix milliseconds", v)
		}
	}
	e.At = at.UTC()
	e.Period = podium.PeriodAt(reset, at).ID
	return e, nil
}

// csvPeriod applies a row's period column: with an at column the two must
// agree; without one the entry is timed at the period's start.
func csvPeriod(e *client.RestoreEntry, rec []string, j int, hasAt bool, reset podium.Reset) error {
	if j >= len(rec) {
		return fmt.Errorf("%d fields; the period column %d is missing", len(rec), j+1)
	}
	id := strings.TrimSpace(rec[j])
	if hasAt {
		if id != e.Period {
			return fmt.Errorf("at %s falls in period %s, not %s", e.At.Format(time.RFC3339Nano), e.Period, id)
		}
		return nil
	}
	start, ok := periodStart(reset, id)
	if !ok {
		return fmt.Errorf("period %q is not a period id of this board (like %s), or has no start (give --at or an at column)", id, podium.PeriodAt(reset, time.Now()).ID)
	}
	e.Period, e.At = id, start.UTC()
	return nil
}

// periodStart returns the start of period id of a board that resets (in
// its zone); false for a malformed id, or "all".
func periodStart(reset podium.Reset, id string) (time.Time, bool) {
	if !podium.ValidPeriodID(reset, id) || id == podium.PeriodAll {
		return time.Time{}, false
	}
	loc, err := podium.LoadZone(reset.TZ)
	if err != nil {
		loc = time.UTC
	}
	var start time.Time
	switch reset.Every {
	case podium.Daily:
		start, err = time.ParseInLocation("2006-01-02", id, loc)
	case podium.Monthly:
		start, err = time.ParseInLocation("2006-01", id, loc)
	case podium.Weekly:
		// ISO 8601: week 1 holds January 4th; weeks start on Monday.
		y, _ := strconv.Atoi(id[:4])
		w, _ := strconv.Atoi(id[6:])
		jan4 := time.Date(y, 1, 4, 0, 0, 0, 0, loc)
		monday := jan4.AddDate(0, 0, -((int(jan4.Weekday()) + 6) % 7))
		start = monday.AddDate(0, 0, 7*(w-1))
	}
	if err != nil || podium.PeriodAt(reset, start).ID != id {
		return time.Time{}, false // e.g. week 53 of a year of 52
	}
	return start, true
}
