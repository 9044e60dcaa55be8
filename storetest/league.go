package storetest

import (
	"fmt"
	"testing"

	"github.com/podiumhq/podium"
)

// Leagues (podium.LeagueStore): placements, periods, results and tiers are
// stored by Commit in the batch's transaction, all or nothing with its log
// rows; a placement's seq is unique per (board, period), so a second
// placement of a seq fails the whole batch; a fence that no longer holds
// stores nothing; a settled period is upserted; DeleteBoard removes a
// league's rows.

func leagueStore(t *testing.T, s podium.Store) podium.LeagueStore {
	t.Helper()
	ls, ok := s.(podium.LeagueStore)
	if !ok {
		t.Fatalf("%T is not a podium.LeagueStore", s)
	}
	return ls
}

func testLeague(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	ls := leagueStore(t, s)
	b := &podium.Board{ID: "lg", Keys: []podium.KeyDef{{Name: "p", Order: podium.Desc}}, Reset: podium.Reset{Every: podium.Daily, TZ: "UTC"},
		League:    &podium.League{CohortSize: 2, Tiers: []podium.LeagueTier{{Name: "low", Promote: 1}, {Name: "high", Relegate: 1}}},
		CreatedAt: t0, UpdatedAt: t0}
	mustNormalize(t, b)
	if err := s.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	boards, err := s.Boards(ctx)
	if err != nil || len(boards) != 1 || !boards[0].League.SameShape(b.League) {
		t.Fatalf("Boards = %+v, %v: the league part is not kept", boards, err)
	}
	day := "2026-11-30"
	start := podium.PeriodAt(b.Reset, t0).Start
	mb := func(p string, tier, cohort int, seq int64) podium.LeagueMember {
		return podium.LeagueMember{Board: "lg", Period: day, Player: p, Tier: tier, Cohort: cohort, Seq: seq, At: at(seq)}
	}
	part := func(lb *podium.LeagueBatch) []podium.Part { return []podium.Part{ls.LeaguePart(lb)} }
	commit(t, s, &podium.Batch{Submissions: []podium.Submission{sub(b, 1, day, "amy", 5)}, Parts: part(&podium.LeagueBatch{
		Periods: []podium.LeaguePeriod{{Board: "lg", Period: day, Start: start}}, Members: []podium.LeagueMember{mb("amy", 0, 0, 1)}})})
	commit(t, s, &podium.Batch{Parts: part(&podium.LeagueBatch{
		Periods: []podium.LeaguePeriod{{Board: "lg", Period: day, Start: start}}, // again: kept as is
		Members: []podium.LeagueMember{mb("bob", 0, 0, 2), mb("cid", 0, 1, 3), mb("dan", 1, 0, 4)}})})
	// A seq twice fails the whole batch: its log row is not stored.
	if err := s.Commit(ctx, &podium.Batch{Submissions: []podium.Submission{sub(b, 2, day, "eve", 7)},
		Parts: part(&podium.LeagueBatch{Members: []podium.LeagueMember{mb("eve", 0, 1, 3)}})}); err == nil {
		t.Fatal("a second placement with seq 3 was stored")
	}
	if ms, err := ls.LeagueMembers(ctx, "lg", day, 1); err != nil || len(ms) != 3 || ms[0].Player != "bob" || ms[2].Seq != 4 {
		t.Fatalf("LeagueMembers after 1 = %+v, %v", ms, err)
	}
	if ms, err := ls.LeagueCohort(ctx, "lg", day, 0, 0); err != nil || len(ms) != 2 || ms[0].Player != "amy" || ms[1].Player != "bob" ||
		!ms[0].At.Equal(at(1).Truncate(1e6)) {
		t.Fatalf("LeagueCohort(0, 0) = %+v, %v", ms, err)
	}
	if m, ok, err := ls.LeagueMember(ctx, "lg", day, "cid"); err != nil || !ok || m.Tier != 0 || m.Cohort != 1 {
		t.Fatalf("LeagueMember(cid) = %+v, %v, %v", m, ok, err)
	}
	if _, ok, err := ls.LeagueMember(ctx, "lg", day, "eve"); err != nil || ok {
		t.Fatalf("LeagueMember(eve) = %v, %v; want none", ok, err)
	}
	if cs, err := ls.LeagueCohorts(ctx, "lg", day, 0, 0, 10); err != nil || len(cs) != 2 || cs[0] != (podium.CohortCount{Cohort: 0, Members: 2}) ||
		cs[1] != (podium.CohortCount{Cohort: 1, Members: 1}) {
		t.Fatalf("LeagueCohorts = %+v, %v", cs, err)
	}
	if cs, err := ls.LeagueCohorts(ctx, "lg", day, 0, 1, 10); err != nil || len(cs) != 1 || cs[0].Cohort != 1 {
		t.Fatalf("LeagueCohorts from 1 = %+v, %v", cs, err)
	}
	if n, err := ls.LeagueTierCounts(ctx, "lg", day); err != nil || len(n) != 2 || n[0] != 3 || n[1] != 1 {
		t.Fatalf("LeagueTierCounts = %v, %v", n, err)
	}
	if ps, err := ls.LeaguePeriods(ctx, "lg"); err != nil || len(ps) != 1 || ps[0].Settled() || !ps[0].Start.Equal(start) {
		t.Fatalf("LeaguePeriods = %+v, %v", ps, err)
	}

	// A settlement under a lease that moved on stores nothing.
	ts := tourneyStore(t, s)
	l, ok, err := ts.AcquireLease(ctx, "league-settlement", "n1", t0, 10_000_000_000)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	settle := func(f podium.Fence) *podium.LeagueBatch {
		return &podium.LeagueBatch{Board: "lg", Fence: &f,
			Periods: []podium.LeaguePeriod{{Board: "lg", Period: day, Start: start, SettledAt: at(100), Players: 4, Promoted: 1, Relegated: 1,
				Epoch: f.Epoch, Holder: f.Holder}},
			Results: []podium.LeagueResult{{Board: "lg", Period: day, Player: "amy", Tier: 0, Cohort: 0, Rank: 1, Outcome: podium.OutcomePromoted, NewTier: 1},
				{Board: "lg", Period: day, Player: "dan", Tier: 1, Cohort: 0, Rank: 1, Outcome: podium.OutcomeStayed, NewTier: 1}},
			Tiers: []podium.LeagueTierOf{{Player: "amy", Tier: 1}, {Player: "dan", Tier: 1}}}
	}
	if err := s.Commit(ctx, &podium.Batch{Parts: part(settle(podium.Fence{Name: l.Name, Holder: l.Holder, Epoch: l.Epoch + 1}))}); err == nil {
		t.Fatal("a settlement with a stale fence was stored")
	}
	if ps, _ := ls.LeaguePeriods(ctx, "lg"); ps[0].Settled() {
		t.Fatal("a fenced-off settlement settled the period")
	}
	commit(t, s, &podium.Batch{Parts: part(settle(podium.Fence{Name: l.Name, Holder: l.Holder, Epoch: l.Epoch}))})
	ps, err := ls.LeaguePeriods(ctx, "lg")
	if err != nil || len(ps) != 1 || !ps[0].Settled() || ps[0].Players != 4 || ps[0].Promoted != 1 || ps[0].Holder != "n1" ||
		!ps[0].SettledAt.Equal(at(100).Truncate(1e6)) {
		t.Fatalf("LeaguePeriods after settling = %+v, %v", ps, err)
	}
	if tiers, err := ls.LeagueTiers(ctx, "lg"); err != nil || len(tiers) != 2 || tiers[0] != (podium.LeagueTierOf{Player: "amy", Tier: 1}) {
		t.Fatalf("LeagueTiers = %+v, %v", tiers, err)
	}
	if tr, ok, err := ls.LeaguePlayerTier(ctx, "lg", "amy"); err != nil || !ok || tr != 1 {
		t.Fatalf("LeaguePlayerTier(amy) = %d, %v, %v", tr, ok, err)
	}
	if _, ok, err := ls.LeaguePlayerTier(ctx, "lg", "bob"); err != nil || ok {
		t.Fatalf("LeaguePlayerTier(bob) = %v, %v; want none", ok, err)
	}
	if h, err := ls.LeagueHistory(ctx, "lg", "amy", 10); err != nil || len(h) != 1 || h[0].Outcome != podium.OutcomePromoted || h[0].NewTier != 1 ||
		h[0].Rank != 1 || h[0].Period != day {
		t.Fatalf("LeagueHistory(amy) = %+v, %v", h, err)
	}

	if rs, err := ls.LeagueResults(ctx, "lg", day); err != nil || len(rs) != 2 || rs[0].Player != "amy" || rs[1].Player != "dan" ||
		rs[1].Outcome != podium.OutcomeStayed {
		t.Fatalf("LeagueResults = %+v, %v", rs, err)
	}
	if err := s.DeleteBoard(ctx, "lg"); err != nil {
		t.Fatal(err)
	}
	if ps, err := ls.LeaguePeriods(ctx, "lg"); err != nil || len(ps) != 0 {
		t.Fatalf("periods after DeleteBoard = %+v, %v", ps, err)
	}
	if ms, err := ls.LeagueMembers(ctx, "lg", day, 0); err != nil || len(ms) != 0 {
		t.Fatalf("members after DeleteBoard = %+v, %v", ms, err)
	}
	if tiers, err := ls.LeagueTiers(ctx, "lg"); err != nil || len(tiers) != 0 {
		t.Fatalf("tiers after DeleteBoard = %+v, %v", tiers, err)
	}
	if h, err := ls.LeagueHistory(ctx, "lg", "amy", 10); err != nil || len(h) != 0 {
		t.Fatalf("history after DeleteBoard = %+v, %v", h, err)
	}
}

