package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// A restore on node A is seen by node B (the follower replays restore
// rows), B computes its next write on top of it, a repeat on B is
// unchanged, and a node started afterwards loads the same entries.
func TestSharedRestoreSeenByOtherNode(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("a", nodeOpts{})
	b := c.start("b", nodeOpts{})
	sum := newBoard(t, "sum", podium.Sum, 1)
	daily := newBoard(t, "daily", podium.Best, 1)
	daily.Reset = podium.Reset{Every: podium.Daily, TZ: "UTC"}
	for _, def := range []*podium.Board{sum, daily} {
		if _, _, err := a.eng.PutBoard(bg, def); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := submitOn(a, "sum", "alice", 5); err != nil {
		t.Fatal(err)
	}
	past := time.Now().UTC().Truncate(24 * time.Hour).Add(-36 * time.Hour)
	at := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	restoreOn := func(n *node, board string, items ...engine.RestoreItem) []engine.RestoreResult {
		t.Helper()
		res, err := n.eng.Restore(bg, board, items)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	sumItem := engine.RestoreItem{Period: "all", Player: "alice", Keys: []int64{1}, At: at}
	pastItem := engine.RestoreItem{Period: past.Format("2006-01-02"), Player: "bob", Keys: []int64{9}, At: past}
	if r := restoreOn(a, "sum", sumItem); !r[0].Restored {
		t.Fatalf("restore on a: %+v", r)
	}
	if r := restoreOn(a, "daily", pastItem); !r[0].Restored {
		t.Fatalf("restore on a: %+v", r)
	}
	entryOn := func(n *node, board, period, player string) string {
		p, err := n.eng.Entry(bg, engine.Query{Board: board, Period: period}, player)
		if err != nil || len(p.Entries) == 0 {
			return fmt.Sprint(err)
		}
		for _, e := range p.Entries {
			if e.Player == player {
				return fmt.Sprintf("%v %s", e.Keys, e.At.UTC().Format(time.RFC3339Nano))
			}
		}
		return "none"
	}
	wantSum := fmt.Sprintf("[1] %s", at.Format(time.RFC3339Nano))
	wantPast := fmt.Sprintf("[9] %s", past.Format(time.RFC3339Nano))
	eventually(t, 5*time.Second, "node b sees the restores", func() bool {
		return entryOn(b, "sum", "all", "alice") == wantSum && entryOn(b, "daily", pastItem.Period, "bob") == wantPast
	})
	if r := restoreOn(b, "sum", sumItem); !r[0].Unchanged {
		t.Fatalf("the same restore on b: %+v", r)
	}
	res, err := submitOn(b, "sum", "alice", 2)
	if err != nil || fmt.Sprint(res.Entry.Keys) != "[3]" {
		t.Fatalf("a sum on b after the restore: %+v %v", res, err)
	}
	n := c.start("c", nodeOpts{})
	if got := entryOn(n, "daily", pastItem.Period, "bob"); got != wantPast {
		t.Fatalf("a new node loads %s, want %s", got, wantPast)
	}
	eventually(t, 5*time.Second, "node a sees b's sum", func() bool { return fmt.Sprint(top(t, a, "sum").Entries[0].Keys) == "[3]" })
	for _, n := range []*node{a, b} {
		if diffs, err := n.eng.Checker().Log(bg); err != nil || len(diffs) > 0 {
			t.Fatalf("CheckLog: %v %v", diffs, err)
		}
	}
}
