package league_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/league"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/tournament"
)

// lenv is an engine on SQLite with a fake clock and no settlement
// schedulers (tests call SettleDue), restartable on the same database.
type lenv struct {
	t     testing.TB
	path  string
	clock *clock
	store podium.Store
	eng   *engine.Engine
	wrap  func(*sqlite.Store) podium.Store
}

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

// day1 is a Tuesday noon: the league resets daily at midnight UTC.
var day1 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func newLenv(t testing.TB, wrap func(*sqlite.Store) podium.Store) *lenv {
	le := &lenv{t: t, path: filepath.Join(t.TempDir(), "podium.db"), clock: &clock{t: day1}, wrap: wrap}
	le.open()
	t.Cleanup(func() { le.eng.Close(); le.store.Close() })
	return le
}

func (le *lenv) open() {
	le.t.Helper()
	st, err := sqlite.Open(le.path, sqlite.Options{Sync: "normal"})
	if err != nil {
		le.t.Fatal(err)
	}
	le.store = st
	if le.wrap != nil {
		le.store = le.wrap(st)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	le.eng = engine.New(engine.Config{Store: le.store, Now: le.clock.Now, Logger: log,
		Modules: modules.With(modules.Config{Store: le.store, Logger: log, Tournament: tournament.Config{SettleEvery: -1},
			League: league.Config{SettleEvery: -1}})})
	if err := le.eng.Start(context.Background()); err != nil {
		le.t.Fatal(err)
	}
}

func (le *lenv) restart() {
	le.t.Helper()
	le.eng.Close()
	le.store.Close()
	le.open()
}

func (le *lenv) mod() *league.Module { return leagueOf(le.eng) }

func leagueOf(e *engine.Engine) *league.Module {
	for _, m := range e.Modules() {
		if x, ok := m.(*league.Module); ok {
			return x
		}
	}
	panic("no league module")
}

// leagueBoard is a daily league of three tiers in cohorts of size.
func leagueBoard(id string, size int, absent string) *podium.Board {
	return &podium.Board{ID: id, Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc}}, Mode: podium.Best,
		Reset: podium.Reset{Every: podium.Daily, TZ: "UTC"},
		League: &podium.League{CohortSize: size, Absent: absent, Tiers: []podium.LeagueTier{
			{Name: "bronze", Promote: 2}, {Name: "silver", Promote: 1, Relegate: 1}, {Name: "gold", Relegate: 2}}}}
}

