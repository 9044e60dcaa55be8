package engine_test

import (
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/modules"
)

// TestSharedQuota: two nodes share a board's quota. 32 concurrent
// submissions of one player, half on each node, admit exactly the quota;
// then submissions that alternate between the nodes are counted wherever
// they were made (each node counts the other's from the log it replays
// under the board's lock).
func TestSharedQuota(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	now := func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }
	var nodes [2]*node
	for i, name := range []string{"a", "b"} {
		n, cfg := c.open(name, nodeOpts{})
		cfg.Now = now
		n.eng = modules.Engine(cfg)
		if err := n.eng.Start(bg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.eng.Close() })
		nodes[i] = n
	}
	quotaBoard(t, nodes[0].eng, "daily", podium.Daily, 3)
	eventually(t, 5*time.Second, "board on node b", func() bool { _, err := nodes[1].eng.Board("daily"); return err == nil })

	ok, refused := race(t, 32, func(i int) error {
		_, err := submitOn(nodes[i%2], "daily", "alice", int64(5000+i))
		return err
	})
	if len(ok) != 3 || len(refused) != 29 {
		t.Fatalf("accepted %d, refused %d; want 3 and 29", len(ok), len(refused))
	}
	for _, qe := range refused {
		if !qe.ResetsAt.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) || qe.RetryAfter != 12*time.Hour {
			t.Fatalf("refusal resets at %v after %v; want midnight after 12h", qe.ResetsAt, qe.RetryAfter)
		}
	}

	// bob: one on a, one on b, one on a; the 4th is refused on either.
	for i, n := range []*node{nodes[0], nodes[1], nodes[0]} {
		if _, err := submitOn(n, "daily", "bob", int64(4000-i)); err != nil {
			t.Fatalf("bob's submission %d: %v", i+1, err)
		}
	}
	for _, n := range nodes {
		if _, err := submitOn(n, "daily", "bob", 3000); podium.ErrorCode(err) != podium.ECodeQuotaExceeded {
			t.Fatalf("bob's 4th submission: %v; want quota_exceeded", err)
		}
	}
	for _, n := range nodes {
		eventually(t, 5*time.Second, "both entries", func() bool { return top(t, n, "daily").Total == 2 })
	}
}
