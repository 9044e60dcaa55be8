package engine_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/aggregate"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
)

func (e *env) aggPut(b *podium.Board) error {
	e.t.Helper()
	_, _, err := e.eng.PutBoard(bg, b)
	return err
}

func (e *env) aggMustPut(b *podium.Board) {
	e.t.Helper()
	if err := e.aggPut(b); err != nil {
		e.t.Fatalf("put %s: %v", b.ID, err)
	}
}

func (e *env) aggResults(board, player string) string {
	e.t.Helper()
	p, err := e.eng.Entry(bg, engine.Query{Board: board}, player)
	if err != nil {
		e.t.Fatalf("entry %s/%s: %v", board, player, err)
	}
	var parts []string
	for _, r := range p.Entries[0].Results {
		parts = append(parts, fmt.Sprint(r.Keys))
	}
	return strings.Join(parts, " ")
}

// aggClean checks that the indexes, the entries table and the log agree, and
// that every aggregate agrees with its sources.
func (e *env) aggClean() {
	e.t.Helper()
	if d, err := e.eng.Checker().Indexes(bg); err != nil || len(d) > 0 {
		e.t.Fatalf("CheckIndexes: %v %v", d, err)
	}
	if d, err := e.eng.Checker().Log(bg); err != nil || len(d) > 0 {
		e.t.Fatalf("CheckLog: %v %v", d, err)
	}
}

// aggRaw opens the database of a closed env without an engine.
func (e *env) aggRaw() *sqlite.Store {
	e.t.Helper()
	st, err := sqlite.Open(filepath.Join(e.dir, "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { st.Close() })
	return st
}

func aggBestK(id string, keep int, keys ...podium.KeyDef) *podium.Board {
	return &podium.Board{ID: id, Keys: keys, Mode: podium.BestK, Keep: keep, Public: true}
}

func aggSumOfBests(id string, requireAll bool, keys []podium.KeyDef, sources ...string) *podium.Board {
	a := &podium.Aggregate{Kind: podium.SumOfBests, RequireAll: requireAll}
	for _, s := range sources {
		a.Sources = append(a.Sources, podium.AggregateSource{Board: s})
	}
	return &podium.Board{ID: id, Keys: keys, Aggregate: a, Public: true}
}

func TestBestKKeepsResults(t *testing.T) {
	e := newEnv(t)
	e.aggMustPut(aggBestK("beg", 3, asc("time"), desc("bbbv")))
	for i, keys := range [][]int64{{50, 1}, {40, 1}, {60, 1}, {40, 2}, {70, 9}, {45, 0}} {
		e.clock.Set(e.clock.Now().Add(time.Second))
		r := e.submit("beg", "alice", keys...)
		wantImproved := []bool{true, true, true, true, false, true}[i]
		if r.Improved != wantImproved {
			t.Errorf("submission %d %v: improved %v, want %v", i, keys, r.Improved, wantImproved)
		}
	}
	e.submit("beg", "bob", 41, 5)
	// Ranked by the best result; [40 2] beats [40 1] (more bbbv).
	eq(t, e.top("beg", ""), []string{"1:alice:[40 2]", "2:bob:[41 5]"})
	if got, want := e.aggResults("beg", "alice"), "[40 2] [40 1] [45 0]"; got != want {
		t.Fatalf("results %q, want %q", got, want)
	}
	e.aggClean()
	e.restart() // entries checkpointed at close, replayed otherwise
	if got, want := e.aggResults("beg", "alice"), "[40 2] [40 1] [45 0]"; got != want {
		t.Fatalf("results after restart %q, want %q", got, want)
	}
	e.aggClean()
	if _, err := engine.RebuildStore(bg, e.store); err != nil {
		t.Fatal(err)
	}
	e.restart()
	if got, want := e.aggResults("beg", "alice"), "[40 2] [40 1] [45 0]"; got != want {
		t.Fatalf("results after rebuild %q, want %q", got, want)
	}
	e.aggClean()
}

// An entry checkpointed ahead of its watermark must not get a result
// twice when the log after the watermark is replayed over it.
func TestBestKReplayOverCheckpointAhead(t *testing.T) {
	e := newEnv(t)
	e.aggMustPut(aggBestK("beg", 5, asc("time")))
	e.submit("beg", "alice", 20)
	e.submit("beg", "alice", 30) // a kept result newer than the best
	e.close()
	// The entries table holds both results but the watermark says 0.
	if err := e.aggRaw().Commit(bg, &podium.Batch{Watermarks: []podium.Watermark{{Board: "beg", Seq: 0}}}); err != nil {
		t.Fatal(err)
	}
	e.open()
	if got, want := e.aggResults("beg", "alice"), "[20] [30]"; got != want {
		t.Fatalf("results %q, want %q", got, want)
	}
	e.aggClean()
}

func TestBestKValidation(t *testing.T) {
	for _, tc := range []struct {
		b    podium.Board
		want string
	}{
		{podium.Board{ID: "x", Keys: []podium.KeyDef{asc("t")}, Mode: podium.BestK}, "keep must be 1 to 100"},
		{podium.Board{ID: "x", Keys: []podium.KeyDef{asc("t")}, Mode: podium.BestK, Keep: 101}, "keep must be 1 to 100"},
		{podium.Board{ID: "x", Keys: []podium.KeyDef{asc("t")}, Mode: podium.Best, Keep: 3}, "keep is for mode best_k only"},
	} {
		err := tc.b.Normalize()
		if podium.ErrorCode(err) != podium.ECodeInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.b, err, tc.want)
		}
	}
}

