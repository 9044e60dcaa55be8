package engine_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/retention"
)

// Two PostgreSQL nodes: a period past keep_periods reads as empty and
// leaves the period list on both at once (each decides by the board and
// the clock), the sweep runs on the node that holds the lease only, in
// batches, and afterwards the database has only the kept periods, both
// nodes read the kept ones as before, and neither check reports the
// deleted ones; a node restarted after the sweep agrees.
func TestSharedRetention(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	clk := &clock{t: oldBase}
	type swept struct {
		*node
		ret *retention.Module
	}
	start := func(name string) swept {
		n, cfg := c.open(name, nodeOpts{})
		cfg.Now = clk.Now
		cfg.Modules = modules.With(modules.Config{Store: n.store, Logger: cfg.Logger, Retention: retention.Config{Every: -1, Batch: 13}})
		n.eng = engine.New(cfg)
		if err := n.eng.Start(bg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.eng.Close() })
		s := swept{node: n}
		for _, m := range n.eng.Modules() {
			if r, ok := m.(*retention.Module); ok {
				s.ret = r
			}
		}
		return s
	}
	a, b := start("a"), start("b")
	bd := newBoard(t, "d", podium.Best, 1)
	bd.Reset = podium.Reset{Every: podium.Daily, TZ: "UTC"}
	if _, _, err := a.eng.PutBoard(bg, bd); err != nil {
		t.Fatal(err)
	}
	var periods []string
	for d := range 5 {
		clk.Set(oldDay(d))
		var scores []engine.Score
		for i := range 20 {
			scores = append(scores, engine.Score{Board: "d", Player: fmt.Sprintf("p%03d", i), Keys: []int64{int64((i*37 + d*11) % 100)}})
		}
		if _, err := a.eng.Submit(bg, scores, false, nil); err != nil {
			t.Fatal(err)
		}
		periods = append(periods, podium.PeriodAt(bd.Reset, oldDay(d)).ID)
	}
	before := map[string]string{}
	for _, p := range periods {
		before[p] = answer(t, a.eng, "d", p)
		eventually(t, 10*time.Second, "b follows "+p, func() bool { return answer(t, b.eng, "d", p) == before[p] })
	}
	keep := 1
	if _, _, err := a.eng.UpdateBoard(bg, &podium.BoardUpdate{ID: "d", KeepPeriods: &keep}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "b learns keep_periods", func() bool {
		bi, err := b.eng.Board("d")
		return err == nil && bi.KeepPeriods == 1
	})
	gone, kept := periods[:3], periods[3:] // the clock is on day 4: days 3 and 4 are kept
	empty := answer(t, a.eng, "d", "2000-01-01")
	for _, n := range []swept{a, b} {
		for _, p := range gone {
			if got := answer(t, n.eng, "d", p); got != empty {
				t.Errorf("expired %s reads %q, want %q", p, got, empty)
			}
		}
		for _, p := range kept {
			if got := answer(t, n.eng, "d", p); got != before[p] {
				t.Errorf("kept %s reads %q, was %q", p, got, before[p])
			}
		}
		pcs, err := n.eng.Periods("d")
		if err != nil || len(pcs) != 2 || pcs[0].ID != kept[1] || pcs[1].ID != kept[0] {
			t.Errorf("Periods = %v, %v; want %v", pcs, err, kept)
		}
	}

	// One node sweeps: the first to take the lease.
	ra, err := a.ret.Sweep(bg)
	if err != nil || !ra.Held || ra.Rows != 120 || ra.More {
		t.Fatalf("a's sweep: %+v, %v; want 120 rows (3 days of 20 entries and 20 log rows)", ra, err)
	}
	if ra.Batches < 120/13 {
		t.Errorf("a swept 120 rows in %d batches of at most 13", ra.Batches)
	}
	if rb, err := b.ret.Sweep(bg); err != nil || rb.Held || rb.Rows != 0 {
		t.Errorf("b's sweep while a holds the lease: %+v, %v", rb, err)
	}
	pcs, err := a.store.Periods(bg, "d")
	if err != nil || len(pcs) != 2 {
		t.Errorf("stored periods after the sweep: %v, %v", pcs, err)
	}
	var logged []string
	if err := a.store.Log(bg, "d", 0, func(s *podium.Submission) error {
		if !slices.Contains(logged, s.Period) {
			logged = append(logged, s.Period)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(logged, kept) {
		t.Errorf("logged periods after the sweep: %v, want %v", logged, kept)
	}
	for name, n := range map[string]swept{"a": a, "b": b} {
		for what, check := range map[string]func() ([]engine.Diff, error){
			"indexes": func() ([]engine.Diff, error) { return n.eng.Checker().Indexes(bg) },
			"log":     func() ([]engine.Diff, error) { return n.eng.Checker().Log(bg) },
		} {
			if diffs, err := check(); err != nil || len(diffs) > 0 {
				t.Errorf("%s: check %s: %v, %v", name, what, diffs, err)
			}
		}
		for _, p := range kept {
			if got := answer(t, n.eng, "d", p); got != before[p] {
				t.Errorf("%s: kept %s after the sweep reads %q, was %q", name, p, got, before[p])
			}
		}
	}
	// Writes go on; a node started now loads only what is kept.
	if _, err := b.eng.Submit(bg, []engine.Score{{Board: "d", Player: "late", Keys: []int64{7}}}, true, nil); err != nil {
		t.Fatal(err)
	}
	c2 := start("c")
	for _, p := range append(gone, kept...) {
		want := answer(t, b.eng, "d", p)
		eventually(t, 10*time.Second, "c reads "+p, func() bool { return answer(t, c2.eng, "d", p) == want })
	}
}
