package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
)

// Shared mode: a node that keeps no old period past its read, and one that
// keeps them, both answer for old periods what the writing node answers,
// also after another node restored into and deleted from those periods:
// a row for a period not in memory is read from the database with it, and
// a row for a kept period is replayed into it.
func TestSharedOldPeriodsEvictedAndReplayed(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	clk := &clock{t: oldBase}
	start := func(name string, budget int64) *node {
		n, cfg := c.open(name, nodeOpts{})
		cfg.Now, cfg.OldPeriodsBytes = clk.Now, budget
		n.eng = modules.Engine(cfg)
		if err := n.eng.Start(bg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.eng.Close() })
		return n
	}
	a, none, kept := start("a", 0), start("none", -1), start("kept", 0)
	b := newBoard(t, "d", podium.Best, 1)
	b.Reset = podium.Reset{Every: podium.Daily, TZ: "UTC"}
	if _, _, err := a.eng.PutBoard(bg, b); err != nil {
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
		periods = append(periods, podium.PeriodAt(b.Reset, oldDay(d)).ID)
	}
	clk.Set(oldDay(15))
	for _, n := range []*node{none, kept} {
		eventually(t, 10*time.Second, "the nodes follow", func() bool {
			bn, _ := n.eng.Board("d")
			ba, _ := a.eng.Board("d")
			return bn.Seq == ba.Seq
		})
		// The periods they replayed while current aged out: under the
		// budget now.
		n.eng.SweepOldForTest()
	}
	// Every period this node held is gone. How many it held depends on
	// when it first saw the board: a node that loads the board after some
	// days have passed holds only that day and the one before, and knows
	// the older ones by count (a busy machine got 4 evictions of 5; one
	// that saw the board only after the clock moved holds none of them).
	if st := none.eng.OldPeriods(); st.Periods != 0 || st.Bytes != 0 || st.Evictions > int64(len(periods)) {
		t.Fatalf("the keep-none node after the sweep: %+v", st)
	}
	same := func(what string, n *node, p string) {
		t.Helper()
		eventually(t, 10*time.Second, what, func() bool {
			return answer(t, n.eng, "d", p) == answer(t, a.eng, "d", p)
		})
	}
	for _, p := range periods {
		same("the keep-none node reads "+p, none, p)
		same("the keeping node reads "+p, kept, p)
		if st := none.eng.OldPeriods(); st.Periods != 0 || st.Bytes != 0 {
			t.Fatalf("the keep-none node kept %s: %+v", p, st)
		}
	}
	if st := kept.eng.OldPeriods(); st.Periods != len(periods) || st.Evictions != 0 {
		t.Fatalf("the keeping node: %+v", st)
	}
	// Rows for old periods: one not in memory on none, kept on kept.
	p2 := periods[2]
	if res, err := a.eng.Restore(bg, "d", []engine.RestoreItem{{Period: p2, Player: "late", Keys: []int64{5000}, At: oldDay(2)}}); err != nil || res[0].Err != nil {
		t.Fatalf("restore: %v %+v", err, res)
	}
	if err := a.eng.DeleteEntry(bg, "d", p2, "p007"); err != nil {
		t.Fatal(err)
	}
	if got := answer(t, a.eng, "d", p2); !strings.Contains(got, ":late:[5000]") || strings.Contains(got, ":p007:") {
		t.Fatalf("the writing node after the restore and delete: %s", got)
	}
	same("the keep-none node after the rows", none, p2)
	same("the keeping node after the rows", kept, p2)
	eventually(t, 5*time.Second, "the keep-none node holds no old period", func() bool {
		st := none.eng.OldPeriods()
		return st.Periods == 0 && st.Bytes == 0
	})
	for _, p := range periods {
		same("the keep-none node rereads "+p, none, p)
		same("the keeping node rereads "+p, kept, p)
	}
}