func TestAggregateSumOfBestsRequireAll(t *testing.T) {
	e := newEnv(t)
	keys := []podium.KeyDef{asc("time"), desc("bbbv")}
	for _, id := range []string{"beg", "int", "exp"} {
		e.board(id, podium.Best, podium.Never, keys...)
	}
	e.aggMustPut(aggSumOfBests("sum", true, keys, "beg", "int", "exp"))

	e.submit("beg", "alice", 1000, 10)
	e.submit("int", "alice", 9000, 50)
	eq(t, e.top("sum", ""), []string{})
	e.clock.Set(e.clock.Now().Add(time.Second))
	e.submit("exp", "alice", 30000, 100)
	eq(t, e.top("sum", ""), []string{"1:alice:[40000 160]"})
	// bob reaches the same sum later: alice stays first.
	e.clock.Set(e.clock.Now().Add(time.Second))
	e.submit("beg", "bob", 2000, 20)
	e.submit("int", "bob", 8000, 40)
	e.submit("exp", "bob", 30000, 100)
	eq(t, e.top("sum", ""), []string{"1:alice:[40000 160]", "2:bob:[40000 160]"})
	// A worse result changes nothing, not even the aggregate's seq.
	before, _ := e.eng.Board("sum")
	e.submit("beg", "alice", 1500, 10)
	after, _ := e.eng.Board("sum")
	if before.Seq != after.Seq {
		t.Fatalf("a worse source result logged an aggregate row: seq %d -> %d", before.Seq, after.Seq)
	}
	// An improvement moves the aggregate in the same commit.
	e.submit("beg", "bob", 1900, 20)
	eq(t, e.top("sum", ""), []string{"1:bob:[39900 160]", "2:alice:[40000 160]"})

	// Direct writes to the aggregate are refused.
	_, err := e.eng.Submit(bg, []engine.Score{{Board: "sum", Player: "carol", Keys: []int64{1, 1}}}, true, nil)
	if podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("submit to an aggregate: %v, want conflict", err)
	}
	if err := e.eng.DeleteEntry(bg, "sum", "", "alice"); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("delete on an aggregate: %v, want conflict", err)
	}
	// A source cannot be deleted while an aggregate reads it.
	if err := e.eng.DeleteBoard(bg, "int"); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("delete a source board: %v, want conflict", err)
	}
	// An admin delete on a source takes the player out (require_all).
	if err := e.eng.DeleteEntry(bg, "int", "", "bob"); err != nil {
		t.Fatal(err)
	}
	eq(t, e.top("sum", ""), []string{"1:alice:[40000 160]"})
	e.aggClean()
	e.restart()
	eq(t, e.top("sum", ""), []string{"1:alice:[40000 160]"})
	e.aggClean()
}

