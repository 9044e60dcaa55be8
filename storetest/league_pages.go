package storetest

import (
	"fmt"
	"sort"
	"testing"

	"github.com/podiumhq/podium"
)

// testLeaguePages: LeagueTiersPage and LeagueResultsPage (the league
// export's pages) walk every row of a league exactly once, in byte order
// of player, with any limit, and nothing of another period or league; a
// cursor between two players (one the store never held) resumes after it.
func testLeaguePages(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	ls := leagueStore(t, s)
	var periods []string
	for _, id := range []string{"lg", "lg2"} {
		b := &podium.Board{ID: id, Keys: []podium.KeyDef{{Name: "p", Order: podium.Desc}}, Reset: podium.Reset{Every: podium.Daily, TZ: "UTC"},
			League:    &podium.League{CohortSize: 30, Tiers: []podium.LeagueTier{{Name: "low", Promote: 5}, {Name: "high", Relegate: 5}}},
			CreatedAt: t0, UpdatedAt: t0}
		mustNormalize(t, b)
		if err := s.PutBoard(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	// Ids whose byte order differs from a case-folding or accent-aware
	// collation's: the cursor is compared in bytes by both stores.
	players := []string{"Zed", "amy", "Amy", "é", "e", "z", "a b", "a", "p10", "p9"}
	for i := range 30 {
		players = append(players, fmt.Sprintf("p%03d", i))
	}
	const days = 12
	want := map[string][]string{} // period → players with a result
	lb := &podium.LeagueBatch{Board: "lg"}
	other := &podium.LeagueBatch{Board: "lg2"}
	for d := range days {
		day := fmt.Sprintf("2026-11-%02d", d+1)
		periods = append(periods, day)
		start := podium.PeriodAt(podium.Reset{Every: podium.Daily, TZ: "UTC"}, at(0).AddDate(0, 0, d-29)).Start
		lb.Periods = append(lb.Periods, podium.LeaguePeriod{Board: "lg", Period: day, Start: start, SettledAt: at(int64(d + 1))})
		other.Periods = append(other.Periods, podium.LeaguePeriod{Board: "lg2", Period: day, Start: start, SettledAt: at(int64(d + 1))})
		for i, p := range players {
			if (i+d)%3 == 0 {
				continue // each period its own players
			}
			lb.Results = append(lb.Results, podium.LeagueResult{Board: "lg", Period: day, Player: p, Cohort: 0, Rank: i + 1, Outcome: podium.OutcomeStayed})
			other.Results = append(other.Results, podium.LeagueResult{Board: "lg2", Period: day, Player: p + "-x", Outcome: podium.OutcomeStayed})
			want[day] = append(want[day], p)
		}
		sort.Strings(want[day])
	}
	for i, p := range players {
		if i%2 == 0 {
			lb.Tiers = append(lb.Tiers, podium.LeagueTierOf{Player: p, Tier: 1})
			other.Tiers = append(other.Tiers, podium.LeagueTierOf{Player: p + "-x", Tier: 1})
		}
	}
	wantTiers := make([]string, 0, len(lb.Tiers))
	for _, x := range lb.Tiers {
		wantTiers = append(wantTiers, x.Player)
	}
	sort.Strings(wantTiers)
	commit(t, s, &podium.Batch{Parts: []podium.Part{ls.LeaguePart(lb), ls.LeaguePart(other)}})
	if n := len(lb.Results) + len(lb.Tiers); n < 200 {
		t.Fatalf("only %d rows", n)
	}
	walk := func(what string, want []string, page func(after string, limit int) ([]string, error)) {
		t.Helper()
		for _, limit := range []int{1, 2, 3, len(want), len(want) + 1} {
			var got []string
			after := ""
			for calls := 0; ; calls++ {
				if calls > len(want)+1 {
					t.Fatalf("%s limit %d: more pages than rows", what, limit)
				}
				ps, err := page(after, limit)
				if err != nil {
					t.Fatalf("%s limit %d after %q: %v", what, limit, after, err)
				}
				if len(ps) > limit {
					t.Fatalf("%s limit %d: a page of %d", what, limit, len(ps))
				}
				got = append(got, ps...)
				if len(ps) < limit {
					break
				}
				after = ps[len(ps)-1]
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s limit %d walked %q, want %q", what, limit, got, want)
			}
		}
	}
	for _, day := range periods {
		walk("results "+day, want[day], func(after string, limit int) ([]string, error) {
			rs, err := ls.LeagueResultsPage(ctx, "lg", day, after, limit)
			var out []string
			for _, r := range rs {
				if r.Board != "lg" || r.Period != day || r.Outcome != podium.OutcomeStayed {
					return nil, fmt.Errorf("row %+v", r)
				}
				out = append(out, r.Player)
			}
			return out, err
		})
	}
	walk("tiers", wantTiers, func(after string, limit int) ([]string, error) {
		ts, err := ls.LeagueTiersPage(ctx, "lg", after, limit)
		var out []string
		for _, x := range ts {
			if x.Tier != 1 {
				return nil, fmt.Errorf("row %+v", x)
			}
			out = append(out, x.Player)
		}
		return out, err
	})
	// A cursor the store never held: "p0" sorts between "p" ids' prefixes.
	rs, err := ls.LeagueResultsPage(ctx, "lg", periods[1], "p0", 1000)
	if err != nil {
		t.Fatal(err)
	}
	i := sort.SearchStrings(want[periods[1]], "p0")
	if len(rs) != len(want[periods[1]])-i || rs[0].Player <= "p0" {
		t.Fatalf("after p0: %d rows from %q, want %d", len(rs), rs[0].Player, len(want[periods[1]])-i)
	}
	if rs, err := ls.LeagueResultsPage(ctx, "lg", "2026-12-25", "", 10); err != nil || len(rs) != 0 {
		t.Fatalf("a period without results: %+v, %v", rs, err)
	}
}
