package engine_test

import (
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/league"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/tournament"
)

// moduleOf returns the engine's module of type T.
func moduleOf[T engine.Module](e *engine.Engine) T {
	for _, m := range e.Modules() {
		if x, ok := m.(T); ok {
			return x
		}
	}
	panic(fmt.Sprintf("no %T module", *new(T)))
}

func leagueOf(e *engine.Engine) *league.Module { return moduleOf[*league.Module](e) }

// startLeague starts a node on clk whose tournaments and leagues settle
// only when a test asks.
func (c *cluster) startLeague(name string, clk *clock) *node {
	t := c.t
	n, cfg := c.open(name, nodeOpts{})
	cfg.Now = clk.Now
	cfg.Modules = modules.With(modules.Config{Store: cfg.Store, Logger: cfg.Logger, Tournament: tournament.Config{SettleEvery: -1},
		League: league.Config{SettleEvery: -1}})
	n.eng = engine.New(cfg)
	if err := n.eng.Start(bg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.eng.Close() })
	return n
}

// TestSharedLeagueCohorts: players' first scores of a period arrive at
// once on two nodes of one PostgreSQL database (and some players on both):
// every player is placed once, no cohort exceeds its size, a tier's
// cohorts fill in order (all full but the last), and seq numbers the
// placements densely. At the period's end both nodes try to settle, many
// times over: the period is settled once; the next period's first scores
// place the promoted players in the next tier on either node.
func TestSharedLeagueCohorts(t *testing.T) {
	c := newCluster(t)
	day1 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{t: day1}
	a, b := c.startLeague("a", clk), c.startLeague("b", clk)
	const size = 5
	bd := &podium.Board{ID: "lg", Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc}}, Mode: podium.Best,
		Reset:  podium.Reset{Every: podium.Daily, TZ: "UTC"},
		League: &podium.League{CohortSize: size, Tiers: []podium.LeagueTier{{Name: "bronze", Promote: 2}, {Name: "silver", Relegate: 2}}}}
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

	rng := mrand.New(mrand.NewPCG(seed(t), 0))
	const players, workers = 63, 8
	type job struct {
		n      *node
		player string
		points int64
	}
	var jobs []job
	for i := range players {
		p := fmt.Sprintf("p%02d", i)
		n := a
		if rng.IntN(2) == 1 {
			n = b
		}
		jobs = append(jobs, job{n, p, int64(rng.IntN(1000))})
		if rng.IntN(4) == 0 { // the same player on the other node too
			other := a
			if n == a {
				other = b
			}
			jobs = append(jobs, job{other, p, int64(rng.IntN(1000))})
		}
	}
	rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	ch := make(chan job)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				if _, err := submitOn(j.n, "lg", j.player, j.points); err != nil {
					t.Errorf("submit %s: %v", j.player, err)
				}
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	if t.Failed() {
		return
	}

	ls := podium.LeagueStore(a.store)
	ms, err := ls.LeagueMembers(bg, "lg", "2026-12-01", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != players {
		t.Fatalf("%d placements, want %d (one per player)", len(ms), players)
	}
	for i, m := range ms {
		if m.Seq != int64(i+1) || m.Tier != 0 || m.Cohort != i/size {
			t.Fatalf("placement %d = %+v; want seq %d, tier 0, cohort %d", i, m, i+1, i/size)
		}
	}
	for _, n := range []*node{a, b} {
		cs, total, _, err := leagueOf(n.eng).Cohorts(bg, "lg", "", 0, 0, 100)
		if err != nil || total != (players+size-1)/size || len(cs) != int(total) {
			t.Fatalf("cohorts = %+v, %d, %v", cs, total, err)
		}
		for i, c := range cs {
			if c.Members > size || (i < len(cs)-1 && c.Members != size) {
				t.Fatalf("cohort %d has %d members (size %d): %+v", i, c.Members, size, cs)
			}
		}
	}

	// Day 2: both nodes race to settle day 1.
	clk.Set(day1.Add(24 * time.Hour))
	var mu sync.Mutex
	runs := 0
	for range 5 {
		for _, n := range []*node{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rs, err := leagueOf(n.eng).SettleDue(bg)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				for _, r := range rs {
					if !r.Already {
						runs++
					}
				}
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	if runs != 1 {
		t.Fatalf("%d settlement runs, want exactly 1", runs)
	}
	ps, err := ls.LeaguePeriods(bg, "lg")
	if err != nil || len(ps) != 1 || !ps[0].Settled() || ps[0].Players != players || ps[0].Promoted != 2*(players/size)+2 {
		t.Fatalf("periods = %+v, %v", ps, err)
	}
	// The promoted play first on day 2, half on each node: silver's
	// cohorts fill in order across the nodes too.
	var promoted []string
	tiers, err := ls.LeagueTiers(bg, "lg")
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range tiers {
		if tr.Tier == 1 {
			promoted = append(promoted, tr.Player)
		}
	}
	for i, p := range promoted {
		n := []*node{a, b}[i%2]
		eventually(t, 5*time.Second, "a first score of day 2 is taken", func() bool {
			_, err := submitOn(n, "lg", p, 1)
			return err == nil
		})
	}
	for i, p := range promoted {
		s, err := leagueOf(b.eng).Standing(bg, "lg", p, "")
		if err != nil || !s.Placed || s.TierName != "silver" || s.Cohort != i/size {
			t.Fatalf("%s on day 2: %+v, %v; want silver cohort %d", p, s, err, i/size)
		}
	}
}