func TestAggregateSumWithoutRequireAll(t *testing.T) {
	e := newEnv(t)
	e.board("a", podium.Sum, podium.Daily, desc("p"))
	e.board("b", podium.Best, podium.Daily, desc("p"))
	s := aggSumOfBests("ab", false, []podium.KeyDef{desc("p")}, "a", "b")
	s.Reset = podium.Reset{Every: podium.Daily}
	e.aggMustPut(s)
	e.submit("a", "x", 5)
	e.submit("a", "x", 5)
	eq(t, e.top("ab", ""), []string{"1:x:[10]"})
	e.submit("b", "x", 7)
	eq(t, e.top("ab", ""), []string{"1:x:[17]"})
	// The next day is a new period everywhere.
	e.clock.Set(e.clock.Now().Add(24 * time.Hour))
	eq(t, e.top("ab", ""), []string{})
	e.submit("b", "x", 1)
	eq(t, e.top("ab", ""), []string{"1:x:[1]"})
	eq(t, e.top("ab", "previous"), []string{"1:x:[17]"})
	// Deleting yesterday's source entry updates yesterday's aggregate.
	if err := e.eng.DeleteEntry(bg, "a", "previous", "x"); err != nil {
		t.Fatal(err)
	}
	eq(t, e.top("ab", "previous"), []string{"1:x:[7]"})
	if err := e.eng.DeleteEntry(bg, "b", "previous", "x"); err != nil {
		t.Fatal(err)
	}
	eq(t, e.top("ab", "previous"), []string{})
	e.aggClean()
}

// The tournament total: best 3 beginner + best 2 intermediate + best 1
// expert times, missing ones filled with 10 s / 60 s / 240 s.
func TestAggregateBestKSumWithFill(t *testing.T) {
	e := newEnv(t)
	e.aggMustPut(aggBestK("beg", 5, asc("ms")))
	e.aggMustPut(aggBestK("int", 5, asc("ms")))
	e.aggMustPut(aggBestK("exp", 1, asc("ms")))
	total := &podium.Board{ID: "total", Keys: []podium.KeyDef{asc("ms")}, Public: true, Aggregate: &podium.Aggregate{
		Kind: podium.BestKSum, Sources: []podium.AggregateSource{
			{Board: "beg", K: 3, Fill: []int64{10_000}},
			{Board: "int", K: 2, Fill: []int64{60_000}},
			{Board: "exp", K: 1, Fill: []int64{240_000}},
		}}}
	e.aggMustPut(total)
	e.submit("beg", "alice", 4000)
	// 4000 + 2*10000 + 2*60000 + 240000
	eq(t, e.top("total", ""), []string{"1:alice:[384000]"})
	e.submit("beg", "alice", 3000)
	e.submit("beg", "alice", 5000)
	e.submit("beg", "alice", 2000) // best 3: 2000 3000 4000
	eq(t, e.top("total", ""), []string{"1:alice:[369000]"})
	e.submit("int", "alice", 50000)
	e.submit("exp", "alice", 200000)
	// 9000 + 50000 + 60000 + 200000
	eq(t, e.top("total", ""), []string{"1:alice:[319000]"})
	e.submit("beg", "alice", 9000) // not among the best 3: no change
	eq(t, e.top("total", ""), []string{"1:alice:[319000]"})
	e.submit("beg", "bob", 1) // 1 + 2*10000 + 2*60000 + 240000
	eq(t, e.top("total", ""), []string{"1:alice:[319000]", "2:bob:[380001]"})
	e.aggClean()
	e.restart()
	e.aggClean()
}

