package engine_test

import (
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// A board made on one node is there for a request on another at once,
// though neither a notice nor a poll told that node yet: a client
// answered 201 on node a and sent on to node b must not get
// board_not_found (CI saw it, TestRankReadsTwoNodesPostgres). A board
// that exists nowhere is still not found.
func TestSharedLookupFindsBoardMadeElsewhere(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	quiet := nodeOpts{noBroker: true, poll: time.Hour} // b learns nothing unless it asks
	a, b := c.start("a", quiet), c.start("b", quiet)
	if _, err := b.eng.Board("darts"); podium.ErrorCode(err) != podium.ECodeBoardNotFound {
		t.Fatalf("before: %v", err)
	}
	if _, _, err := a.eng.UpdateBoard(bg, podium.FullUpdate(newBoard(t, "darts", podium.Best, 1))); err != nil {
		t.Fatal(err)
	}
	if _, err := b.eng.Board("darts"); err != nil {
		t.Fatalf("Board on b: %v", err)
	}
	if _, err := b.eng.Periods("darts"); err != nil {
		t.Fatalf("Periods on b: %v", err)
	}
	if _, err := submitOn(b, "darts", "ann", 5); err != nil {
		t.Fatalf("submit on b: %v", err)
	}
	if _, _, err := a.eng.UpdateBoard(bg, podium.FullUpdate(newBoard(t, "golf", podium.Best, 1))); err != nil {
		t.Fatal(err)
	}
	if _, err := b.eng.Top(bg, engine.Query{Board: "golf"}, 0, 10); err != nil {
		t.Fatalf("Top on b: %v", err)
	}
	if _, err := b.eng.Board("nowhere"); podium.ErrorCode(err) != podium.ECodeBoardNotFound {
		t.Fatalf("a board that exists nowhere: %v", err)
	}
}
