package engine_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/sqlite"
)

// What a board costs as their number grows (issue 17 item 9): nothing on
// the write path, a start or a read walks every board, except where a test
// below says so.

// countingStore is the SQLite store, counting the per-board calls a start
// would make and what the feed is asked.
type countingStore struct {
	*sqlite.Store
	mu        sync.Mutex
	perBoard  int        // LastSeq, Periods, Log and LoadEntries calls
	pruned    []string   // boards named to PruneFeed
	feedLists [][]string // the board lists of Feed queries
}

func (c *countingStore) count() {
	c.mu.Lock()
	c.perBoard++
	c.mu.Unlock()
}

func (c *countingStore) LastSeq(ctx context.Context, board string) (uint64, error) {
	c.count()
	return c.Store.LastSeq(ctx, board)
}

func (c *countingStore) Periods(ctx context.Context, board string) ([]podium.PeriodCount, error) {
	c.count()
	return c.Store.Periods(ctx, board)
}

func (c *countingStore) Log(ctx context.Context, board string, after uint64, fn func(*podium.Submission) error) error {
	c.count()
	return c.Store.Log(ctx, board, after, fn)
}

func (c *countingStore) LoadEntries(ctx context.Context, board, period string, fn func(*podium.Entry) error) error {
	c.count()
	return c.Store.LoadEntries(ctx, board, period, fn)
}

func (c *countingStore) PruneFeed(ctx context.Context, boards []string, keep, max int) (int, error) {
	c.mu.Lock()
	c.pruned = append(c.pruned, boards...)
	c.mu.Unlock()
	return c.Store.PruneFeed(ctx, boards, keep, max)
}

func (c *countingStore) Feed(ctx context.Context, q podium.FeedQuery) ([]podium.FeedEvent, error) {
	c.mu.Lock()
	c.feedLists = append(c.feedLists, q.Boards)
	c.mu.Unlock()
	return c.Store.Feed(ctx, q)
}

// pages reads the top 10 of every board as text.
func pages(t *testing.T, eng *engine.Engine) string {
	t.Helper()
	var out string
	for _, bi := range eng.Boards(false) {
		for _, period := range []string{"current", "previous"} {
			p, err := eng.Top(context.Background(), engine.Query{Board: bi.ID, Period: period}, 0, 10)
			if podium.ErrorCode(err) == podium.ECodeInvalid {
				continue // never resets: no previous period
			}
			if err != nil {
				t.Fatal(err)
			}
			out += fmt.Sprintf("%s %s seq %d total %d:", bi.ID, p.Period, bi.Seq, p.Total)
			for _, en := range p.Entries {
				out += fmt.Sprintf(" %d:%s:%v", en.Rank, en.Player, en.Keys)
			}
			out += "\n"
		}
	}
	return out
}

