package retention_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/retention"
	"github.com/podiumhq/podium/sqlite"
)

var bg = context.Background()

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

var base = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func day(d int) time.Time { return base.AddDate(0, 0, d) }

var daily = podium.Reset{Every: podium.Daily, TZ: "UTC"}

// counting is the SQLite store with every PrunePeriods' rows recorded:
// one call is one transaction.
type counting struct {
	*sqlite.Store
	mu    sync.Mutex
	calls []int
}

func (c *counting) PrunePeriods(ctx context.Context, board, before string, limit int) (int, error) {
	n, err := c.Store.PrunePeriods(ctx, board, before, limit)
	c.mu.Lock()
	c.calls = append(c.calls, n)
	c.mu.Unlock()
	return n, err
}

// env is one SQLite node with the retention module swept by hand.
type env struct {
	t     *testing.T
	path  string
	clock *clock
	cfg   retention.Config
	store *counting
	eng   *engine.Engine
	ret   *retention.Module
}

func newEnv(t *testing.T, cfg retention.Config) *env {
	cfg.Every = -1 // swept by hand
	e := &env{t: t, path: filepath.Join(t.TempDir(), "podium.db"), clock: &clock{t: base}, cfg: cfg}
	e.open()
	t.Cleanup(e.close)
	return e
}

func (e *env) open() {
	e.t.Helper()
	st, err := sqlite.Open(e.path, sqlite.Options{Sync: "normal"})
	if err != nil {
		e.t.Fatal(err)
	}
	e.store = &counting{Store: st}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mods := modules.With(modules.Config{Store: e.store, Logger: log, Retention: e.cfg})
	e.eng = engine.New(engine.Config{Store: e.store, Now: e.clock.Now, Logger: log, Modules: mods})
	for _, m := range mods {
		if r, ok := m.(*retention.Module); ok {
			e.ret = r
		}
	}
	if err := e.eng.Start(bg); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) close() {
	if e.eng != nil {
		e.eng.Close()
		e.store.Close()
		e.eng = nil
	}
}

// fill makes daily board id and gives it players scores on each of days
// 0..days-1, then sets the clock to the last of them.
func (e *env) fill(id string, days, players int) []string {
	e.t.Helper()
	b := &podium.Board{ID: id, Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc}}, Reset: daily}
	if err := b.Normalize(); err != nil {
		e.t.Fatal(err)
	}
	if _, _, err := e.eng.PutBoard(bg, b); err != nil {
		e.t.Fatal(err)
	}
	var periods []string
	for d := range days {
		e.clock.Set(day(d))
		scores := make([]engine.Score, players)
		for i := range scores {
			scores[i] = engine.Score{Board: id, Player: fmt.Sprintf("p%03d", i), Keys: []int64{int64((i*37 + d*11) % 1000)}}
		}
		if _, err := e.eng.Submit(bg, scores, false, nil); err != nil {
			e.t.Fatal(err)
		}
		periods = append(periods, podium.PeriodAt(daily, day(d)).ID)
	}
	return periods
}

func (e *env) keep(id string, n int) {
	e.t.Helper()
	if _, _, err := e.eng.UpdateBoard(bg, &podium.BoardUpdate{ID: id, KeepPeriods: &n}); err != nil {
		e.t.Fatal(err)
	}
}

// read is what a reader sees of one period: its total and entries.
func (e *env) read(id, period string) string {
	e.t.Helper()
	p, err := e.eng.Top(bg, engine.Query{Board: id, Period: period}, 0, 1000)
	if err != nil {
		e.t.Fatalf("Top(%s): %v", period, err)
	}
	s := fmt.Sprintf("total %d:", p.Total)
	for _, en := range p.Entries {
		s += fmt.Sprintf(" %d:%s:%v:%d", en.Rank, en.Player, en.Keys, en.Seq)
	}
	return s
}

func (e *env) periods(id string) []string {
	e.t.Helper()
	pcs, err := e.eng.Periods(id)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, pc := range pcs {
		out = append(out, pc.ID)
	}
	return out
}

