package client_test

import (
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium/client"
)

// TestLeaguesAndGroups drives every league and group method against a
// real server: a weekly league settled after its week, and a group set
// with a group board over a points board.
func TestLeaguesAndGroups(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) // a Tuesday of 2026-W49
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	srv := newClockServer(t, nil, clock)
	ctx := ctxT(t)
	admin := client.New(srv.URL, client.WithKey(adminKey))

	lg := &client.League{CohortSize: 2, Tiers: []client.LeagueTier{{Name: "bronze", Promote: 1}, {Name: "silver", Relegate: 1}}}
	b, _, err := admin.PutBoard(ctx, "xp", client.BoardSpec{Keys: []client.RankKey{{Name: "xp", Order: "desc"}}, Mode: "sum",
		Public: client.Bool(true), Reset: &client.Reset{Every: "week", TZ: "UTC"}, League: lg})
	if err != nil || b.League == nil || b.League.CohortSize != 2 || len(b.League.Tiers) != 2 {
		t.Fatalf("PutBoard league: %+v %v", b, err)
	}
	// In this order: cohorts fill in the order of first scores.
	for _, s := range []struct {
		p string
		v int64
	}{{"amy", 50}, {"ben", 30}, {"cid", 10}} {
		must(admin.Submit(ctx, "xp", client.Score{Player: s.p, Score: score(s.v)}))
	}
	if ls := must(admin.Leagues().List(ctx)); len(ls) != 1 || ls[0].Board != "xp" || ls[0].Period != "2026-W49" {
		t.Fatalf("ListLeagues: %+v", ls)
	}
	if li := must(admin.Leagues().Get(ctx, "xp")); len(li.Tiers) != 2 || li.Tiers[0].Members != 3 || li.Tiers[0].Cohorts != 2 {
		t.Fatalf("GetLeague: %+v", li)
	}
	st := must(admin.Leagues().Standing(ctx, "xp", "cid", ""))
	if !st.Placed || st.Tier != "bronze" || st.Cohort == nil || *st.Cohort != 1 {
		t.Fatalf("LeagueStanding: %+v", st)
	}
	co := must(admin.Leagues().PlayerCohort(ctx, "xp", "ben", ""))
	if co.Cohort != 0 || len(co.Entries) != 2 || co.Entries[0].Player != "amy" || co.Entries[0].Zone != "promotion" || co.Entries[1].Zone != "safe" {
		t.Fatalf("PlayerCohort: %+v", co)
	}
	if cs := must(admin.Leagues().TierCohorts(ctx, "xp", "bronze", "", 0, 10)); cs.Total != 2 || cs.Cohorts[1].Members != 1 {
		t.Fatalf("TierCohorts: %+v", cs)
	}
	if c1 := must(admin.Leagues().Cohort(ctx, "xp", "bronze", 1, "")); len(c1.Entries) != 1 || c1.Entries[0].Player != "cid" {
		t.Fatalf("GetCohort: %+v", c1)
	}

	mu.Lock()
	now = now.AddDate(0, 0, 7) // 2026-W50: W49 has ended
	mu.Unlock()
	set := must(admin.Leagues().Settle(ctx, "xp"))
	if len(set.Settled) != 1 || set.Settled[0].Period != "2026-W49" || set.Settled[0].Players != 3 {
		t.Fatalf("SettleLeague: %+v", set)
	}
	again := must(admin.Leagues().Settle(ctx, "xp"))
	for _, s := range again.Settled {
		if s.Period == "2026-W49" && !s.Already {
			t.Fatalf("SettleLeague again settled W49 twice: %+v", again)
		}
	}
	h := must(admin.Leagues().History(ctx, "xp", "amy"))
	if len(h.Periods) == 0 || h.Periods[0].Period != "2026-W49" || h.Periods[0].Outcome != "promoted" || h.Periods[0].NextTier != "silver" {
		t.Fatalf("LeagueHistory: %+v", h)
	}
	if st := must(admin.Leagues().Standing(ctx, "xp", "amy", "")); st.Placed || st.Tier != "silver" {
		t.Fatalf("amy's next tier: %+v", st)
	}

	// Groups: a set, a group board over a points board, the members view.
	if _, _, err := admin.PutBoard(ctx, "pts", client.BoardSpec{Keys: []client.RankKey{{Name: "points", Order: "desc"}}, Public: client.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := admin.PutBoard(ctx, "clans", client.BoardSpec{Keys: []client.RankKey{{Name: "members", Order: "desc"}}, Public: client.Bool(true),
		GroupSet: &client.GroupSet{MaxMembers: 2, MaxPerPlayer: 1}}); err != nil {
		t.Fatal(err)
	}
	gb, _, err := admin.PutBoard(ctx, "clan-sum", client.BoardSpec{Keys: []client.RankKey{{Name: "points", Order: "desc"}}, Public: client.Bool(true),
		GroupBoard: &client.GroupBoard{Set: "clans", Source: "pts", Rule: "sum"}})
	if err != nil || gb.GroupBoard == nil || gb.GroupBoard.Rule != "sum" {
		t.Fatalf("PutBoard group board: %+v %v", gb, err)
	}
	for _, m := range []struct{ g, p string }{{"red", "amy"}, {"red", "ben"}, {"blue", "cid"}} {
		if j := must(admin.Groups().Join(ctx, "clans", m.g, m.p)); !j.Joined || j.Already {
			t.Fatalf("Join: %+v", j)
		}
	}
	if j := must(admin.Groups().Join(ctx, "clans", "red", "amy")); !j.Already || j.Members != 2 {
		t.Fatalf("Join again: %+v", j)
	}
	if _, err := admin.Groups().Join(ctx, "clans", "red", "dan"); client.CodeOf(err) != "conflict" {
		t.Fatalf("a third member of a group of 2: %v", err)
	}
	for p, v := range map[string]int64{"amy": 5, "ben": 7, "cid": 9} {
		must(admin.Submit(ctx, "pts", client.Score{Player: p, Score: score(v)}))
	}
	if p := must(admin.Top(ctx, "clan-sum", 0, 10, client.ReadOptions{})); ranking(p.Entries) != "1:red:[12] 2:blue:[9] " {
		t.Fatalf("group board: %s", ranking(p.Entries))
	}
	if p := must(admin.Groups().Entries(ctx, "pts", "clans", "red", client.ReadOptions{})); ranking(p.Entries) != "2:ben:[7] 3:amy:[5] " {
		t.Fatalf("GroupEntries: %s", ranking(p.Entries))
	}
	if gs := must(admin.Groups().OfPlayer(ctx, "ben", "clans")); len(gs) != 1 || gs[0] != "red" {
		t.Fatalf("PlayerGroups: %v", gs)
	}
	if ms := must(admin.Groups().Members(ctx, "clans", "red", 0, 10)); ms.Total != 2 || ms.Members[0].Player != "amy" {
		t.Fatalf("GroupMembers: %+v", ms)
	}
	if l := must(admin.Groups().Leave(ctx, "clans", "red", "ben")); !l.Left || l.Members != 1 {
		t.Fatalf("LeaveGroup: %+v", l)
	}
	if p := must(admin.Top(ctx, "clan-sum", 0, 10, client.ReadOptions{})); ranking(p.Entries) != "1:blue:[9] 2:red:[5] " {
		t.Fatalf("group board after a leave: %s", ranking(p.Entries))
	}
}
