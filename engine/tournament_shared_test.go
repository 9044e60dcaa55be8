package engine_test

import (
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/modules"
)

// TestSharedSettleRace: two nodes on one PostgreSQL database reach a
// tournament's end together and both try to settle it, many times over:
// it is settled exactly once (one run, under the lease), every point is
// credited once, and both nodes show the same points boards. A node that
// joined a capped tournament on one node is seen by the other.
func TestSharedSettleRace(t *testing.T) {
	c := newCluster(t)
	tStart := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clk := &clock{t: tStart}
	start := func(name string) *node {
		n, cfg := c.open(name, nodeOpts{})
		cfg.Now = clk.Now
		n.eng = modules.Engine(noScheduler(cfg))
		if err := n.eng.Start(bg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.eng.Close() })
		return n
	}
	a, b := start("a"), start("b")
	put := func(bd *podium.Board) {
		t.Helper()
		if err := bd.Normalize(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.eng.PutBoard(bg, bd); err != nil {
			t.Fatal(err)
		}
	}
	end := tStart.Add(time.Hour)
	put(&podium.Board{ID: "cup", Keys: []podium.KeyDef{{Name: "time_ms", Order: podium.Asc}}, Tournament: &podium.Tournament{Start: tStart, End: end,
		Weight: 1000, Category: "weekly", Series: "weekly", Ladder: "pts", MaxParticipants: 3}})
	put(&podium.Board{ID: "pts:total", Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc}}, Mode: podium.Sum,
		Points: &podium.Points{Ladder: "pts", Kind: podium.PointsTotal}})
	put(&podium.Board{ID: "pts:current", Keys: []podium.KeyDef{{Name: "era", Order: podium.Desc}, {Name: "points", Order: podium.Desc}},
		Mode: podium.Sum, Points: &podium.Points{Ladder: "pts", Kind: podium.PointsCurrent}})
	eventually(t, 5*time.Second, "b sees the boards", func() bool {
		_, err1 := b.eng.Board("pts:current")
		_, err2 := b.eng.Board("cup")
		return err1 == nil && err2 == nil
	})
	// Players arrive on both nodes; the cap of 3 holds across them.
	for i, p := range []string{"p1", "p2", "p3"} {
		n := a
		if i%2 == 1 {
			n = b
		}
		if _, err := submitOn(n, "cup", p, int64(10*(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := submitOn(b, "cup", "p4", 1); podium.ErrorCode(err) != podium.ECodeTournamentFull {
		t.Fatalf("a fourth player on node b: %v, want tournament_full", err)
	}
	if _, err := submitOn(a, "cup", "p4", 1); podium.ErrorCode(err) != podium.ECodeTournamentFull {
		t.Fatalf("a fourth player on node a: %v, want tournament_full", err)
	}
	clk.Set(end)
	var wg sync.WaitGroup
	var mu sync.Mutex
	runs := 0
	for round := 0; round < 10; round++ {
		for _, n := range []*node{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rs, err := tourneyOf(n.eng).SettleDue(bg)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				runs += len(rs)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	if runs != 1 {
		t.Fatalf("%d settlement runs, want exactly 1", runs)
	}
	want := map[string]int64{"p1": 1000, "p2": 500, "p3": 333}
	for _, n := range []*node{a, b} {
		eventually(t, 5*time.Second, "both nodes show the totals", func() bool {
			got := map[string]int64{}
			for _, e := range top(t, n, "pts:total").Entries {
				got[e.Player] = e.Keys[0]
			}
			return len(got) == 3 && got["p1"] == want["p1"] && got["p2"] == want["p2"] && got["p3"] == want["p3"]
		})
	}
	st, err := tourneyOf(b.eng).Tournament(bg, "cup")
	if err != nil || st.State != "settled" || st.Settlement.Runs != 1 || st.Participants != 3 {
		t.Fatalf("Tournament on b = %+v, %v", st, err)
	}
}
