package engine_test

import (
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// A node that has not followed the other node's last writes yet (no
// broker, a poll an hour away) still checks clean: the check catches the
// node up with the database before it compares, because a node behind the
// others is not an index that differs from the database. CI once saw
// TestGroupsModelTwoNodesPostgres report such a lag as a difference.
func TestSharedCheckCatchesUpFirst(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	na := c.start("a", nodeOpts{})
	if _, _, err := na.eng.PutBoard(bg, newBoard(t, "pts", podium.Best, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := submitOn(na, "pts", "p0", 13); err != nil {
		t.Fatal(err)
	}
	nb := c.start("b", nodeOpts{noBroker: true, poll: time.Hour}) // loads p0 at 13
	if _, err := submitOn(na, "pts", "p0", 57); err != nil {
		t.Fatal(err)
	}
	if _, err := submitOn(na, "pts", "p1", 5); err != nil {
		t.Fatal(err)
	}
	if p := top(t, nb, "pts"); len(p.Entries) != 1 || p.Entries[0].Keys[0] != 13 {
		t.Fatalf("b followed already: %+v", p.Entries)
	}
	d, err := nb.eng.Checker().Indexes(bg)
	if err != nil || len(d) > 0 {
		t.Fatalf("check on the node behind: %v %v", d, err)
	}
	if p := top(t, nb, "pts"); len(p.Entries) != 2 || p.Entries[0].Keys[0] != 57 {
		t.Fatalf("after the check b has %+v, want p0 at 57 and p1", p.Entries)
	}
}
