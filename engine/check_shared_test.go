package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/postgres"
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

// watermarkHook is a PostgreSQL store that runs a function each time a
// check reads the watermarks: on the writer, after the follower's round
// and before the check reads the entries.
type watermarkHook struct {
	*postgres.Store
	fn func()
}

func (s *watermarkHook) Watermarks(ctx context.Context) (map[string]uint64, error) {
	if s.fn != nil {
		s.fn()
	}
	return s.Store.Watermarks(ctx)
}

// Another node that writes while the check reads (after the round that
// caught this node up, each time it checks) moves the entries table, which
// PostgreSQL writes through, past the index: those entries are writes
// committed since, not differences. Without the skip both tries of the
// check report p0.
func TestSharedCheckSkipsWritesCommittedMeanwhile(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	na := c.start("a", nodeOpts{})
	if _, _, err := na.eng.PutBoard(bg, newBoard(t, "pts", podium.Sum, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := submitOn(na, "pts", "p0", 1); err != nil {
		t.Fatal(err)
	}
	var hook *watermarkHook
	nb := c.start("b", nodeOpts{noBroker: true, poll: time.Hour, wrap: func(st *postgres.Store) podium.Store {
		hook = &watermarkHook{Store: st}
		return hook
	}})
	writes := 0
	hook.fn = func() {
		writes++
		if _, err := submitOn(na, "pts", "p0", 1); err != nil {
			t.Error(err)
		}
	}
	d, err := nb.eng.Checker().Indexes(bg)
	if err != nil || len(d) > 0 {
		t.Fatalf("check while another node writes: %v %v", d, err)
	}
	if writes == 0 {
		t.Fatal("the hook never wrote: the test tested nothing")
	}
	hook.fn = nil
	// What the check skipped was a write, and the node follows it: a
	// check with no writer left finds b equal to the database.
	if d, err := nb.eng.Checker().Indexes(bg); err != nil || len(d) > 0 {
		t.Fatalf("check after: %v %v", d, err)
	}
	if p := top(t, nb, "pts"); len(p.Entries) != 1 || p.Entries[0].Keys[0] != int64(1+writes) {
		t.Fatalf("b has %+v, want p0 at %d", p.Entries, 1+writes)
	}
}
