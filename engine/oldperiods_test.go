package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Old periods (older than a board's previous one) stay in memory under the
// OldPeriodsBytes budget; an evicted one is read again from the store.

var oldBase = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func oldDay(d int) time.Time { return oldBase.AddDate(0, 0, d) }

func newEnvBudget(t *testing.T, bytes int64) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), clock: &clock{t: oldBase}, oldBytes: bytes}
	e.open()
	t.Cleanup(e.close)
	return e
}

// fillDays makes daily board id with players entries on each of days
// days (some with meta), then sets the clock to day days+10: every one of
// them is an old period.
func fillDays(e *env, rng *mrand.Rand, id string, days, players int) []string {
	e.t.Helper()
	e.board(id, podium.Best, podium.Daily, desc("points"))
	var periods []string
	for d := range days {
		e.clock.Set(oldDay(d))
		scores := make([]engine.Score, players)
		for i := range scores {
			scores[i] = engine.Score{Board: id, Player: fmt.Sprintf("p%03d", i), Keys: []int64{rng.Int64N(1000)}}
			if i%3 == 0 {
				scores[i].Meta = json.RawMessage(fmt.Sprintf(`{"day":%d,"note":"player %d"}`, d, i))
			}
		}
		if _, err := e.eng.Submit(context.Background(), scores, false, nil); err != nil {
			e.t.Fatal(err)
		}
		periods = append(periods, podium.PeriodAt(podium.Reset{Every: podium.Daily, TZ: "UTC"}, oldDay(d)).ID)
	}
	e.clock.Set(oldDay(days + 10))
	return periods
}

// answer is what readers see of one period: the whole ranking with meta,
// and one player's entry with its neighbours.
func answer(t *testing.T, eng *engine.Engine, board, period string) string {
	t.Helper()
	ctx := context.Background()
	p, err := eng.Top(ctx, engine.Query{Board: board, Period: period}, 0, 10000)
	if err != nil {
		t.Fatalf("Top(%s): %v", period, err)
	}
	s := fmt.Sprintf("total %d:", p.Total) // not the board's seq: writes elsewhere move it
	for _, en := range p.Entries {
		s += fmt.Sprintf(" %d:%s:%v:%d:%d:%s", en.Rank, en.Player, en.Keys, en.At.UnixMilli(), en.Seq, en.Meta)
	}
	a, err := eng.Around(ctx, engine.Query{Board: board, Period: period}, "p007", 2)
	if err != nil && podium.ErrorCode(err) != podium.ECodeEntryNotFound {
		t.Fatalf("Around(%s): %v", period, err)
	}
	for _, en := range a.Entries {
		s += fmt.Sprintf(" around %d:%s", en.Rank, en.Player)
	}
	return s
}

// periodSize is the estimated bytes of one old period as the budget
// counts them, measured on a fresh engine that reads it once.
func periodSize(t *testing.T, e *env, board, period string) int64 {
	t.Helper()
	e.oldBytes = 0 // the default: nothing is evicted
	e.restart()
	answer(t, e.eng, board, period)
	st := e.eng.OldPeriods()
	if st.Periods != 1 || st.Bytes <= 0 {
		t.Fatalf("after one read of an old period: %+v", st)
	}
	return st.Bytes
}

// Reading many old periods through a budget of three and a half keeps the
// estimate under the budget, evicts, and every answer, read again after an
// eviction, equals the one read from the writer's memory before.
func TestOldPeriodsStayUnderBudget(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(seed(t), 1))
	e := newEnv(t)
	periods := fillDays(e, rng, "d", 30, 100)
	want := map[string]string{}
	for _, p := range periods {
		want[p] = answer(t, e.eng, "d", p) // in memory since written
	}
	wantList, _ := e.eng.Periods("d")

	size := periodSize(t, e, "d", periods[0])
	budget := size*7/2 + 1
	e.oldBytes = budget
	e.restart()
	for pass := range 3 {
		for _, i := range rng.Perm(len(periods)) {
			p := periods[i]
			if got := answer(t, e.eng, "d", p); got != want[p] {
				t.Fatalf("pass %d, period %s after evictions:\n got %s\nwant %s", pass, p, got, want[p])
			}
			if st := e.eng.OldPeriods(); st.Bytes > budget {
				t.Fatalf("pass %d, after reading %s: %d bytes in old periods, over the budget of %d (%+v)", pass, p, st.Bytes, budget, st)
			}
		}
	}
	st := e.eng.OldPeriods()
	t.Logf("one period ~%d bytes; budget %d; %+v", size, budget, st)
	if st.Periods != 3 || st.Evictions == 0 || st.Loads < int64(len(periods))*2 {
		t.Fatalf("want 3 periods kept and evictions, reloads; got %+v", st)
	}
	if got, _ := e.eng.Periods("d"); fmt.Sprint(got) != fmt.Sprint(wantList) {
		t.Fatalf("periods after evictions\n got %v\nwant %v", got, wantList)
	}
}