// testLeagueMany: a settlement of more rows than one statement takes (a
// store may write them in multi-row statements) stores every row, and
// committing it again (a run after a crash whose answer was lost) leaves
// the same rows.
func testLeagueMany(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	ls := leagueStore(t, s)
	b := &podium.Board{ID: "lg", Keys: []podium.KeyDef{{Name: "p", Order: podium.Desc}}, Reset: podium.Reset{Every: podium.Daily, TZ: "UTC"},
		League:    &podium.League{CohortSize: 30, Tiers: []podium.LeagueTier{{Name: "low", Promote: 5}, {Name: "high", Relegate: 5}}},
		CreatedAt: t0, UpdatedAt: t0}
	mustNormalize(t, b)
	if err := s.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	day := "2026-11-30"
	start := podium.PeriodAt(b.Reset, t0).Start
	const n = 150 // 64+64+16+4+1+1: every statement size, not a multiple of any
	lb := &podium.LeagueBatch{Board: "lg",
		Periods: []podium.LeaguePeriod{{Board: "lg", Period: day, Start: start, SettledAt: at(100), Players: n}}}
	for i := range n {
		p := fmt.Sprintf("p%03d", i)
		r := podium.LeagueResult{Board: "lg", Period: day, Player: p, Cohort: i / 30, Rank: i%30 + 1, Outcome: podium.OutcomeStayed}
		if r.Rank <= 5 {
			r.Outcome, r.NewTier = podium.OutcomePromoted, 1
			lb.Tiers = append(lb.Tiers, podium.LeagueTierOf{Player: p, Tier: 1})
		}
		lb.Results = append(lb.Results, r)
	}
	for range 2 {
		commit(t, s, &podium.Batch{Parts: []podium.Part{ls.LeaguePart(lb)}})
		rs, err := ls.LeagueResults(ctx, "lg", day)
		if err != nil || len(rs) != n {
			t.Fatalf("LeagueResults = %d rows, %v; want %d", len(rs), err, n)
		}
		for i, r := range rs {
			if want := lb.Results[i]; r.Player != want.Player || r.Rank != want.Rank || r.Cohort != want.Cohort || r.Outcome != want.Outcome ||
				r.NewTier != want.NewTier {
				t.Fatalf("result %d = %+v, want %+v", i, r, want)
			}
		}
		tiers, err := ls.LeagueTiers(ctx, "lg")
		if err != nil || len(tiers) != len(lb.Tiers) {
			t.Fatalf("LeagueTiers = %d rows, %v; want %d", len(tiers), err, len(lb.Tiers))
		}
		for i, tr := range tiers {
			if tr != lb.Tiers[i] {
				t.Fatalf("tier %d = %+v, want %+v", i, tr, lb.Tiers[i])
			}
		}
	}
}