// TestStartReadsEveryBoardAtOnce: with a store that can (StartLoader), a
// start makes no query per board, and loads what the board-by-board start
// loads: entries of the current and previous periods, and the log after
// the watermarks replayed on top.
func TestStartReadsEveryBoardAtOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	day := podium.Reset{Every: podium.Daily, TZ: "UTC"}
	defs := map[string]*podium.Board{}
	for i := range 60 {
		b := &podium.Board{ID: fmt.Sprintf("b%02d", i), Keys: []podium.KeyDef{{Name: "t", Order: podium.Asc}}, Public: true}
		if i%2 == 0 {
			b.Reset = day
		}
		if i%5 == 0 {
			b.Mode = podium.Sum
		}
		if _, _, err := e.eng.PutBoard(ctx, b); err != nil {
			t.Fatal(err)
		}
		defs[b.ID] = b
	}
	for i := range 400 {
		e.submit(fmt.Sprintf("b%02d", i%50), fmt.Sprintf("p%d", i%13), int64(1000-i))
		if i == 200 {
			e.clock.Set(e.clock.Now().Add(24 * time.Hour)) // a second day: a previous period
		}
	}
	// A log tail past the watermarks, as a crash leaves it, on ten boards.
	e.close()
	st, err := sqlite.Open(filepath.Join(e.dir, "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	var tail []podium.Submission
	for i := range 10 {
		id := fmt.Sprintf("b%02d", i)
		seq, err := st.LastSeq(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		period := podium.PeriodAt(defs[id].Reset, e.clock.Now()).ID
		tail = append(tail, podium.Submission{Seq: seq + 1, Board: id, Period: period, Player: "tail", Keys: []int64{int64(i)}, At: e.clock.Now()},
			podium.Submission{Seq: seq + 2, Board: id, Period: period, Player: "p1", Keys: []int64{int64(i + 1)}, At: e.clock.Now()})
	}
	if err := st.Commit(ctx, &podium.Batch{Submissions: tail}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	cs := &countingStore{}
	e.openWith(func(c *engine.Config) { cs.Store = c.Store.(*sqlite.Store); c.Store = cs })
	if cs.perBoard != 0 {
		t.Errorf("the start made %d queries of one board each", cs.perBoard)
	}
	got := pages(t, e.eng)
	if !strings.Contains(got, ":tail:") {
		t.Fatalf("the log tail was not replayed:\n%s", got)
	}
	// The same database read board by board (the tail is checkpointed by
	// now: this start reads it from the entries).
	e.close()
	e.openWith(func(c *engine.Config) { c.Store = plainStore{c.Store} }) // feed_bench_test.go: podium.Store alone
	if want := pages(t, e.eng); got != want {
		t.Errorf("a start in bulk:\n%s\nboard by board:\n%s", got, want)
	}
}

// TestStartPrunesOnlyBoardsOverFeedCap: a start asks the store which boards
// hold more events than the cap, and prunes those, rather than every board
// (a statement each).
func TestStartPrunesOnlyBoardsOverFeedCap(t *testing.T) {
	e := newEnv(t)
	e.close()
	e.openWith(func(c *engine.Config) { c.Modules = feedCap(c, 10) })
	for i := range 40 {
		e.board(fmt.Sprintf("b%02d", i), podium.Best, podium.Never, asc("ms"))
		e.submit(fmt.Sprintf("b%02d", i), "p", 1000)
	}
	for i := range 8 {
		e.submit("b07", "p", int64(900-i)) // 9 events, under the cap of 10
	}
	e.close()
	cs := &countingStore{}
	e.openWith(func(c *engine.Config) { cs.Store = c.Store.(*sqlite.Store); c.Store = cs; c.Modules = feedCap(c, 5) })
	eventually(t, 10*time.Second, "b07's feed pruned to the new cap", func() bool { return len(storedFeed(t, e.store, "b07")) == 5 })
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if !slices.Equal(cs.pruned, []string{"b07"}) {
		t.Fatalf("the start pruned %d boards (%v), want only b07", len(cs.pruned), cs.pruned[:min(len(cs.pruned), 5)])
	}
}

// TestFeedOfEveryBoardNamesNone: the feed of every board the caller may
// read asks the store for the newest events of all boards and keeps those
// it may read, without naming every board; only when most of the newest
// events are of boards it may not read does it name those it may, so the
// answer is the same either way.
func TestFeedOfEveryBoardNamesNone(t *testing.T) {
	e := newEnv(t)
	e.close()
	cs := &countingStore{}
	e.openWith(func(c *engine.Config) { cs.Store = c.Store.(*sqlite.Store); c.Store = cs })
	e.board("pub", podium.Best, podium.Never, asc("ms"))
	priv := &podium.Board{ID: "priv", Keys: []podium.KeyDef{asc("ms")}}
	if _, _, err := e.eng.PutBoard(context.Background(), priv); err != nil {
		t.Fatal(err)
	}
	e.submit("pub", "alice", 50)
	for i := range 30 { // 31 events, newer than pub's 2
		e.clock.Set(e.clock.Now().Add(time.Second))
		e.submit("priv", "bob", int64(100-i))
	}
	public := func(_ string, public bool) bool { return public }
	read := func(limit int) []string {
		t.Helper()
		items, err := feedOf(e.eng).Feed(context.Background(), feed.Read{Limit: limit, Readable: public})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, it := range items {
			ids = append(ids, it.ID())
		}
		return ids
	}
	lists := func() [][]string {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		l := cs.feedLists
		cs.feedLists = nil
		return l
	}
	lists()
	// priv's 31 newest events hide pub's two from 4 pages of 5.
	if got := read(5); fmt.Sprint(got) != "[pub/1/new_leader pub/1/personal_best]" {
		t.Fatalf("public feed, limit 5: %v", got)
	}
	if l := lists(); len(l) != 5 || l[0] != nil || fmt.Sprint(l[4]) != "[pub]" {
		t.Fatalf("the store was asked %v, want 4 pages of every board then [pub]", l)
	}
	// With a limit of 10 the third page reaches pub's events: no list.
	if got := read(10); fmt.Sprint(got) != "[pub/1/new_leader pub/1/personal_best]" {
		t.Fatalf("public feed, limit 10: %v", got)
	}
	for _, l := range lists() {
		if l != nil {
			t.Fatalf("the feed named boards %v", l)
		}
	}
}

// TestPutBoardCostFlat: making a board allocates no more with 3,000 boards
// than with 100 (it copied every board's definition into a map to check
// the aggregates, and rebuilt the aggregate graph from every board).
func TestPutBoardCostFlat(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	n := 0
	put := func(count int) {
		for range count {
			b := &podium.Board{ID: fmt.Sprintf("b%05d", n), Keys: []podium.KeyDef{asc("ms")}, Public: true}
			if _, _, err := e.eng.PutBoard(ctx, b); err != nil {
				t.Fatal(err)
			}
			e.submit(b.ID, "p", 5) // a submit after each: the aggregate graph is used
			n++
		}
	}
	// TotalAlloc counts every goroutine's allocations, the engine's
	// background work (a checkpoint, a sweep) too, which now and then
	// lands in one window and doubled a figure (1 run in ~6 here): the
	// least of five windows is the PUT's own cost.
	perPut := func() float64 {
		const runs = 100
		best := math.Inf(1)
		for range 5 {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			put(runs)
			runtime.ReadMemStats(&after)
			best = min(best, float64(after.TotalAlloc-before.TotalAlloc)/runs)
		}
		return best
	}
	put(100)
	small := perPut()
	put(3000 - n)
	large := perPut()
	t.Logf("bytes allocated per PUT and submit: %.0f at ~100 boards, %.0f at ~3,000", small, large)
	if large > 1.5*small+4096 {
		t.Fatalf("a PUT at 3,000 boards allocates %.0f bytes, at 100 boards %.0f: it grows with the boards", large, small)
	}
}