// Periods that age out of current/previous while the server runs (the
// writer made them) come under the budget at the next sweep; with a
// negative budget none stays past its read, and the current period is
// never evicted.
func TestOldPeriodsAgedOutAndKeepNone(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(seed(t), 2))
	e := newEnvBudget(t, -1)
	periods := fillDays(e, rng, "d", 8, 50)
	want := map[string]string{}
	for _, p := range periods {
		want[p] = answer(t, e.eng, "d", p)
	}
	cur := e.submit("d", "late", 5)
	e.eng.SweepOldForTest()
	if st := e.eng.OldPeriods(); st.Periods != len(periods) || st.Evictions != 0 {
		t.Fatalf("periods whose entries wait for the checkpoint were evicted: %+v", st)
	}
	if err := e.eng.CheckpointForTest(); err != nil {
		t.Fatal(err)
	}
	e.eng.SweepOldForTest()
	if st := e.eng.OldPeriods(); st.Periods != 0 || st.Bytes != 0 || st.Evictions != int64(len(periods)) {
		t.Fatalf("after the sweep with no budget: %+v", st)
	}
	for _, p := range periods {
		if got := answer(t, e.eng, "d", p); got != want[p] {
			t.Fatalf("period %s reread:\n got %s\nwant %s", p, got, want[p])
		}
		if st := e.eng.OldPeriods(); st.Periods != 0 || st.Bytes != 0 {
			t.Fatalf("after reading %s with no budget: %+v", p, st)
		}
	}
	if r := e.submit("d", "late2", 9); r.Period != cur.Period || r.Entry.Rank != 1 {
		t.Fatalf("the current period after the sweep: %+v", r)
	}
	eq(t, e.top("d", "current"), []string{"1:late2:[9]", "2:late:[5]"})
}

// A restore into an old period in memory is not lost to an eviction
// before the checkpoint writes it: the period stays (over the budget)
// until its entries are in the store, and once evicted it is reread with
// them.
func TestOldPeriodWriteSurvivesEviction(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(seed(t), 3))
	e := newEnv(t)
	periods := fillDays(e, rng, "d", 6, 40)
	size := periodSize(t, e, "d", periods[0])
	e.oldBytes = size*3/2 + 1 // one period
	e.restart()
	ctx := context.Background()
	p0 := periods[0]
	answer(t, e.eng, "d", p0)
	res, err := e.eng.Restore(ctx, "d", []engine.RestoreItem{{Period: p0, Player: "restored", Keys: []int64{5000}, At: oldDay(0)}})
	if err != nil || res[0].Err != nil || !res[0].Restored {
		t.Fatalf("restore: %v %+v", err, res)
	}
	want := answer(t, e.eng, "d", p0)
	check := func(when string) {
		t.Helper()
		if got := answer(t, e.eng, "d", p0); got != want {
			t.Fatalf("%s:\n got %s\nwant %s", when, got, want)
		}
	}
	// Another old period read now pushes p0 out of the budget, but its
	// restored entry is not in the entries table yet: it must stay.
	answer(t, e.eng, "d", periods[1])
	answer(t, e.eng, "d", periods[2])
	loads := e.eng.OldPeriods().Loads
	check("read again before the checkpoint")
	if st := e.eng.OldPeriods(); st.Loads != loads {
		t.Fatalf("p0 was evicted before its restore was checkpointed: %+v", st)
	}
	if err := e.eng.CheckpointForTest(); err != nil {
		t.Fatal(err)
	}
	answer(t, e.eng, "d", periods[3])
	answer(t, e.eng, "d", periods[4])
	loads = e.eng.OldPeriods().Loads
	check("reread after the checkpoint and an eviction")
	if st := e.eng.OldPeriods(); st.Loads == loads {
		t.Fatalf("p0 should have been evicted after the checkpoint and read again: %+v", st)
	}
	e.restart()
	check("after a restart")
}