func TestAggregateBackfillAndRedefine(t *testing.T) {
	e := newEnv(t)
	e.board("a", podium.Best, podium.Never, desc("p"))
	e.board("b", podium.Best, podium.Never, desc("p"))
	e.submit("a", "x", 1)
	e.clock.Set(e.clock.Now().Add(time.Second))
	e.submit("b", "y", 3)
	e.clock.Set(e.clock.Now().Add(time.Second))
	e.submit("b", "x", 2)
	e.clock.Set(e.clock.Now().Add(time.Hour))
	// A new aggregate starts with what its sources imply, timed by when
	// the sources reached it: y got to 3 before x did.
	e.aggMustPut(aggSumOfBests("s", false, []podium.KeyDef{desc("p")}, "a", "b"))
	eq(t, e.top("s", ""), []string{"1:y:[3]", "2:x:[3]"})
	// Redefined: recomputed, y (no entry on a) leaves.
	e.aggMustPut(aggSumOfBests("s", true, []podium.KeyDef{desc("p")}, "a", "b"))
	eq(t, e.top("s", ""), []string{"1:x:[3]"})
	e.aggMustPut(aggSumOfBests("s", true, []podium.KeyDef{desc("p")}, "b"))
	eq(t, e.top("s", ""), []string{"1:y:[3]", "2:x:[2]"})
	e.aggClean()
	// Now a can go, b cannot.
	if err := e.eng.DeleteBoard(bg, "a"); err != nil {
		t.Fatal(err)
	}
	if err := e.eng.DeleteBoard(bg, "b"); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("delete source: %v", err)
	}
	// Changing a source so that the aggregate would break is refused.
	if err := e.aggPut(&podium.Board{ID: "b", Keys: []podium.KeyDef{asc("p")}, Public: true}); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("change a source's order: %v", err)
	}
}

func TestAggregateNested(t *testing.T) {
	e := newEnv(t)
	k := []podium.KeyDef{desc("p")}
	e.board("a", podium.Best, podium.Never, k...)
	e.board("b", podium.Best, podium.Never, k...)
	e.board("c", podium.Best, podium.Never, k...)
	e.aggMustPut(aggSumOfBests("ab", false, k, "a", "b"))
	e.aggMustPut(aggSumOfBests("abc", false, k, "ab", "c"))
	e.submit("a", "x", 1)
	e.submit("c", "x", 10)
	e.submit("b", "x", 100)
	eq(t, e.top("ab", ""), []string{"1:x:[101]"})
	eq(t, e.top("abc", ""), []string{"1:x:[111]"})
	// A cycle is refused.
	if err := e.aggPut(aggSumOfBests("ab", false, k, "a", "abc")); podium.ErrorCode(err) != podium.ECodeInvalid {
		t.Fatalf("cycle: %v", err)
	}
	e.aggClean()
	e.restart()
	eq(t, e.top("abc", ""), []string{"1:x:[111]"})
	e.aggClean()
}