func put(t testing.TB, e *engine.Engine, b *podium.Board) {
	t.Helper()
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.PutBoard(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

func submit(e *engine.Engine, board, player string, keys ...int64) error {
	_, err := e.Submit(context.Background(), []engine.Score{{Board: board, Player: player, Keys: keys}}, true, nil)
	return err
}

func mustSubmit(t testing.TB, e *engine.Engine, board, player string, keys ...int64) {
	t.Helper()
	if err := submit(e, board, player, keys...); err != nil {
		t.Fatalf("submit %s %v: %v", player, keys, err)
	}
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if podium.ErrorCode(err) != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

func standing(t testing.TB, m *league.Module, board, player string) league.Standing {
	t.Helper()
	s, err := m.Standing(context.Background(), board, player, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLeagueSeason: placement fills cohorts in order; a cohort reads with
// its zones; the next period waits for settlement, which promotes and
// relegates within each cohort; the new tiers place players in the next
// period; a second run and the history agree.
func TestLeagueSeason(t *testing.T) {
	ctx := context.Background()
	le := newLenv(t, nil)
	put(t, le.eng, leagueBoard("lg", 3, ""))
	m := le.mod()
	// Seven players: bronze cohorts 0 (p0 p1 p2), 1 (p3 p4 p5), 2 (p6).
	for i := range 7 {
		mustSubmit(t, le.eng, "lg", fmt.Sprintf("p%d", i), int64(10*i))
	}
	mustSubmit(t, le.eng, "lg", "p0", 100) // a second score does not place again
	for i := range 7 {
		s := standing(t, m, "lg", fmt.Sprintf("p%d", i))
		if !s.Placed || s.Tier != 0 || s.TierName != "bronze" || s.Cohort != i/3 {
			t.Fatalf("p%d: %+v, want bronze cohort %d", i, s, i/3)
		}
	}
	c, err := m.Cohort(ctx, "lg", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, e := range c.Entries {
		got += fmt.Sprintf("%d:%s:%s ", e.Rank, e.Player, e.Zone)
	}
	if want := "1:p0:promotion 2:p2:promotion 3:p1:safe "; got != want {
		t.Fatalf("cohort 0 = %q, want %q", got, want)
	}
	cs, total, _, err := m.Cohorts(ctx, "lg", "", 0, 0, 10)
	if err != nil || total != 3 || len(cs) != 3 || cs[0].Members != 3 || cs[2].Members != 1 {
		t.Fatalf("cohorts = %+v, %d, %v", cs, total, err)
	}

	// Day 2: a first score waits for day 1's settlement.
	le.clock.Set(day1.Add(24 * time.Hour))
	wantCode(t, submit(le.eng, "lg", "p0", 5), podium.ECodeLeagueSettling)
	rs, err := m.SettleDue(ctx)
	if err != nil || len(rs) != 1 {
		t.Fatalf("settle = %+v, %v", rs, err)
	}
	// Cohort 0: p0, p2 promote; cohort 1 (p5 p4 p3): p5, p4; cohort 2: p6 alone ranks 1: promotes.
	if r := rs[0]; r.Players != 7 || r.Promoted != 5 || r.Relegated != 0 || r.Already {
		t.Fatalf("report %+v", r)
	}
	if rs, err := m.SettleDue(ctx); err != nil || len(rs) != 0 {
		t.Fatalf("a second look = %+v, %v; want nothing due", rs, err)
	}
	for p, want := range map[string]string{"p0": "silver", "p1": "bronze", "p2": "silver", "p3": "bronze", "p6": "silver"} {
		if s := standing(t, m, "lg", p); s.Placed || s.TierName != want {
			t.Fatalf("%s on day 2: %+v, want %s, not placed", p, s, want)
		}
	}
	// The promoted fill silver's cohort 0 then 1, the rest bronze's.
	for _, p := range []string{"p6", "p5", "p4", "p0", "p1"} {
		mustSubmit(t, le.eng, "lg", p, 1)
	}
	for p, want := range map[string][2]int{"p6": {1, 0}, "p5": {1, 0}, "p4": {1, 0}, "p0": {1, 1}, "p1": {0, 0}} {
		if s := standing(t, m, "lg", p); !s.Placed || s.Tier != want[0] || s.Cohort != want[1] {
			t.Fatalf("%s on day 2: %+v, want tier %d cohort %d", p, s, want[0], want[1])
		}
	}
	h, err := m.History(ctx, "lg", "p0")
	if err != nil || len(h) != 2 || h[0].Settled || h[0].TierName != "silver" || !h[1].Settled || h[1].Outcome != podium.OutcomePromoted ||
		h[1].Rank != 1 || h[1].NewName != "silver" {
		t.Fatalf("history = %+v, %v", h, err)
	}
	// Day 3: silver cohort 0 (p4 p5 p6, all scored 1: the earliest ranks
	// first): p6 promotes, p4 relegates.
	le.clock.Set(day1.Add(48 * time.Hour))
	if _, err := m.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"p6": "gold", "p5": "silver", "p4": "bronze", "p0": "gold", "p1": "silver", "p2": "silver"} {
		if s := standing(t, m, "lg", p); s.TierName != want {
			t.Fatalf("%s on day 3: %+v, want %s", p, s, want)
		}
	}
}

// TestLeagueAbsentDrop: with absent "drop", a player with a tier who did
// not play drops one; with "keep" they keep it.
func TestLeagueAbsentDrop(t *testing.T) {
	ctx := context.Background()
	for _, absent := range []string{podium.LeagueAbsentKeep, podium.LeagueAbsentDrop} {
		t.Run(absent, func(t *testing.T) {
			le := newLenv(t, nil)
			put(t, le.eng, leagueBoard("lg", 3, absent))
			m := le.mod()
			for _, p := range []string{"a", "b", "c"} {
				mustSubmit(t, le.eng, "lg", p, 1)
			}
			le.clock.Set(day1.Add(24 * time.Hour))
			if _, err := m.SettleDue(ctx); err != nil {
				t.Fatal(err)
			}
			mustSubmit(t, le.eng, "lg", "b", 1) // a is absent on day 2
			le.clock.Set(day1.Add(48 * time.Hour))
			rs, err := m.SettleDue(ctx)
			if err != nil || len(rs) != 1 {
				t.Fatal(rs, err)
			}
			want := "silver"
			if absent == podium.LeagueAbsentDrop {
				want = "bronze"
			}
			if s := standing(t, m, "lg", "a"); s.TierName != want {
				t.Fatalf("absent a: %+v, want %s", s, want)
			}
		})
	}
}

// TestLeagueSettleTwice: a run for a settled period writes nothing, on the
// same node and after a restart.
func TestLeagueSettleTwice(t *testing.T) {
	ctx := context.Background()
	le := newLenv(t, nil)
	put(t, le.eng, leagueBoard("lg", 3, ""))
	for _, p := range []string{"a", "b", "c"} {
		mustSubmit(t, le.eng, "lg", p, 1)
	}
	le.clock.Set(day1.Add(24 * time.Hour))
	rs, err := le.mod().SettleDue(ctx)
	if err != nil || len(rs) != 1 {
		t.Fatal(rs, err)
	}
	le.restart()
	l, ok, err := le.store.(podium.TourneyStore).AcquireLease(ctx, "league-settlement", "local", le.clock.Now(), time.Minute)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	r, err := league.SettleUnder(le.mod(), ctx, "lg", "2026-12-01", l)
	if err != nil || !r.Already || r.Players != 3 || r.Promoted != 2 {
		t.Fatalf("a second run = %+v, %v; want already settled", r, err)
	}
	if s := standing(t, le.mod(), "lg", "a"); s.TierName != "silver" {
		t.Fatalf("a: %+v", s)
	}
}

// crashStore fails the commit that carries a settlement: before storing
// it (nothing stored), or after (stored, but the answer is lost).
type crashStore struct {
	*sqlite.Store
	before, after atomic.Bool
	settles       sync.Map
}

func (c *crashStore) LeaguePart(b *podium.LeagueBatch) podium.Part {
	p := c.Store.LeaguePart(b)
	if b.Fence != nil {
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

// TestLeagueSettleCrash: a settlement that crashes before its commit stores
// nothing and the next run (after a restart) settles; one that crashes
// after its commit is found settled, and nothing more is written. Either
// way the tiers are those of one settlement.
func TestLeagueSettleCrash(t *testing.T) {
	ctx := context.Background()
	for _, when := range []string{"before", "after"} {
		t.Run(when, func(t *testing.T) {
			var cs *crashStore
			le := newLenv(t, func(s *sqlite.Store) podium.Store { cs = &crashStore{Store: s}; return cs })
			put(t, le.eng, leagueBoard("lg", 3, ""))
			for i, p := range []string{"a", "b", "c", "d"} {
				mustSubmit(t, le.eng, "lg", p, int64(10-i))
			}
			le.clock.Set(day1.Add(24 * time.Hour))
			if when == "before" {
				cs.before.Store(true)
			} else {
				cs.after.Store(true)
			}
			if _, err := le.mod().Settle(ctx, "lg"); err == nil {
				t.Fatal("the injected crash did not fail the settlement")
			}
			le.restart() // the crash: a new process on what the disk holds
			rs, err := le.mod().SettleDue(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if when == "before" && (len(rs) != 1 || rs[0].Promoted != 3) {
				t.Fatalf("after a crash before the commit: %+v; want a run", rs)
			}
			if when == "after" && len(rs) != 0 {
				t.Fatalf("after a crash after the commit: %+v; want nothing due", rs)
			}
			for p, want := range map[string]string{"a": "silver", "b": "silver", "c": "bronze", "d": "silver"} {
				if s := standing(t, le.mod(), "lg", p); s.TierName != want {
					t.Fatalf("%s: %+v, want %s", p, s, want)
				}
			}
			h, err := le.mod().History(ctx, "lg", "a")
			if err != nil || len(h) != 1 || h[0].Outcome != podium.OutcomePromoted {
				t.Fatalf("history %+v, %v", h, err)
			}
		})
	}
}

// TestLeagueSettleFenced: a settler whose lease passed to another holder
// cannot commit what it computed under it.
func TestLeagueSettleFenced(t *testing.T) {
	ctx := context.Background()
	le := newLenv(t, nil)
	put(t, le.eng, leagueBoard("lg", 3, ""))
	mustSubmit(t, le.eng, "lg", "a", 1)
	le.clock.Set(day1.Add(24 * time.Hour))
	ts := le.store.(podium.TourneyStore)
	now := le.clock.Now()
	stale, ok, err := ts.AcquireLease(ctx, "league-settlement", "local", now, time.Minute)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, ok, err := ts.AcquireLease(ctx, "league-settlement", "other", now.Add(time.Minute), time.Minute); err != nil || !ok {
		t.Fatal("takeover failed", ok, err)
	}
	if _, err := league.SettleUnder(le.mod(), ctx, "lg", "2026-12-01", stale); err == nil {
		t.Fatalf("a settlement under a lost lease: %v", err)
	}
	ps, err := le.store.(podium.LeagueStore).LeaguePeriods(ctx, "lg")
	if err != nil || len(ps) != 1 || ps[0].Settled() {
		t.Fatalf("periods after a fenced run: %+v, %v", ps, err)
	}
}

// TestLeagueDefinition: bad league parts are refused; the shape cannot
// change once players are placed.
func TestLeagueDefinition(t *testing.T) {
	for name, mut := range map[string]func(*podium.Board){
		"no reset":       func(b *podium.Board) { b.Reset = podium.Reset{} },
		"no tiers":       func(b *podium.Board) { b.League.Tiers = nil },
		"top promotes":   func(b *podium.Board) { b.League.Tiers[2].Promote = 1 },
		"low relegates":  func(b *podium.Board) { b.League.Tiers[0].Relegate = 1 },
		"tiny cohort":    func(b *podium.Board) { b.League.CohortSize = 1 },
		"too many moves": func(b *podium.Board) { b.League.Tiers[1].Promote = 3 },
		"bad tier name":  func(b *podium.Board) { b.League.Tiers[1].Name = "Silver!" },
		"same tier":      func(b *podium.Board) { b.League.Tiers[1].Name = "bronze" },
		"bad absent":     func(b *podium.Board) { b.League.Absent = "forgive" },
		"count and pct":  func(b *podium.Board) { b.League.Tiers[1].PromotePct = 10 },
		"pct over 100": func(b *podium.Board) {
			b.League.Tiers[1] = podium.LeagueTier{Name: "silver", PromotePct: 60, RelegatePct: 50}
		},
		"top pct": func(b *podium.Board) { b.League.Tiers[2].PromotePct = 10 },
		// Both written by podium: a league's placements would ride on
		// entries the groups module owns (the branches met at the merge).
		"group board": func(b *podium.Board) {
			b.Mode = podium.Latest
			b.GroupBoard = &podium.GroupBoard{Set: "clans", Source: "src", Rule: "sum", K: 3}
		},
	} {
		b := leagueBoard("lg", 3, "")
		mut(b)
		if err := b.Normalize(); podium.ErrorCode(err) != podium.ECodeInvalid {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	// Percentages of each cohort's members, rounded down.
	pb := leagueBoard("pct", 30, "")
	pb.League.Tiers[1] = podium.LeagueTier{Name: "silver", PromotePct: 20, RelegatePct: 10}
	if err := pb.Normalize(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rank, n int
		want    string
	}{{6, 30, podium.ZonePromotion}, {7, 30, podium.ZoneSafe}, {27, 30, podium.ZoneSafe}, {28, 30, podium.ZoneRelegation},
		{2, 12, podium.ZonePromotion}, {3, 12, podium.ZoneSafe}, {12, 12, podium.ZoneRelegation}, {4, 4, podium.ZoneSafe}} {
		if got := pb.League.Zone(1, c.rank, c.n); got != c.want {
			t.Errorf("rank %d of %d at 20%%/10%%: %s, want %s", c.rank, c.n, got, c.want)
		}
	}
	le := newLenv(t, nil)
	put(t, le.eng, leagueBoard("lg", 3, ""))
	mustSubmit(t, le.eng, "lg", "a", 1)
	b := leagueBoard("lg", 4, "")
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}
	_, _, err := le.eng.PutBoard(context.Background(), b)
	wantCode(t, err, podium.ECodeConflict)
}

// TestLeagueCheck: podium check finds nothing in placements the engine
// made, and finds a placement moved to another cohort behind its back.
func TestLeagueCheck(t *testing.T) {
	ctx := context.Background()
	le := newLenv(t, nil)
	put(t, le.eng, leagueBoard("lg", 2, ""))
	for _, p := range []string{"a", "b", "c", "d", "e"} {
		mustSubmit(t, le.eng, "lg", p, 1)
	}
	if diffs, err := league.Check(ctx, le.store); err != nil || len(diffs) != 0 {
		t.Fatalf("check = %v, %v; want nothing", diffs, err)
	}
	// A placement written behind the engine's back: a third player in
	// cohort 0.
	ls := le.store.(podium.LeagueStore)
	if err := le.store.Commit(ctx, &podium.Batch{Parts: []podium.Part{ls.LeaguePart(&podium.LeagueBatch{Members: []podium.LeagueMember{
		{Board: "lg", Period: "2026-12-01", Player: "z", Tier: 0, Cohort: 0, Seq: 6, At: day1}}})}}); err != nil {
		t.Fatal(err)
	}
	diffs, err := league.Check(ctx, le.store)
	if err != nil || len(diffs) != 1 || diffs[0].Player != "z" {
		t.Fatalf("check = %v, %v; want z's cohort", diffs, err)
	}
}

// TestLeagueSettleMoved: a settlement is ranked off the writer; an entry
// of the ended period deleted between that ranking and the commit (an
// admin's delete) makes the commit refuse it and the ranking run again,
// and a period that keeps moving settles on the writer at the last try.
func TestLeagueSettleMoved(t *testing.T) {
	ctx := context.Background()
	for _, moves := range []int{1, 10} {
		t.Run(fmt.Sprint(moves), func(t *testing.T) {
			le := newLenv(t, nil)
			put(t, le.eng, leagueBoard("lg", 3, ""))
			m := le.mod()
			for i, p := range []string{"a", "b", "c"} {
				mustSubmit(t, le.eng, "lg", p, int64(10*(3-i))) // a 30, b 20, c 10
			}
			le.clock.Set(day1.Add(24 * time.Hour))
			victims := []string{"a", "b", "c"}
			league.OnPrepared(m, func(try int) {
				if try > moves || len(victims) == 0 {
					return
				}
				if err := le.eng.DeleteEntry(ctx, "lg", "2026-12-01", victims[0]); err != nil {
					t.Error(err)
				}
				victims = victims[1:]
			})
			rs, err := m.SettleDue(ctx)
			if err != nil || len(rs) != 1 {
				t.Fatalf("settle = %+v, %v", rs, err)
			}
			wantTries := 2
			if moves > 1 {
				wantTries = 3
			}
			if rs[0].Tries != wantTries || rs[0].Players != 3 {
				t.Fatalf("report %+v, want %d tries", rs[0], wantTries)
			}
			// A deleted member ranks after those with an entry.
			res, err := le.store.(podium.LeagueStore).LeagueResults(ctx, "lg", "2026-12-01")
			if err != nil || len(res) != 3 {
				t.Fatal(res, err)
			}
			got := map[string]int{}
			for _, r := range res {
				got[r.Player] = r.Rank
			}
			want := map[string]int{"a": 3, "b": 1, "c": 2} // one move: a deleted
			if moves > 1 {
				want = map[string]int{"a": 1, "b": 2, "c": 3} // all deleted: placement order
			}
			for p, r := range want {
				if got[p] != r {
					t.Fatalf("ranks %v, want %v", got, want)
				}
			}
		})
	}
}
