package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// clock is a settable fake clock.
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

type env struct {
	t     *testing.T
	dir   string
	clock *clock
	store *sqlite.Store
	eng   *engine.Engine
	// oldBytes is the engine's OldPeriodsBytes (0: the default).
	oldBytes int64
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), clock: &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}}
	e.open()
	t.Cleanup(e.close)
	return e
}

func (e *env) open() {
	e.t.Helper()
	st, err := sqlite.Open(filepath.Join(e.dir, "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		e.t.Fatal(err)
	}
	e.store = st
	e.eng = modules.Engine(engine.Config{Store: st, Now: e.clock.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OldPeriodsBytes: e.oldBytes})
	if err := e.eng.Start(context.Background()); err != nil {
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

// restart closes everything and loads again from the database.
func (e *env) restart() {
	e.close()
	e.open()
}

func (e *env) board(id string, mode podium.Mode, every podium.Every, keys ...podium.KeyDef) {
	e.t.Helper()
	b := &podium.Board{ID: id, Keys: keys, Mode: mode, Reset: podium.Reset{Every: every, TZ: "UTC"}, Public: true}
	if err := b.Normalize(); err != nil {
		e.t.Fatal(err)
	}
	if _, _, err := e.eng.PutBoard(context.Background(), b); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) submit(board, player string, keys ...int64) engine.Result {
	e.t.Helper()
	res, err := e.eng.Submit(context.Background(), []engine.Score{{Board: board, Player: player, Keys: keys}}, true, nil)
	if err != nil {
		e.t.Fatalf("submit %s %s %v: %v", board, player, keys, err)
	}
	return res[0]
}

func (e *env) top(board, period string) []string {
	e.t.Helper()
	p, err := e.eng.Top(context.Background(), engine.Query{Board: board, Period: period}, 0, 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([]string, len(p.Entries))
	for i, en := range p.Entries {
		out[i] = fmt.Sprintf("%d:%s:%v", en.Rank, en.Player, en.Keys)
	}
	return out
}

var (
	desc = func(n string) podium.KeyDef { return podium.KeyDef{Name: n, Order: podium.Desc} }
	asc  = func(n string) podium.KeyDef { return podium.KeyDef{Name: n, Order: podium.Asc} }
)

func eq(t *testing.T, got, want []string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ranking\n got %v\nwant %v", got, want)
	}
}

// TestSumNoLostUpdates hammers one player of a sum board from 64
// goroutines; every increment must count exactly once.
func TestSumNoLostUpdates(t *testing.T) {
	e := newEnv(t)
	e.board("counter", podium.Sum, podium.Never, desc("points"), desc("solves"))
	const workers, each = 64, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := e.eng.Submit(context.Background(), []engine.Score{{Board: "counter", Player: "alice", Keys: []int64{int64(w + 1), 1}}}, true, nil)
				if err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := int64(each * workers * (workers + 1) / 2)
	eq(t, e.top("counter", ""), []string{fmt.Sprintf("1:alice:[%d %d]", want, workers*each)})
	e.restart()
	eq(t, e.top("counter", ""), []string{fmt.Sprintf("1:alice:[%d %d]", want, workers*each)})
}

// TestBestComparesWholeTuples: a submission better on the second key but
// worse on the first must not be mixed into a pair nobody submitted.
func TestBestComparesWholeTuples(t *testing.T) {
	e := newEnv(t)
	e.board("ms", podium.Best, podium.Never, asc("time_ms"), desc("bbbv"))
	r := e.submit("ms", "alice", 41234, 150)
	if !r.Improved || r.Previous != nil || r.Entry.Rank != 1 {
		t.Fatalf("first submit: %+v", r)
	}
	r = e.submit("ms", "alice", 50000, 300) // worse time, better 3BV: keep old
	if r.Improved || r.Entry.Keys[0] != 41234 || r.Entry.Keys[1] != 150 {
		t.Fatalf("worse tuple replaced entry: %+v", r)
	}
	r = e.submit("ms", "alice", 41234, 160) // same time, more 3BV: better
	if !r.Improved || r.Entry.Keys[1] != 160 || r.Previous == nil || r.Previous.Keys[1] != 150 {
		t.Fatalf("better tuple kept old: %+v", r)
	}
	e.submit("ms", "bob", 41234, 160) // exact tie: alice reached it first
	e.submit("ms", "carol", -5, 0)    // negative values are valid
	eq(t, e.top("ms", ""), []string{"1:carol:[-5 0]", "2:alice:[41234 160]", "3:bob:[41234 160]"})
}

func TestLatestAndTies(t *testing.T) {
	e := newEnv(t)
	e.board("l", podium.Latest, podium.Never, desc("score"))
	e.submit("l", "a", 10)
	e.clock.Set(e.clock.Now().Add(time.Second))
	e.submit("l", "b", 10)
	e.submit("l", "a", 5)
	e.clock.Set(e.clock.Now().Add(time.Second))
	e.submit("l", "a", 10) // back to 10, but later than b now
	eq(t, e.top("l", ""), []string{"1:b:[10]", "2:a:[10]"})
}

// TestPeriods crosses midnight with the fake clock: the new day starts
// empty, yesterday is frozen and readable as previous and by id.
func TestPeriods(t *testing.T) {
	e := newEnv(t)
	e.board("daily", podium.Sum, podium.Daily, desc("points"))
	e.clock.Set(time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC))
	r := e.submit("daily", "alice", 5)
	if r.Period != "2026-11-30" {
		t.Fatalf("period = %s", r.Period)
	}
	bi, _ := e.eng.Board("daily")
	if bi.NextReset == nil || !bi.NextReset.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("next_reset = %v", bi.NextReset)
	}
	e.clock.Set(time.Date(2026, 12, 1, 0, 0, 0, 1e6, time.UTC))
	r = e.submit("daily", "bob", 3)
	if r.Period != "2026-12-01" || r.Entry.Rank != 1 {
		t.Fatalf("after midnight: %+v", r)
	}
	eq(t, e.top("daily", "current"), []string{"1:bob:[3]"})
	eq(t, e.top("daily", "previous"), []string{"1:alice:[5]"})
	eq(t, e.top("daily", "2026-11-30"), []string{"1:alice:[5]"})
	periods, _ := e.eng.Periods("daily")
	if fmt.Sprint(periods) != "[{2026-12-01 1} {2026-11-30 1}]" {
		t.Fatalf("periods = %v", periods)
	}
	// Two days later, both are old periods: loaded lazily after a restart.
	e.clock.Set(time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC))
	e.restart()
	eq(t, e.top("daily", "2026-11-30"), []string{"1:alice:[5]"})
	eq(t, e.top("daily", "2026-12-01"), []string{"1:bob:[3]"})
	eq(t, e.top("daily", "current"), []string{})
	if _, err := e.eng.Top(context.Background(), engine.Query{Board: "daily", Period: "2026-13-01"}, 0, 10); podium.ErrorCode(err) != podium.ECodeInvalid {
		t.Fatalf("bad period id: %v", err)
	}
}