func TestAggregateValidation(t *testing.T) {
	e := newEnv(t)
	k2 := []podium.KeyDef{asc("t"), desc("b")}
	e.board("two", podium.Best, podium.Never, k2...)
	e.board("one", podium.Best, podium.Never, asc("t"))
	e.board("daily", podium.Best, podium.Daily, k2...)
	e.board("flip", podium.Best, podium.Never, asc("t"), asc("b"))
	e.aggMustPut(aggBestK("bk", 3, k2...))
	bks := func(k int, fill ...int64) *podium.Board {
		return &podium.Board{ID: "agg", Keys: k2, Aggregate: &podium.Aggregate{Kind: podium.BestKSum,
			Sources: []podium.AggregateSource{{Board: "bk", K: k, Fill: fill}}}}
	}
	many := aggSumOfBests("agg", false, k2)
	for i := range 9 {
		many.Aggregate.Sources = append(many.Aggregate.Sources, podium.AggregateSource{Board: fmt.Sprintf("s%d", i)})
	}
	for _, tc := range []struct {
		name string
		b    *podium.Board
		want string
	}{
		{"missing source", aggSumOfBests("agg", false, k2, "two", "nope"), `board "nope" does not exist`},
		{"self", aggSumOfBests("agg", false, k2, "agg"), "cannot be a source of itself"},
		{"twice", aggSumOfBests("agg", false, k2, "two", "two"), "listed twice"},
		{"key count", aggSumOfBests("agg", false, k2, "one"), "has 1 keys"},
		{"key order", aggSumOfBests("agg", false, k2, "flip"), "key 1"},
		{"cadence", aggSumOfBests("agg", false, k2, "daily"), "cadences must be the same"},
		{"too many", many, "1 to 8 boards"},
		{"no sources", aggSumOfBests("agg", false, k2), "1 to 8 boards"},
		{"k over keep", bks(4, 1, 1), "keeping at least k = 4"},
		{"fill length", bks(2, 1), "one value per key"},
		{"k zero", bks(0, 1, 1), "k must be 1 to 100"},
		{"best_k_sum of a best board", &podium.Board{ID: "agg", Keys: k2, Aggregate: &podium.Aggregate{Kind: podium.BestKSum,
			Sources: []podium.AggregateSource{{Board: "two", K: 2, Fill: []int64{1, 1}}}}}, "mode best"},
		{"k on sum_of_bests", &podium.Board{ID: "agg", Keys: k2, Aggregate: &podium.Aggregate{Kind: podium.SumOfBests,
			Sources: []podium.AggregateSource{{Board: "two", K: 2}}}}, "for kind best_k_sum only"},
		{"kind", &podium.Board{ID: "agg", Keys: k2, Aggregate: &podium.Aggregate{Kind: "max",
			Sources: []podium.AggregateSource{{Board: "two"}}}}, "kind must be"},
		{"mode", &podium.Board{ID: "agg", Keys: k2, Mode: podium.Best, Aggregate: &podium.Aggregate{Kind: podium.SumOfBests,
			Sources: []podium.AggregateSource{{Board: "two"}}}}, "for mode aggregate only"},
		{"no definition", &podium.Board{ID: "agg", Keys: k2, Mode: podium.AggregateMode}, "needs an aggregate definition"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := e.aggPut(tc.b)
			if podium.ErrorCode(err) != podium.ECodeInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want invalid_argument with %q", err, tc.want)
			}
			if _, err := e.eng.Board("agg"); podium.ErrorCode(err) != podium.ECodeBoardNotFound {
				t.Fatalf("a refused aggregate exists: %v", err)
			}
		})
	}
	// A best_k source keeping fewer results than an aggregate counts
	// cannot have its keep lowered... nor any change breaking it.
	e.aggMustPut(bks(3, 1, 1))
	if err := e.aggPut(aggBestK("bk", 2, k2...)); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("lower keep under an aggregate's k: %v", err)
	}
}

// A sum that would leave the int64 range refuses the source write that
// causes it, and nothing of it is applied.
func TestAggregateOverflowRefusesTheSourceWrite(t *testing.T) {
	e := newEnv(t)
	e.board("a", podium.Best, podium.Never, desc("p"))
	e.board("b", podium.Best, podium.Never, desc("p"))
	e.aggMustPut(aggSumOfBests("s", false, []podium.KeyDef{desc("p")}, "a", "b"))
	e.submit("a", "x", 1<<62)
	_, err := e.eng.Submit(bg, []engine.Score{{Board: "b", Player: "x", Keys: []int64{1 << 62}}}, true, nil)
	if podium.ErrorCode(err) != podium.ECodeUnprocessable {
		t.Fatalf("overflowing write: %v, want unprocessable", err)
	}
	eq(t, e.top("b", ""), []string{})
	eq(t, e.top("s", ""), []string{"1:x:[4611686018427387904]"})
	e.aggClean()
}

