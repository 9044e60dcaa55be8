package engine_test

import (
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/league"
	"github.com/podiumhq/podium/review"
)

func reviewOf(e *engine.Engine) *review.Module { return moduleOf[*review.Module](e) }

// TestSharedLeagueRestore: a league's tiers restored on node a (podium
// import) place players in them on both nodes. Node b had loaded the
// period before the restore (a score it holds for review reads the tiers
// and places no one), so the placement of that score's approval, on b,
// must not use what b loaded: it is in the restored tier. On a, the
// restoring node, the next first score reads its own write.
func TestSharedLeagueRestore(t *testing.T) {
	c := newCluster(t)
	day := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	clk := &clock{t: day}
	a, b := c.startLeague("a", clk), c.startLeague("b", clk)
	bd := &podium.Board{ID: "lg", Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc}}, Mode: podium.Best,
		Reset:  podium.Reset{Every: podium.Daily, TZ: "UTC"},
		Review: &podium.Review{Hold: podium.HoldAll},
		League: &podium.League{CohortSize: 5, Tiers: []podium.LeagueTier{{Name: "bronze", Promote: 1}, {Name: "silver", Relegate: 1}}}}
	if err := bd.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.eng.PutBoard(bg, bd); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "b sees the league", func() bool {
		bi, err := b.eng.Board("lg")
		return err == nil && bi.League != nil
	})
	held, err := submitOn(b, "lg", "pat", 10)
	if err != nil || held.Held == nil {
		t.Fatalf("pat's score on b: %+v, %v; want it held", held, err)
	}
	req := &league.RestoreRequest{Tiers: []league.RestoreTier{{Player: "pat", Tier: "silver"}, {Player: "sam", Tier: "silver"}}}
	if n, err := leagueOf(a.eng).Restore(bg, "lg", req); err != nil || n.Tiers != 2 {
		t.Fatalf("restore on a: %+v, %v", n, err)
	}
	if _, _, err := reviewOf(b.eng).Approve(bg, held.Held.ID, "mod", ""); err != nil {
		t.Fatalf("approve pat's score on b: %v", err)
	}
	sam, err := submitOn(a, "lg", "sam", 5) // held too: approved on a
	if err != nil || sam.Held == nil {
		t.Fatalf("sam's score on a: %+v, %v; want it held", sam, err)
	}
	if _, _, err := reviewOf(a.eng).Approve(bg, sam.Held.ID, "mod", ""); err != nil {
		t.Fatalf("approve sam's score on a: %v", err)
	}
	for _, p := range []string{"pat", "sam"} {
		for _, n := range []*node{a, b} {
			s, err := leagueOf(n.eng).Standing(bg, "lg", p, "")
			if err != nil || !s.Placed || s.TierName != "silver" {
				t.Fatalf("%s: %+v, %v; want placed in silver", p, s, err)
			}
		}
	}
}