func TestWeekAndMonthPeriodsInZone(t *testing.T) {
	tests := []struct {
		every podium.Every
		tz    string
		at    time.Time
		want  string
	}{
		{podium.Weekly, "UTC", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), "2026-W49"},   // a Monday
		{podium.Weekly, "UTC", time.Date(2026, 11, 29, 23, 59, 0, 0, time.UTC), "2026-W48"}, // Sunday
		{podium.Weekly, "UTC", time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC), "2026-W53"},    // ISO year
		{podium.Monthly, "Asia/Shanghai", time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC), "2026-12"},
		{podium.Daily, "Asia/Shanghai", time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC), "2026-12-01"},
		{podium.Daily, "America/New_York", time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC), "2026-11-29"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.every, tc.tz, tc.at), func(t *testing.T) {
			if got := podium.PeriodAt(podium.Reset{Every: tc.every, TZ: tc.tz}, tc.at).ID; got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestHiddenPlayersCloseUp(t *testing.T) {
	e := newEnv(t)
	e.board("h", podium.Best, podium.Never, desc("score"))
	e.submit("h", "a", 30)
	e.submit("h", "b", 20)
	e.submit("h", "c", 10)
	if _, err := e.eng.PutPlayer(context.Background(), &podium.Player{ID: "b", Name: "Bee", Hidden: true, Meta: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	eq(t, e.top("h", ""), []string{"1:a:[30]", "2:c:[10]"})
	p, _ := e.eng.Top(context.Background(), engine.Query{Board: "h", IncludeHidden: true}, 0, 10)
	if len(p.Entries) != 3 || p.Entries[1].Name != "Bee" || !p.Entries[1].Hidden || p.Total != 3 {
		t.Fatalf("admin view: %+v", p)
	}
	e.restart()
	eq(t, e.top("h", ""), []string{"1:a:[30]", "2:c:[10]"})
	if _, err := e.eng.Entry(context.Background(), engine.Query{Board: "h"}, "b"); podium.ErrorCode(err) != podium.ECodeEntryNotFound {
		t.Fatalf("hidden entry read publicly: %v", err)
	}
}

// TestIdempotency: the same key and body answer once; another body is a
// conflict; the claim survives a restart.
func TestIdempotency(t *testing.T) {
	e := newEnv(t)
	e.board("s", podium.Sum, podium.Never, desc("n"))
	ctx := context.Background()
	claim, prior, err := e.eng.Idempotency().Claim(ctx, "k1 /x", "abc", []byte("h1"))
	if err != nil || prior != nil || claim == nil {
		t.Fatalf("first claim: %v %v %v", claim, prior, err)
	}
	if _, err := e.eng.Submit(ctx, []engine.Score{{Board: "s", Player: "p", Keys: []int64{1}}}, true, claim); err != nil {
		t.Fatal(err)
	}
	claim.Finish(200, []byte("answer\n"))
	_, prior, err = e.eng.Idempotency().Claim(ctx, "k1 /x", "abc", []byte("h1"))
	if err != nil || prior == nil || string(prior.Body) != "answer\n" {
		t.Fatalf("retry: %v %v", prior, err)
	}
	if _, _, err := e.eng.Idempotency().Claim(ctx, "k1 /x", "abc", []byte("h2")); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("other body: %v", err)
	}
	e.restart()
	_, prior, err = e.eng.Idempotency().Claim(ctx, "k1 /x", "abc", []byte("h1"))
	if err != nil || prior == nil || string(prior.Body) != "answer\n" || prior.Status != 200 {
		t.Fatalf("after restart: %+v %v", prior, err)
	}
	eq(t, e.top("s", ""), []string{"1:p:[1]"})
}

// TestCheckAndReplay: the entries table equals a replay of the log, and
// the indexes equal the entries table, including after deletes.
func TestCheckAndReplay(t *testing.T) {
	e := newEnv(t)
	e.board("c", podium.Best, podium.Daily, asc("t"), desc("b"))
	for i := 0; i < 200; i++ {
		e.submit("c", fmt.Sprintf("p%d", i%37), int64(1000-i*7%301), int64(i%5))
		if i == 100 {
			e.clock.Set(e.clock.Now().Add(24 * time.Hour))
		}
	}
	if err := e.eng.DeleteEntry(context.Background(), "c", "current", "p3"); err != nil {
		t.Fatal(err)
	}
	if err := e.eng.DeleteEntry(context.Background(), "c", "current", "p3"); podium.ErrorCode(err) != podium.ECodeEntryNotFound {
		t.Fatalf("second delete: %v", err)
	}
	diffs, err := engine.CheckStore(context.Background(), e.store)
	if err != nil || len(diffs) != 0 {
		t.Fatalf("CheckStore: %v %v", diffs, err)
	}
	diffs, err = e.eng.Checker().Indexes(context.Background())
	if err != nil || len(diffs) != 0 {
		t.Fatalf("CheckIndexes: %v %v", diffs, err)
	}
	// Corrupt the entries table behind the engine's back: both checks see it.
	bad := podium.Entry{Board: "c", Period: "2026-12-01", Player: "intruder", Keys: []int64{1, 1}, At: e.clock.Now(), Seq: 999999}
	if err := e.store.Commit(context.Background(), &podium.Batch{Upserts: []podium.Entry{bad}}); err != nil {
		t.Fatal(err)
	}
	if d, _ := engine.CheckStore(context.Background(), e.store); len(d) != 1 || d[0].Player != "intruder" {
		t.Fatalf("CheckStore missed the intruder: %v", d)
	}
	if d, _ := e.eng.Checker().Indexes(context.Background()); len(d) != 1 || d[0].Player != "intruder" {
		t.Fatalf("CheckIndexes missed the intruder: %v", d)
	}
	if _, err := engine.RebuildStore(context.Background(), e.store); err != nil {
		t.Fatal(err)
	}
	if d, _ := engine.CheckStore(context.Background(), e.store); len(d) != 0 {
		t.Fatalf("after rebuild: %v", d)
	}
}

func TestBoardRules(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.board("r", podium.Best, podium.Never, desc("score"))
	if _, err := e.eng.Submit(ctx, []engine.Score{{Board: "r", Player: "p", Keys: []int64{1, 2}}}, true, nil); podium.ErrorCode(err) != podium.ECodeInvalid {
		t.Fatalf("wrong key count: %v", err)
	}
	if _, err := e.eng.Submit(ctx, []engine.Score{{Board: "nope", Player: "p", Keys: []int64{1}}}, true, nil); podium.ErrorCode(err) != podium.ECodeBoardNotFound {
		t.Fatalf("unknown board: %v", err)
	}
	e.submit("r", "p", 1)
	b := &podium.Board{ID: "r", Keys: []podium.KeyDef{asc("score")}}
	b.Normalize()
	if _, _, err := e.eng.PutBoard(ctx, b); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("changing keys of a board with entries: %v", err)
	}
	b = &podium.Board{ID: "r", Title: "renamed", Keys: []podium.KeyDef{desc("score")}}
	b.Normalize()
	if _, created, err := e.eng.PutBoard(ctx, b); err != nil || created {
		t.Fatalf("retitle: %v %v", created, err)
	}
	if err := e.eng.DeleteBoard(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	e.restart()
	if _, err := e.eng.Board("r"); podium.ErrorCode(err) != podium.ECodeBoardNotFound {
		t.Fatalf("deleted board came back: %v", err)
	}
}

func TestSumOverflowIsUnprocessable(t *testing.T) {
	e := newEnv(t)
	e.board("o", podium.Sum, podium.Never, desc("n"))
	e.submit("o", "p", 1<<62)
	e.submit("o", "p", 1<<62-1) // exactly MaxInt64 in total
	_, err := e.eng.Submit(context.Background(), []engine.Score{{Board: "o", Player: "p", Keys: []int64{1}}}, true, nil)
	if podium.ErrorCode(err) != podium.ECodeUnprocessable {
		t.Fatalf("overflow: %v", err)
	}
	eq(t, e.top("o", ""), []string{"1:p:[9223372036854775807]"})
}

// TestAuthenticateAdminAllocatesNothing: the admin's requests (every
// benchmark's, and an operator's) are told apart before the secret's hash
// is turned into the hex string API keys are looked up by.
func TestAuthenticateAdminAllocatesNothing(t *testing.T) {
	e := newEnv(t)
	const secret = "pdm_an-admin-secret-long-enough-to-be-real-0123456789"
	e.eng.Keys().SetAdminSecret(secret)
	if k, ok := e.eng.Keys().Authenticate(secret); !ok || k != engine.AdminKey {
		t.Fatalf("admin secret: %v %v", k, ok)
	}
	if n := testing.AllocsPerRun(100, func() { e.eng.Keys().Authenticate(secret) }); n != 0 {
		t.Fatalf("authenticating the admin allocates %v times; want 0", n)
	}
}