// podium check reports an aggregate that disagrees with its sources, and
// podium rebuild repairs it.
func TestAggregateCheckAndRebuild(t *testing.T) {
	e := newEnv(t)
	k := []podium.KeyDef{asc("t")}
	e.board("a", podium.Best, podium.Never, k...)
	e.board("b", podium.Best, podium.Never, k...)
	e.aggMustPut(aggSumOfBests("s", true, k, "a", "b"))
	e.submit("a", "x", 10)
	e.submit("b", "x", 20)
	e.submit("a", "y", 1)
	e.aggClean()
	seq := e.eng.Boards(false)
	var head uint64
	for _, bi := range seq {
		if bi.ID == "s" {
			head = bi.Seq
		}
	}
	e.close()
	// Corrupt the aggregate's log: a wrong value for x, an entry for y.
	st := e.aggRaw()
	if err := st.Commit(bg, &podium.Batch{Submissions: []podium.Submission{
		{Seq: head + 1, Board: "s", Period: "all", Player: "x", Keys: []int64{99}, At: e.clock.Now()},
		{Seq: head + 2, Board: "s", Period: "all", Player: "y", Keys: []int64{5}, At: e.clock.Now()},
	}}); err != nil {
		t.Fatal(err)
	}
	diffs, err := engine.CheckStore(bg, st)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(diffs)
	for _, want := range []string{"board s period all player x: want keys [30] (from its sources), got keys [99]",
		"board s period all player y: want missing (from its sources), got keys [5]"} {
		if !strings.Contains(got, want) {
			t.Errorf("check: %s\nwant a diff %q", got, want)
		}
	}
	st.Close()
	e.open()
	if d, err := e.eng.Checker().Indexes(bg); err != nil || len(d) != 2 {
		t.Errorf("CheckIndexes on the corrupted aggregate: %v %v, want 2 diffs", d, err)
	}
	e.close()
	st = e.aggRaw()
	if _, err := engine.RebuildStore(bg, st); err != nil {
		t.Fatal(err)
	}
	if diffs, err := engine.CheckStore(bg, st); err != nil || len(diffs) > 0 {
		t.Fatalf("after rebuild: %v %v", diffs, err)
	}
	st.Close()
	e.open()
	eq(t, e.top("s", ""), []string{"1:x:[30]"})
	e.aggClean()
}

// Defining an aggregate over big boards recomputes it in steps with other
// writes in between; the writes that land meanwhile (on players visited
// already or not yet) leave it exact.
func TestAggregateRecomputeInStepsWithWrites(t *testing.T) {
	defer aggregate.SetChunkPlayersForTest(50)()
	e := newEnv(t)
	e.board("a", podium.Sum, podium.Never, desc("p"))
	e.board("b", podium.Sum, podium.Never, desc("p"))
	const players = 5000 // 100 steps
	want := map[string]int64{}
	for _, board := range []string{"a", "b"} {
		var scores []engine.Score
		for p := range players {
			name := fmt.Sprintf("p%04d", p)
			scores = append(scores, engine.Score{Board: board, Player: name, Keys: []int64{int64(p)}})
			want[name] += int64(p)
		}
		if _, err := e.eng.Submit(bg, scores, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	wrote := make(chan int)
	go func() {
		n := 0
		defer func() { wrote <- n }()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			name := fmt.Sprintf("p%04d", (i*7919)%players)
			board := []string{"a", "b"}[i%2]
			if _, err := e.eng.Submit(bg, []engine.Score{{Board: board, Player: name, Keys: []int64{1}}}, true, nil); err != nil {
				t.Error(err)
				return
			}
			want[name]++
			n++
		}
	}()
	e.aggMustPut(aggSumOfBests("ab", false, []podium.KeyDef{desc("p")}, "a", "b"))
	close(stop)
	t.Logf("%d writes landed while the aggregate was computed or after", <-wrote)
	p, err := e.eng.Top(bg, engine.Query{Board: "ab"}, 0, players)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entries) != players {
		t.Fatalf("%d aggregate entries, want %d", len(p.Entries), players)
	}
	for _, en := range p.Entries {
		if en.Keys[0] != want[en.Player] {
			t.Fatalf("player %s: aggregate %d, want %d", en.Player, en.Keys[0], want[en.Player])
		}
	}
	e.aggClean()
}
