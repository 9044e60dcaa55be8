package engine_test

import (
	"fmt"
	mrand "math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Two nodes write the two sources of one aggregate at the same time, for
// the same players: each group locks the aggregate with both sources, so
// the aggregate always adds up what the sources hold, exactly.
func TestSharedAggregateTwoNodes(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	na, nb := c.start("a", nodeOpts{}), c.start("b", nodeOpts{})
	for _, id := range []string{"src.a", "src.b"} {
		if _, _, err := na.eng.PutBoard(bg, newBoard(t, id, podium.Sum, 1)); err != nil {
			t.Fatal(err)
		}
	}
	agg := newBoard(t, "total", podium.Best, 1)
	agg.Mode = ""
	agg.Aggregate = &podium.Aggregate{Kind: podium.SumOfBests, Sources: []podium.AggregateSource{{Board: "src.a"}, {Board: "src.b"}}}
	if _, _, err := na.eng.PutBoard(bg, agg); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Second, "the aggregate made on a shows on b", func() bool {
		bi, err := nb.eng.Board("total")
		return err == nil && bi.Aggregate != nil
	})

	rng := mrand.New(mrand.NewPCG(seed(t), 0))
	const each, players = 60, 4
	var (
		mu   sync.Mutex
		want = map[string]int64{}
		wg   sync.WaitGroup
	)
	for w, nd := range []*node{na, nb, na, nb} {
		board := []string{"src.a", "src.b"}[w%2]
		var plan [][2]int64
		for range each {
			plan = append(plan, [2]int64{rng.Int64N(players), 1 + rng.Int64N(100)})
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, s := range plan {
				player := fmt.Sprintf("p%d", s[0])
				if _, err := submitOn(nd, board, player, s[1]); err != nil {
					t.Errorf("submit: %v", err)
					return
				}
				mu.Lock()
				want[player] += s[1]
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var heads [2]uint64
	for _, nd := range []*node{na, nb} {
		for i, id := range []string{"src.a", "src.b"} {
			bi, _ := nd.eng.Board(id)
			heads[i] = max(heads[i], bi.Seq)
		}
	}
	for _, nd := range []*node{na, nb} {
		eventually(t, 10*time.Second, "both nodes caught up", func() bool {
			a, _ := nd.eng.Board("src.a")
			b, _ := nd.eng.Board("src.b")
			return a.Seq == heads[0] && b.Seq == heads[1] && a.Seq+b.Seq == 4*each
		})
	}
	pa, pb := top(t, na, "total"), top(t, nb, "total")
	eventually(t, 10*time.Second, "the nodes agree on the aggregate", func() bool {
		pa, pb = top(t, na, "total"), top(t, nb, "total")
		return reflect.DeepEqual(pa.Entries, pb.Entries)
	})
	if len(pa.Entries) != len(want) {
		t.Fatalf("%d aggregate entries, want %d", len(pa.Entries), len(want))
	}
	for _, e := range pa.Entries {
		if e.Keys[0] != want[e.Player] {
			t.Errorf("player %s: aggregate %d, want %d", e.Player, e.Keys[0], want[e.Player])
		}
	}
	r, err := engine.CheckStoreDetail(bg, na.store)
	if err != nil || len(r.Diffs) > 0 {
		t.Fatalf("check: %v %v", r.Diffs, err)
	}
	for _, nd := range []*node{na, nb} {
		if d, err := nd.eng.Checker().Indexes(bg); err != nil || len(d) > 0 {
			t.Fatalf("CheckIndexes: %v %v", d, err)
		}
	}
}

// A node that has not heard of an aggregate yet (no broker, a poll far
// away) and writes one of its sources still updates it: it finds the
// definition under its lock on the source before it computes.
func TestSharedAggregateWriterThatHasNotHeard(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	na := c.start("a", nodeOpts{})
	nb := c.start("b", nodeOpts{noBroker: true, poll: time.Hour})
	if _, _, err := na.eng.PutBoard(bg, newBoard(t, "src", podium.Best, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := submitOn(na, "src", "x", 5); err != nil {
		t.Fatal(err)
	}
	agg := newBoard(t, "agg", podium.Best, 1)
	agg.Mode = ""
	agg.Aggregate = &podium.Aggregate{Kind: podium.SumOfBests, Sources: []podium.AggregateSource{{Board: "src"}}}
	if _, _, err := na.eng.PutBoard(bg, agg); err != nil {
		t.Fatal(err)
	}
	if nb.eng.Knows("agg") {
		t.Fatal("b heard of the aggregate: the test needs a node that has not")
	}
	if _, err := submitOn(nb, "src", "y", 7); err != nil {
		t.Fatal(err)
	}
	if _, err := submitOn(nb, "src", "x", 9); err != nil {
		t.Fatal(err)
	}
	for _, nd := range []*node{na, nb} {
		eventually(t, 5*time.Second, "the aggregate has both players on both nodes", func() bool {
			p, err := nd.eng.Top(bg, engine.Query{Board: "agg"}, 0, 10)
			return err == nil && fmt.Sprint(aggEntriesOf(p)) == "[x:9 y:7]"
		})
	}
	p := top(t, na, "agg")
	if got := fmt.Sprint(aggEntriesOf(p)); got != "[x:9 y:7]" {
		t.Fatalf("aggregate %s, want [x:9 y:7]", got)
	}
	if r, err := engine.CheckStoreDetail(bg, na.store); err != nil || len(r.Diffs) > 0 {
		t.Fatalf("check: %v %v", r.Diffs, err)
	}
}

func aggEntriesOf(p engine.Page) []string {
	var out []string
	for _, e := range p.Entries {
		out = append(out, fmt.Sprintf("%s:%d", e.Player, e.Keys[0]))
	}
	return out
}

// A node that has not heard of an aggregate yet still refuses a change of
// one of its sources that would break it, and the source's delete: it
// applies the definitions committed before its lock on the source before
// it checks (it read every board from the database on each PUT before).
func TestSharedAggregateCheckThatHasNotHeard(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	na := c.start("a", nodeOpts{})
	nb := c.start("b", nodeOpts{noBroker: true, poll: time.Hour})
	if _, _, err := na.eng.PutBoard(bg, newBoard(t, "src", podium.Best, 1)); err != nil {
		t.Fatal(err)
	}
	agg := newBoard(t, "agg", podium.Best, 1)
	agg.Mode = ""
	agg.Aggregate = &podium.Aggregate{Kind: podium.SumOfBests, Sources: []podium.AggregateSource{{Board: "src"}}}
	if _, _, err := na.eng.PutBoard(bg, agg); err != nil {
		t.Fatal(err)
	}
	if nb.eng.Knows("agg") {
		t.Fatal("b heard of the aggregate: the test needs a node that has not")
	}
	two := newBoard(t, "src", podium.Best, 2) // two keys: no longer a valid source of agg
	if _, _, err := nb.eng.PutBoard(bg, two); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("PUT of a source that breaks the aggregate, on b: %v, want conflict", err)
	}
	if err := nb.eng.DeleteBoard(bg, "src"); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("DELETE of a source, on b: %v, want conflict", err)
	}
	if _, err := nb.eng.Board("agg"); err != nil {
		t.Fatalf("b still does not know the aggregate: %v", err)
	}
}
