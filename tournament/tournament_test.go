package tournament_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/scoring"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/tournament"
)

// tenv is an engine on SQLite with a fake clock and no settlement
// scheduler (tests call SettleDue), restartable on the same database.
type tenv struct {
	t     testing.TB
	path  string
	clock *clock
	store podium.Store
	eng   *engine.Engine
	wrap  func(*sqlite.Store) podium.Store
}

// clock is a fake clock the test moves.
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

var tStart = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func newTenv(t testing.TB, wrap func(*sqlite.Store) podium.Store) *tenv {
	te := &tenv{t: t, path: filepath.Join(t.TempDir(), "podium.db"), clock: &clock{t: tStart.Add(-time.Hour)}, wrap: wrap}
	te.open()
	t.Cleanup(func() { te.eng.Close(); te.store.Close() })
	return te
}

func (te *tenv) open() {
	te.t.Helper()
	st, err := sqlite.Open(te.path, sqlite.Options{Sync: "normal"})
	if err != nil {
		te.t.Fatal(err)
	}
	te.store = st
	if te.wrap != nil {
		te.store = te.wrap(st)
	}
	te.eng = modules.Engine(noScheduler(engine.Config{Store: te.store, Now: te.clock.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	if err := te.eng.Start(context.Background()); err != nil {
		te.t.Fatal(err)
	}
}

// noScheduler gives cfg the standard modules, the tournament module's
// settlement scheduler off (tests call SettleDue).
func noScheduler(cfg engine.Config) engine.Config {
	cfg.Modules = modules.With(modules.Config{Store: cfg.Store, Logger: cfg.Logger, Tournament: tournament.Config{SettleEvery: -1}})
	return cfg
}

// feedOf is the engine's feed module (feed/).
func feedOf(e *engine.Engine) *feed.Module {
	for _, m := range e.Modules() {
		if f, ok := m.(*feed.Module); ok {
			return f
		}
	}
	return nil
}

// tourneyOf is the engine's tournament module (tournament/).
func tourneyOf(e *engine.Engine) *tournament.Module {
	for _, m := range e.Modules() {
		if x, ok := m.(*tournament.Module); ok {
			return x
		}
	}
	panic("no tournament module")
}

func (te *tenv) restart() {
	te.t.Helper()
	te.eng.Close()
	te.store.Close()
	te.open()
}

func (te *tenv) put(b *podium.Board) {
	te.t.Helper()
	if err := b.Normalize(); err != nil {
		te.t.Fatal(err)
	}
	if _, _, err := te.eng.PutBoard(context.Background(), b); err != nil {
		te.t.Fatal(err)
	}
}

func (te *tenv) submit(board, player string, keys ...int64) error {
	_, err := te.eng.Submit(context.Background(), []engine.Score{{Board: board, Player: player, Keys: keys}}, true, nil)
	return err
}

// values returns player -> keys of a board.
func values(t *testing.T, eng *engine.Engine, board string) map[string][]int64 {
	t.Helper()
	p, err := eng.Top(context.Background(), engine.Query{Board: board, IncludeHidden: true}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int64{}
	for _, e := range p.Entries {
		out[e.Player] = e.Keys
	}
	return out
}

func cup(id string, end time.Time, mut func(*podium.Tournament)) *podium.Board {
	tt := &podium.Tournament{Start: tStart, End: end, Weight: 1000, Category: "weekly", Series: "weekly", Ladder: "pts"}
	if mut != nil {
		mut(tt)
	}
	return &podium.Board{ID: id, Keys: []podium.KeyDef{{Name: "time_ms", Order: podium.Asc}}, Tournament: tt}
}

func ladder(te *tenv) {
	te.put(&podium.Board{ID: "pts:total", Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc}}, Mode: podium.Sum,
		Points: &podium.Points{Ladder: "pts", Kind: podium.PointsTotal}})
	te.put(&podium.Board{ID: "pts:weekly", Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc}}, Mode: podium.Sum,
		Points: &podium.Points{Ladder: "pts", Kind: podium.PointsCategory, Category: "weekly"}})
	te.put(&podium.Board{ID: "pts:current", Keys: []podium.KeyDef{{Name: "era", Order: podium.Desc}, {Name: "points", Order: podium.Desc}},
		Mode: podium.Sum, Points: &podium.Points{Ladder: "pts", Kind: podium.PointsCurrent}})
	te.put(&podium.Board{ID: "pts:best", Keys: []podium.KeyDef{{Name: "rank", Order: podium.Asc}}, Mode: podium.Best,
		Points: &podium.Points{Ladder: "pts", Kind: podium.PointsBest, Series: "weekly", By: "rank"}})
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if podium.ErrorCode(err) != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

// TestTournamentWindow: scores before the start and from the end on are
// refused with tournament_closed, item by item in a batch.
func TestTournamentWindow(t *testing.T) {
	te := newTenv(t, nil)
	te.put(cup("cup", tStart.Add(2*time.Hour), nil))
	te.put(&podium.Board{ID: "plain", Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}})
	wantCode(t, te.submit("cup", "a", 100), podium.ECodeTournamentClosed)
	rs, err := te.eng.Submit(context.Background(), []engine.Score{{Board: "cup", Player: "a", Keys: []int64{1}},
		{Board: "plain", Player: "a", Keys: []int64{1}}}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if podium.ErrorCode(rs[0].Err) != podium.ECodeTournamentClosed || rs[1].Err != nil {
		t.Fatalf("batch before the start: %v, %v; want tournament_closed, ok", rs[0].Err, rs[1].Err)
	}
	te.clock.Set(tStart)
	if err := te.submit("cup", "a", 100); err != nil {
		t.Fatalf("at the start: %v", err)
	}
	te.clock.Set(tStart.Add(2*time.Hour - time.Millisecond))
	if err := te.submit("cup", "b", 90); err != nil {
		t.Fatalf("just before the end: %v", err)
	}
	te.clock.Set(tStart.Add(2 * time.Hour))
	wantCode(t, te.submit("cup", "c", 80), podium.ECodeTournamentClosed)
	if got := values(t, te.eng, "cup"); len(got) != 2 {
		t.Fatalf("entries %v, want a and b only", got)
	}
	// Points boards take no scores from clients.
	ladder(te)
	wantCode(t, te.submit("pts:total", "a", 5), podium.ECodePointsBoard)
}

// TestTournamentJoins: with join_required only joined players play; the
// cap refuses joins past it; without join_required a first score joins,
// so the cap holds either way, and after a restart.
func TestTournamentJoins(t *testing.T) {
	ctx := context.Background()
	te := newTenv(t, nil)
	te.put(cup("req", tStart.Add(time.Hour), func(tt *podium.Tournament) { tt.JoinRequired = true; tt.MaxParticipants = 2 }))
	te.put(cup("cap", tStart.Add(time.Hour), func(tt *podium.Tournament) { tt.MaxParticipants = 2 }))
	// Joining before the start is fine.
	for _, p := range []string{"a", "b"} {
		r, err := tourneyOf(te.eng).Join(ctx, "req", p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Already {
			t.Fatalf("join %s: already", p)
		}
	}
	if r, err := tourneyOf(te.eng).Join(ctx, "req", "a"); err != nil || !r.Already || r.N != 1 || r.Participants != 2 {
		t.Fatalf("join a again = %+v, %v; want already, n 1, 2 participants", r, err)
	}
	_, err := tourneyOf(te.eng).Join(ctx, "req", "c")
	wantCode(t, err, podium.ECodeTournamentFull)
	te.clock.Set(tStart)
	if err := te.submit("req", "a", 10); err != nil {
		t.Fatal(err)
	}
	wantCode(t, te.submit("req", "c", 10), podium.ECodeNotJoined)

	if err := te.submit("cap", "x", 10); err != nil {
		t.Fatal(err)
	}
	if err := te.submit("cap", "y", 10); err != nil {
		t.Fatal(err)
	}
	wantCode(t, te.submit("cap", "z", 10), podium.ECodeTournamentFull)
	if err := te.submit("cap", "x", 5); err != nil {
		t.Fatalf("a participant's second score: %v", err)
	}
	te.restart()
	wantCode(t, te.submit("cap", "z", 10), podium.ECodeTournamentFull)
	wantCode(t, te.submit("req", "c", 10), podium.ECodeNotJoined)
	if err := te.submit("req", "b", 7); err != nil {
		t.Fatal(err)
	}
	js, total, err := tourneyOf(te.eng).Joined(ctx, "cap", 0, 10)
	if err != nil || total != 2 || js[0].Player != "x" || js[1].Player != "y" {
		t.Fatalf("Joined(cap) = %+v, %d, %v", js, total, err)
	}
	te.clock.Set(tStart.Add(time.Hour))
	_, err = tourneyOf(te.eng).Join(ctx, "cap", "late")
	wantCode(t, err, podium.ECodeTournamentClosed)
}

// play makes a tournament with five ranked players and settles it.
func play(t *testing.T, te *tenv, id string, end time.Time, weight int64, times map[string]int64) {
	t.Helper()
	te.put(cup(id, end, func(tt *podium.Tournament) { tt.Start = end.Add(-time.Hour); tt.Weight = weight }))
	te.clock.Set(end.Add(-time.Hour))
	for p, v := range times {
		if err := te.submit(id, p, v); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSettleTwice: a settlement pays round_half_to_even(weight/rank) to
// the total, category, current and best boards; running it again (by the
// scheduler or by hand) pays nothing more.
func TestSettleTwice(t *testing.T) {
	ctx := context.Background()
	te := newTenv(t, nil)
	ladder(te)
	end := tStart.Add(time.Hour)
	play(t, te, "w1", end, 1000, map[string]int64{"a": 10, "b": 20, "c": 30, "d": 40, "e": 50, "f": 60, "g": 70, "h": 80, "i": 90, "j": 100, "k": 110, "l": 120, "m": 130, "n": 140, "o": 150, "p": 160})
	if rs, err := tourneyOf(te.eng).SettleDue(ctx); err != nil || len(rs) != 0 {
		t.Fatalf("SettleDue before the end = %+v, %v", rs, err)
	}
	te.clock.Set(end)
	rs, err := tourneyOf(te.eng).SettleDue(ctx)
	if err != nil || len(rs) != 1 || rs[0].Runs != 1 || rs[0].Players != 16 {
		t.Fatalf("SettleDue = %+v, %v", rs, err)
	}
	want := map[string]int64{"a": 1000, "b": 500, "c": 333, "d": 250, "e": 200, "f": 167, "g": 143, "h": 125, "i": 111, "j": 100,
		"k": 91, "l": 83, "m": 77, "n": 71, "o": 67, "p": 62} // 1000/16 = 62.5 -> 62
	check := func(when string) {
		t.Helper()
		tot, cat, best, cur := values(t, te.eng, "pts:total"), values(t, te.eng, "pts:weekly"), values(t, te.eng, "pts:best"), values(t, te.eng, "pts:current")
		h := int64(730 * 24 * 3600 * 1000)
		era := scoring.Era(end.UnixMilli(), h)
		for p, v := range want {
			if tot[p][0] != v || cat[p][0] != v {
				t.Fatalf("%s: %s total %v weekly %v, want %d", when, p, tot[p], cat[p], v)
			}
			if k := scoring.Scaled(v, end.UnixMilli(), era, h); cur[p][0] != era || cur[p][1] != k {
				t.Fatalf("%s: %s current %v, want [%d %d]", when, p, cur[p], era, k)
			}
		}
		if best["a"][0] != 1 || best["p"][0] != 16 || len(tot) != 16 {
			t.Fatalf("%s: best %v, total %v", when, best, tot)
		}
	}
	check("first run")
	if rs, err := tourneyOf(te.eng).SettleDue(ctx); err != nil || len(rs) != 0 {
		t.Fatalf("SettleDue again = %+v, %v; want nothing due", rs, err)
	}
	r, err := tourneyOf(te.eng).Settle(ctx, "w1")
	if err != nil || r.Runs != 2 || r.Changed != 0 || r.Credits != 0 || r.Paid != 3380 {
		t.Fatalf("Settle by hand = %+v, %v; want run 2 changing nothing, 3380 paid", r, err)
	}
	check("second run")
	te.restart()
	check("after a restart")
	st, err := tourneyOf(te.eng).Tournament(ctx, "w1")
	if err != nil || st.State != "settled" || st.Settlement.Runs != 2 || st.Settlement.Paid != 3380 {
		t.Fatalf("Tournament = %+v, %v", st, err)
	}

	// An entry removed after the settlement: the next run takes its
	// points back and moves everyone below up by the difference.
	if err := te.eng.DeleteEntry(ctx, "w1", "", "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := tourneyOf(te.eng).Settle(ctx, "w1"); err != nil {
		t.Fatal(err)
	}
	tot := values(t, te.eng, "pts:total")
	if tot["a"][0] != 0 || tot["b"][0] != 1000 || tot["c"][0] != 500 || tot["p"][0] != 67 {
		t.Fatalf("after removing a: %v", tot)
	}
	if best := values(t, te.eng, "pts:best"); best["a"][0] != 1 || best["b"][0] != 1 {
		t.Fatalf("best ranks after the correction: %v (a keeps its best, b improves to 1)", best)
	}
}

// crashStore fails the commit that carries a settlement: before storing
// it (nothing stored), or after (stored, but the answer is lost).
type crashStore struct {
	*sqlite.Store
	before, after atomic.Bool
	settles       sync.Map // the parts (podium.Part) that carry a settlement
}

func (c *crashStore) TourneyPart(t *podium.TourneyBatch) podium.Part {
	p := c.Store.TourneyPart(t)
	if len(t.Settlements) > 0 {
		c.settles.Store(p, true)
	}
	return p
}

func (c *crashStore) CommitDeferred(ctx context.Context, b *podium.Batch) (uint64, error) {
	settles := false
	for _, p := range b.Parts {
		_, ok := c.settles.Load(p)
		settles = settles || ok
	}
	if settles {
		if c.before.Load() {
			return 0, errors.New("crash before the commit (injected)")
		}
		if c.after.Load() {
			if _, err := c.Store.CommitDeferred(ctx, b); err != nil {
				return 0, err
			}
			return 0, podium.OutcomeUnknown(errors.New("crash after the commit (injected)"))
		}
	}
	return c.Store.CommitDeferred(ctx, b)
}

func (c *crashStore) Commit(ctx context.Context, b *podium.Batch) error {
	t, err := c.CommitDeferred(ctx, b)
	if err != nil {
		return err
	}
	return c.Store.Sync(ctx, t)
}

// TestSettleCrashMidway: a settlement that crashes before its commit
// stores nothing and the next run pays everything; one that crashes after
// its commit (the engine stops writing; restart) is found paid, and the
// next run pays nothing more.
func TestSettleCrashMidway(t *testing.T) {
	ctx := context.Background()
	for _, when := range []string{"before", "after"} {
		t.Run(when, func(t *testing.T) {
			var cs *crashStore
			te := newTenv(t, func(s *sqlite.Store) podium.Store { cs = &crashStore{Store: s}; return cs })
			ladder(te)
			end := tStart.Add(time.Hour)
			play(t, te, "w1", end, 50, map[string]int64{"a": 1, "b": 2, "c": 3, "d": 4})
			te.clock.Set(end)
			if when == "before" {
				cs.before.Store(true)
			} else {
				cs.after.Store(true)
			}
			if _, err := tourneyOf(te.eng).Settle(ctx, "w1"); err == nil {
				t.Fatal("the injected crash did not fail the settlement")
			}
			if got := values(t, te.eng, "pts:total"); len(got) != 0 {
				t.Fatalf("memory shows credits of a failed settlement: %v", got)
			}
			te.restart() // the crash: a new process on what the disk holds
			rs, err := tourneyOf(te.eng).SettleDue(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if when == "before" && (len(rs) != 1 || rs[0].Credits == 0) {
				t.Fatalf("after a crash before the commit: %+v; want a run that pays", rs)
			}
			if when == "after" && len(rs) != 0 {
				t.Fatalf("after a crash after the commit: %+v; want nothing due", rs)
			}
			r, err := tourneyOf(te.eng).Settle(ctx, "w1")
			if err != nil || r.Credits != 0 {
				t.Fatalf("one more run = %+v, %v; want no credits", r, err)
			}
			tot := values(t, te.eng, "pts:total")
			want := map[string]int64{"a": 50, "b": 25, "c": 17, "d": 12} // 50/3 = 16.7 -> 17, 50/4 = 12.5 -> 12
			for p, v := range want {
				if tot[p][0] != v {
					t.Fatalf("total %v, want %v", tot, want)
				}
			}
		})
	}
}

// TestCheckSettlements: check reports payouts that no longer match the
// final ranks, a damaged payout row and a points board changed behind
// settlement's back; rebuild settles again where the ranks moved, and
// leaves the damaged payout to an operator.
func TestCheckSettlements(t *testing.T) {
	ctx := context.Background()
	te := newTenv(t, nil)
	ladder(te)
	end := tStart.Add(time.Hour)
	play(t, te, "w1", end, 1000, map[string]int64{"a": 1, "b": 2, "c": 3})
	te.clock.Set(end)
	if _, err := tourneyOf(te.eng).SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	check := func() []engine.Diff {
		t.Helper()
		d, err := tournament.CheckSettlements(ctx, te.store, te.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := check(); len(d) != 0 {
		t.Fatalf("a clean settlement: %v", d)
	}
	// Ranks move after the settlement: the payouts are stale.
	if err := te.eng.DeleteEntry(ctx, "w1", "", "a"); err != nil {
		t.Fatal(err)
	}
	d := check()
	if len(d) != 3 || d[0].Board != "w1" || d[0].Player != "a" || d[0].Want != "no payout (not ranked)" {
		t.Fatalf("after a removal: %v", d)
	}
	ids, err := tourneyOf(te.eng).RepairSettlements(ctx)
	if err != nil || len(ids) != 1 || ids[0] != "w1" {
		t.Fatalf("RepairSettlements = %v, %v", ids, err)
	}
	if d := check(); len(d) != 0 {
		t.Fatalf("after the repair: %v", d)
	}
	// A damaged payout row: reported, and not settled again (that would
	// pay b the difference a second time).
	if err := te.store.Commit(ctx, &podium.Batch{Parts: []podium.Part{te.store.(podium.TourneyStore).TourneyPart(&podium.TourneyBatch{Payouts: []podium.Payout{
		{Board: "w1", Player: "b", Rank: 1, Points: 10, At: end}}})}}); err != nil {
		t.Fatal(err)
	}
	d = check()
	if len(d) != 4 { // w1 payout of b, and b on pts:current, pts:total, pts:weekly
		t.Fatalf("a damaged payout: %v", d)
	}
	if ids, err := tourneyOf(te.eng).RepairSettlements(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("RepairSettlements on a damaged payout = %v, %v; want nothing settled", ids, err)
	}
	if tot := values(t, te.eng, "pts:total"); tot["b"][0] != 1000 {
		t.Fatalf("b's total %v after the refused repair, want 1000", tot["b"])
	}
	// A points board changed behind settlement's back.
	if err := te.store.Commit(ctx, &podium.Batch{Parts: []podium.Part{te.store.(podium.TourneyStore).TourneyPart(&podium.TourneyBatch{Payouts: []podium.Payout{
		{Board: "w1", Player: "b", Rank: 1, Points: 1000, At: end}}})}}); err != nil {
		t.Fatal(err)
	}
	if err := te.eng.DeleteEntry(ctx, "pts:weekly", "", "c"); err != nil {
		t.Fatal(err)
	}
	d = check()
	if len(d) != 1 || d[0].Board != "pts:weekly" || d[0].Player != "c" || d[0].Want != "500 points" || d[0].Got != "0 points" {
		t.Fatalf("a points board changed: %v", d)
	}
}

// TestSettleRetryLater: a settlement that fails (a best-by-score board
// whose keys do not fit the tournament's) is not retried by the scheduler
// every second, but a minute later; an admin's settle is not held back.
func TestSettleRetryLater(t *testing.T) {
	ctx := context.Background()
	te := newTenv(t, nil)
	te.put(&podium.Board{ID: "pts:total", Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc}}, Mode: podium.Sum,
		Points: &podium.Points{Ladder: "pts", Kind: podium.PointsTotal}})
	te.put(&podium.Board{ID: "pts:bestscore", Keys: []podium.KeyDef{{Name: "a", Order: podium.Asc}, {Name: "b", Order: podium.Asc}},
		Mode: podium.Best, Points: &podium.Points{Ladder: "pts", Kind: podium.PointsBest, Series: "weekly", By: "score"}})
	end := tStart.Add(time.Hour)
	play(t, te, "w1", end, 1000, map[string]int64{"a": 1})
	te.clock.Set(end)
	if rs, err := tourneyOf(te.eng).SettleDue(ctx); err != nil || len(rs) != 0 {
		t.Fatalf("SettleDue = %+v, %v; want the failed run left out", rs, err)
	}
	if _, err := tourneyOf(te.eng).Settle(ctx, "w1"); podium.ErrorCode(err) != podium.ECodeUnprocessable {
		t.Fatalf("Settle = %v, want unprocessable", err)
	}
	if err := te.eng.DeleteBoard(ctx, "pts:bestscore"); err != nil {
		t.Fatal(err)
	}
	te.clock.Set(end.Add(30 * time.Second))
	if rs, _ := tourneyOf(te.eng).SettleDue(ctx); len(rs) != 0 {
		t.Fatalf("retried after 30 s: %+v", rs)
	}
	te.clock.Set(end.Add(61 * time.Second))
	if rs, err := tourneyOf(te.eng).SettleDue(ctx); err != nil || len(rs) != 1 || rs[0].Paid != 1000 {
		t.Fatalf("a minute later: %+v, %v", rs, err)
	}
	if tot := values(t, te.eng, "pts:total"); tot["a"][0] != 1000 {
		t.Fatalf("total %v", tot)
	}
}

// TestSettleRecreatedTournament: a settled tournament deleted and made
// again under the same id starts unsettled, even when its window lies
// before the first one's settlement (results entered afterwards).
func TestSettleRecreatedTournament(t *testing.T) {
	ctx := context.Background()
	te := newTenv(t, nil)
	ladder(te)
	end := tStart.Add(time.Hour)
	play(t, te, "w1", end, 1000, map[string]int64{"a": 1})
	te.clock.Set(end.Add(10 * time.Hour)) // settled late
	if rs, err := tourneyOf(te.eng).SettleDue(ctx); err != nil || len(rs) != 1 {
		t.Fatalf("first SettleDue = %+v, %v", rs, err)
	}
	// Its points are credited: deleting it would orphan them.
	if err := te.eng.DeleteBoard(ctx, "w1"); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("delete of a settled tournament = %v, want conflict", err)
	}
	if pts := values(t, te.eng, "pts:total"); pts["a"][0] != 1000 {
		t.Fatalf("refused delete changed the points: %v", pts)
	}
	// Taking the points back first makes it deletable.
	if err := te.eng.DeleteEntry(ctx, "w1", "", "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := tourneyOf(te.eng).Settle(ctx, "w1"); err != nil {
		t.Fatal(err)
	}
	if err := te.eng.DeleteBoard(ctx, "w1"); err != nil {
		t.Fatal(err)
	}
	if pts := values(t, te.eng, "pts:total"); pts["a"][0] != 0 {
		t.Fatalf("points after taking them back: %v", pts)
	}
	te.clock.Set(end.Add(11 * time.Hour))
	te.put(cup("w1", end, nil)) // the same window, long past
	rs, err := tourneyOf(te.eng).SettleDue(ctx)
	if err != nil || len(rs) != 1 || rs[0].Runs != 1 {
		t.Fatalf("SettleDue of the new w1 = %+v, %v; want its first run", rs, err)
	}
	st, err := tourneyOf(te.eng).Tournament(ctx, "w1")
	if err != nil || st.State != "settled" || st.Settlement.Runs != 1 {
		t.Fatalf("Tournament = %+v, %v", st, err)
	}
}