// stored lists the periods the store has entries or log rows of.
func (e *env) stored(id string) (entries, log []string) {
	e.t.Helper()
	pcs, err := e.store.Periods(bg, id)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, pc := range pcs {
		entries = append(entries, pc.ID)
	}
	err = e.store.Log(bg, id, 0, func(s *podium.Submission) error {
		if !slices.Contains(log, s.Period) {
			log = append(log, s.Period)
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	slices.Sort(entries)
	slices.Sort(log)
	return entries, log
}

// noDiffs runs both checks, podium check's: memory against the store, and
// the store against its log.
func (e *env) noDiffs(what string) {
	e.t.Helper()
	for name, check := range map[string]func(context.Context) ([]engine.Diff, error){"indexes": e.eng.Checker().Indexes, "log": e.eng.Checker().Log} {
		diffs, err := check(bg)
		if err != nil {
			e.t.Fatalf("%s: check %s: %v", what, name, err)
		}
		if len(diffs) > 0 {
			e.t.Fatalf("%s: check %s reports %d differences, first %v", what, name, len(diffs), diffs[0])
		}
	}
}

func (e *env) sweepAll() retention.Result {
	e.t.Helper()
	var sum retention.Result
	for range 1000 {
		r, err := e.ret.Sweep(bg)
		if err != nil {
			e.t.Fatal(err)
		}
		sum.Rows += r.Rows
		sum.Batches += r.Batches
		if !r.More {
			return sum
		}
	}
	e.t.Fatal("the sweep never ends")
	return sum
}

// Periods past keep_periods read as empty, leave the period list and
// memory at once, and leave the database through the sweep, in batches of
// at most Batch rows; the kept ones, current and previous first, read
// exactly as before throughout, and the checks report nothing.
func TestSweepSQLite(t *testing.T) {
	e := newEnv(t, retention.Config{Batch: 7})
	periods := e.fill("d", 6, 30) // days 0..5; the clock on day 5
	e.fill("all", 6, 5)           // a board that keeps everything
	before := map[string]string{}
	for _, p := range periods {
		before[p] = e.read("d", p)
	}
	allBefore := e.read("all", periods[0])

	e.keep("d", 2) // keeps days 3, 4 and 5
	gone, kept := periods[:3], periods[3:]
	for _, p := range gone {
		if got := e.read("d", p); got != "total 0:" {
			t.Errorf("period %s past keep_periods reads %q, want an empty period", p, got)
		}
		if _, err := e.eng.Entry(bg, engine.Query{Board: "d", Period: p}, "p001"); podium.ErrorCode(err) != podium.ECodeEntryNotFound {
			t.Errorf("an entry of %s: %v, want %s", p, err, podium.ECodeEntryNotFound)
		}
		if err := e.eng.DeleteEntry(bg, "d", p, "p001"); podium.ErrorCode(err) != podium.ECodeEntryNotFound {
			t.Errorf("deleting an entry of %s: %v, want %s", p, err, podium.ECodeEntryNotFound)
		}
	}
	for _, p := range kept {
		if got := e.read("d", p); got != before[p] {
			t.Errorf("kept period %s reads %q, was %q", p, got, before[p])
		}
	}
	if got, want := e.periods("d"), []string{periods[5], periods[4], periods[3]}; !slices.Equal(got, want) {
		t.Errorf("Periods = %v, want %v", got, want)
	}
	e.noDiffs("before the sweep")

	if err := e.eng.Checker().Reload(bg); err != nil { // checkpoints first: the entries table has every period
		t.Fatal(err)
	}
	r := e.sweepAll()
	// 3 days of 30 entries and 30 log rows.
	if r.Rows != 180 {
		t.Errorf("the sweep deleted %d rows, want 180", r.Rows)
	}
	e.store.mu.Lock()
	calls := slices.Clone(e.store.calls)
	e.store.mu.Unlock()
	for i, n := range calls {
		if n > 7 {
			t.Fatalf("transaction %d deleted %d rows, more than the batch of 7", i, n)
		}
	}
	if len(calls) < 180/7 {
		t.Errorf("%d transactions for 180 rows in batches of 7", len(calls))
	}
	entries, log := e.stored("d")
	if !slices.Equal(entries, kept) || !slices.Equal(log, kept) {
		t.Errorf("stored after the sweep: entries of %v, log of %v; want %v", entries, log, kept)
	}
	if entries, log := e.stored("all"); len(entries) != 6 || len(log) != 6 {
		t.Errorf("the board that keeps every period lost some: %v %v", entries, log)
	}
	if got := e.read("all", periods[0]); got != allBefore {
		t.Errorf("the board that keeps every period reads %q, was %q", got, allBefore)
	}
	for _, p := range kept {
		if got := e.read("d", p); got != before[p] {
			t.Errorf("kept period %s after the sweep reads %q, was %q", p, got, before[p])
		}
	}
	e.noDiffs("after the sweep")

	// A day later, one more period goes. Raising keep_periods (or 0)
	// brings back nothing that went, swept or not (the sweep may have
	// deleted part of it), and keeps the periods still there for longer.
	e.clock.Set(day(6))
	if got, want := e.periods("d"), []string{periods[5], periods[4]}; !slices.Equal(got, want) {
		t.Errorf("Periods a day later = %v, want %v", got, want)
	}
	for _, keep := range []int{10, 0} {
		e.keep("d", keep)
		e.clock.Set(day(7))
		if got, want := e.periods("d"), []string{periods[5], periods[4]}; !slices.Equal(got, want) {
			t.Errorf("Periods with keep_periods %d = %v, want %v", keep, got, want)
		}
		for _, p := range periods[:4] {
			if got := e.read("d", p); got != "total 0:" {
				t.Errorf("with keep_periods %d, expired %s reads %q", keep, p, got)
			}
		}
		if got := e.read("d", periods[4]); got != before[periods[4]] {
			t.Errorf("with keep_periods %d, %s reads %q, was %q", keep, periods[4], got, before[periods[4]])
		}
		e.noDiffs(fmt.Sprintf("with keep_periods %d", keep))
	}
	// The floor survives a restart, and the sweep deletes below it.
	e.close()
	e.open()
	if got, want := e.periods("d"), []string{periods[5], periods[4]}; !slices.Equal(got, want) {
		t.Errorf("Periods after a restart = %v, want %v", got, want)
	}
	e.sweepAll()
	if entries, log := e.stored("d"); !slices.Equal(entries, periods[4:]) || !slices.Equal(log, periods[4:]) {
		t.Errorf("stored after keep_periods 0: entries of %v, log of %v; want %v", entries, log, periods[4:])
	}
	e.noDiffs("at the end")
}

// A sweep stopped part way (MaxBatches here, a crash or a restart in
// life) leaves the store consistent for the checks and the reads, and the
// next sweep, in a new process, goes on from what is left.
func TestSweepResumesAfterRestart(t *testing.T) {
	e := newEnv(t, retention.Config{Batch: 10, MaxBatches: 2})
	periods := e.fill("d", 5, 40)
	e.fill("e", 5, 10)
	if err := e.eng.Checker().Reload(bg); err != nil { // checkpoints first: the entries table has every period
		t.Fatal(err)
	}
	e.keep("d", 1) // keeps days 3 and 4
	e.keep("e", 1)
	want := e.read("d", periods[4]) + e.read("d", periods[3])

	r, err := e.ret.Sweep(bg)
	if err != nil || !r.More || r.Rows != 20 || r.Batches != 2 {
		t.Fatalf("the first sweep: %+v, %v; want 2 batches of 10 and more to do", r, err)
	}
	e.noDiffs("part way")
	e.close()
	e.open()
	if got := e.read("d", periods[4]) + e.read("d", periods[3]); got != want {
		t.Fatalf("after the restart the kept periods read %q, want %q", got, want)
	}
	if got := e.read("d", periods[0]); got != "total 0:" {
		t.Fatalf("after the restart a half-deleted period reads %q", got)
	}
	e.noDiffs("part way, after the restart")
	rest := e.sweepAll()
	// d: 3 days of 40 entries and 40 log rows; e: 3 days of 10 and 10.
	if r.Rows+rest.Rows != 240+60 {
		t.Errorf("the sweeps deleted %d rows, want 300", r.Rows+rest.Rows)
	}
	for _, id := range []string{"d", "e"} {
		entries, log := e.stored(id)
		if !slices.Equal(entries, periods[3:]) || !slices.Equal(log, periods[3:]) {
			t.Errorf("%s after the sweeps: entries of %v, log of %v", id, entries, log)
		}
	}
	e.noDiffs("after the sweeps")
	if r, err := e.ret.Sweep(bg); err != nil || r.Rows != 0 || r.More {
		t.Errorf("a sweep with nothing left: %+v, %v", r, err)
	}
}
