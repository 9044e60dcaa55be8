package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// TestStoredPeriodLoadedBeforeScore: a score for a period that is in the
// store but not in memory (here: the clock went back past the previous
// period after a restart) is computed against the stored entry. Without the
// load, a sum restarted from zero and its new index hid the stored one.
func TestStoredPeriodLoadedBeforeScore(t *testing.T) {
	e := newEnv(t)
	day1 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	e.clock.Set(day1)
	e.board("s", podium.Sum, podium.Daily, desc("points"))
	e.submit("s", "alice", 10)
	e.clock.Set(day1.Add(48 * time.Hour)) // day 1 is now older than the previous period
	e.restart()
	e.clock.Set(day1.Add(time.Hour))
	if r := e.submit("s", "alice", 5); r.Entry.Keys[0] != 15 {
		t.Fatalf("sum after the stored period came back: %v, want 15", r.Entry.Keys)
	}
	periods, err := e.eng.Periods("s")
	if err != nil {
		t.Fatal(err)
	}
	if len(periods) != 1 || periods[0] != (podium.PeriodCount{ID: "2026-11-30", Entries: 1}) {
		t.Fatalf("periods: %+v", periods)
	}
	e.restart()
	eq(t, e.top("s", "2026-11-30"), []string{"1:alice:[15]"})
	if d, err := engine.CheckStore(context.Background(), e.store); err != nil || len(d) != 0 {
		t.Fatalf("CheckStore: %v %v", d, err)
	}
	if d, err := e.eng.Checker().Indexes(context.Background()); err != nil || len(d) != 0 {
		t.Fatalf("CheckIndexes: %v %v", d, err)
	}
}

// TestCadenceChangeRefused: a board with entries keeps its reset cadence
// and zone (409), so that its stored periods never drop out of view; a PUT
// that leaves reset out keeps it; a board without entries may change.
func TestCadenceChangeRefused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.board("s", podium.Sum, podium.Never, desc("points"))
	e.submit("s", "alice", 10)
	day := podium.Reset{Every: podium.Daily, TZ: "UTC"}
	if _, _, err := e.eng.UpdateBoard(ctx, &podium.BoardUpdate{ID: "s", Reset: &day}); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("cadence change on a board with entries: %v, want conflict", err)
	}
	title := "Points"
	bi, _, err := e.eng.UpdateBoard(ctx, &podium.BoardUpdate{ID: "s", Title: &title})
	if err != nil {
		t.Fatal(err)
	}
	if bi.Reset.Every != podium.Never || bi.Mode != podium.Sum || bi.Title != "Points" || !bi.Public {
		t.Fatalf("an update that gave only the title changed other fields: %+v", bi.Board)
	}
	if r := e.submit("s", "alice", 5); r.Entry.Keys[0] != 15 {
		t.Fatalf("sum after the update: %v", r.Entry.Keys)
	}

	e.board("d", podium.Best, podium.Daily, desc("points"))
	e.submit("d", "bob", 1)
	shanghai := podium.Reset{Every: podium.Daily, TZ: "Asia/Shanghai"}
	if _, _, err := e.eng.UpdateBoard(ctx, &podium.BoardUpdate{ID: "d", Reset: &shanghai}); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("zone change of a daily board with entries: %v, want conflict", err)
	}
	if err := e.eng.DeleteEntry(ctx, "d", "", "bob"); err != nil {
		t.Fatal(err)
	}
	if bi, _, err := e.eng.UpdateBoard(ctx, &podium.BoardUpdate{ID: "d", Reset: &shanghai}); err != nil || bi.Reset != shanghai {
		t.Fatalf("zone change of an empty board: %+v %v", bi.Reset, err)
	}
}

// TestConcurrentLazyLoads reads an old period from many goroutines at once
// while the writer works: the period is read from the store once and no
// map is touched without its lock (run under -race).
func TestConcurrentLazyLoads(t *testing.T) {
	e := newEnv(t)
	day1 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	e.clock.Set(day1)
	e.board("d", podium.Best, podium.Daily, desc("points"))
	for i := range 50 {
		e.clock.Set(day1.Add(time.Duration(i) * 24 * time.Hour))
		e.submit("d", "alice", int64(i))
	}
	e.restart()
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			p := day1.Add(time.Duration(i) * 24 * time.Hour).Format("2006-01-02")
			page, err := e.eng.Entry(ctx, engine.Query{Board: "d", Period: p}, "alice")
			if err != nil || page.Entries[0].Keys[0] != int64(i) {
				t.Errorf("period %s: %+v %v", p, page.Entries, err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := e.eng.Periods("d"); err != nil {
				t.Error(err)
			}
			e.submit("d", "bob", int64(i))
		}()
	}
	wg.Wait()
	periods, _ := e.eng.Periods("d")
	if len(periods) != 50 {
		t.Fatalf("%d periods listed, want 50: %+v", len(periods), periods)
	}
}
