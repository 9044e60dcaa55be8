package engine_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/modules"
)

// A node that starts while another writes is, once Start returns (it then
// reports ready), behind by no more than a follower's lag: what the other
// node commits while this one loads, after it read a board's head, reaches
// it by the broker's notices, not at its next poll. The node here polls
// once an hour.
func TestSharedStartFollowsWritesMadeWhileLoading(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("a", nodeOpts{})
	if _, _, err := a.eng.PutBoard(bg, newBoard(t, "busy", podium.Sum, 1)); err != nil {
		t.Fatal(err)
	}
	var (
		writing atomic.Bool
		acked   atomic.Int64
	)
	far := *c
	far.dsn = beforeEachMessage(t, c.dsn, func() {
		if !writing.Load() {
			return
		}
		if _, err := submitOn(a, "busy", fmt.Sprintf("p%d", acked.Load()%50), 1); err != nil {
			t.Errorf("submit: %v", err)
			return
		}
		acked.Add(1)
	})
	b, cfg := far.open("b", nodeOpts{poll: time.Hour})
	b.eng = modules.Engine(cfg)
	t.Cleanup(func() { b.eng.Close() })
	writing.Store(true)
	err := b.eng.Start(bg)
	writing.Store(false)
	if err != nil {
		t.Fatal(err)
	}
	want := uint64(acked.Load())
	if want == 0 {
		t.Fatal("nothing was written while b started")
	}
	eventually(t, 5*time.Second, fmt.Sprintf("b has the %d writes a made while b started", want), func() bool {
		bi, err := b.eng.Board("busy")
		return err == nil && bi.Seq >= want
	})
}