// Readers of old periods, evicting one another, run beside writes to the
// current period and restores into other old periods: every read equals
// the answer before, and every restore is there at the end, evictions and
// a restart later. Run it with -race.
func TestOldPeriodsConcurrentReadsWritesEvictions(t *testing.T) {
	s := seed(t)
	rng := mrand.New(mrand.NewPCG(s, 4))
	e := newEnv(t)
	periods := fillDays(e, rng, "d", 16, 60)
	want := map[string]string{}
	for _, p := range periods {
		want[p] = answer(t, e.eng, "d", p)
	}
	size := periodSize(t, e, "d", periods[0])
	e.oldBytes = size*5/2 + 1
	e.restart()
	readOnly, restored := periods[:10], periods[10:]

	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rr := mrand.New(mrand.NewPCG(s, uint64(100+r)))
			for range 60 {
				p := readOnly[rr.IntN(len(readOnly))]
				if got := answer(t, e.eng, "d", p); got != want[p] {
					errs <- fmt.Errorf("period %s:\n got %s\nwant %s", p, got, want[p])
					return
				}
			}
		}()
	}
	wg.Add(2)
	go func() { // writes to the current period
		defer wg.Done()
		for i := range 100 {
			if _, err := e.eng.Submit(ctx, []engine.Score{{Board: "d", Player: fmt.Sprintf("now%d", i%7), Keys: []int64{int64(i)}}}, true, nil); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() { // restores into old periods, and reads of them
		defer wg.Done()
		for i := range 40 {
			p := restored[i%len(restored)]
			res, err := e.eng.Restore(ctx, "d", []engine.RestoreItem{{Period: p, Player: fmt.Sprintf("r%02d", i), Keys: []int64{int64(2000 + i)}, At: oldDay(10 + i%len(restored))}})
			if err != nil || res[0].Err != nil {
				errs <- fmt.Errorf("restore: %v %+v", err, res)
				return
			}
			answer(t, e.eng, "d", restored[(i+1)%len(restored)])
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := e.eng.OldPeriods(); st.Evictions == 0 {
		t.Fatalf("no evictions: %+v", st)
	}
	verify := func(when string) {
		t.Helper()
		for j, p := range restored {
			page, err := e.eng.Top(ctx, engine.Query{Board: "d", Period: p}, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			// The restored players (keys 2000+) rank first, in key order.
			var got []string
			for _, en := range page.Entries {
				if en.Keys[0] >= 2000 {
					got = append(got, en.Player)
				}
			}
			var exp []string
			for i := 39; i >= 0; i-- {
				if i%len(restored) == j {
					exp = append(exp, fmt.Sprintf("r%02d", i))
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(exp) || page.Total != 60+len(exp) {
				t.Fatalf("%s: period %s has restored %v (total %d); want %v (total %d)", when, p, got, page.Total, exp, 60+len(exp))
			}
		}
	}
	verify("at the end")
	if err := e.eng.CheckpointForTest(); err != nil {
		t.Fatal(err)
	}
	for _, p := range readOnly {
		answer(t, e.eng, "d", p) // evicts the restored periods
	}
	verify("after evictions")
	e.restart()
	verify("after a restart")
	eq(t, e.top("d", "current")[:1], []string{"1:now1:[99]"})
}

// A board deleted while one of its old periods is kept frees it at once,
// and a board made again under the same id does not see it.
func TestOldPeriodsBoardDeleted(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(seed(t), 5))
	e := newEnv(t)
	periods := fillDays(e, rng, "d", 4, 30)
	e.restart()
	answer(t, e.eng, "d", periods[0])
	if st := e.eng.OldPeriods(); st.Periods != 1 || st.Bytes == 0 {
		t.Fatalf("after a read: %+v", st)
	}
	if err := e.eng.DeleteBoard(context.Background(), "d"); err != nil {
		t.Fatal(err)
	}
	if st := e.eng.OldPeriods(); st.Periods != 0 || st.Bytes != 0 {
		t.Fatalf("after the board was deleted: %+v", st)
	}
	e.board("d", podium.Best, podium.Daily, desc("points"))
	eq(t, e.top("d", periods[0]), []string{})
	if ps, _ := e.eng.Periods("d"); len(ps) != 0 {
		t.Fatalf("periods of the new board: %v", ps)
	}
}
