package storetest

import (
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// Groups (podium.GroupStore): membership changes are stored by Commit in
// the batch's transaction, all or nothing with its log rows, read back by
// number; a change numbered twice fails the whole batch; a board deletion
// with the set's removal part takes its changes with it.

func testGroups(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	gs, ok := s.(podium.GroupStore)
	if !ok {
		t.Fatalf("%T is not a podium.GroupStore", s)
	}
	part := func(b *podium.GroupBatch) []podium.Part { return []podium.Part{gs.GroupPart(b)} }
	set := &podium.Board{ID: "clans", Keys: []podium.KeyDef{{Name: "members", Order: podium.Desc}}, GroupSet: &podium.GroupSet{}, CreatedAt: t0, UpdatedAt: t0}
	mustNormalize(t, set)
	if err := s.PutBoard(ctx, set); err != nil {
		t.Fatal(err)
	}
	commit(t, s, &podium.Batch{Submissions: []podium.Submission{sub(set, 1, "all", "red", 1)},
		Parts: part(&podium.GroupBatch{Changes: []podium.GroupChange{{Set: "clans", N: 1, Group: "red", Player: "amy", Join: true, At: at(1)}}})})
	commit(t, s, &podium.Batch{Parts: part(&podium.GroupBatch{Changes: []podium.GroupChange{
		{Set: "clans", N: 2, Group: "red", Player: "bob", Join: true, At: at(2)},
		{Set: "clans", N: 3, Group: "red", Player: "amy", Join: false, At: at(3)}}})})
	cs, err := gs.GroupChanges(ctx, "clans", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []podium.GroupChange{{Set: "clans", N: 1, Group: "red", Player: "amy", Join: true, At: at(1)},
		{Set: "clans", N: 2, Group: "red", Player: "bob", Join: true, At: at(2)},
		{Set: "clans", N: 3, Group: "red", Player: "amy", Join: false, At: at(3)}}
	if len(cs) != len(want) {
		t.Fatalf("GroupChanges = %+v, want %+v", cs, want)
	}
	for i := range cs {
		w := want[i]
		w.At = w.At.Truncate(time.Millisecond)
		if cs[i].N != w.N || cs[i].Group != w.Group || cs[i].Player != w.Player || cs[i].Join != w.Join || !cs[i].At.Equal(w.At) || cs[i].Set != "clans" {
			t.Fatalf("GroupChanges[%d] = %+v, want %+v", i, cs[i], w)
		}
	}
	if cs, err := gs.GroupChanges(ctx, "clans", 2); err != nil || len(cs) != 1 || cs[0].N != 3 {
		t.Fatalf("GroupChanges after 2 = %+v, %v; want n 3 alone", cs, err)
	}
	// A number twice fails the whole batch: its log row is not stored.
	if err := s.Commit(ctx, &podium.Batch{Submissions: []podium.Submission{sub(set, 2, "all", "red", 2)},
		Parts: part(&podium.GroupBatch{Changes: []podium.GroupChange{{Set: "clans", N: 3, Group: "red", Player: "cid", Join: true, At: at(4)}}})}); err == nil {
		t.Fatal("a change numbered twice was stored")
	}
	if last, err := s.LastSeq(ctx, "clans"); err != nil || last != 1 {
		t.Fatalf("LastSeq after a failed batch = %d, %v; want 1", last, err)
	}
	// Deleting the set with its removal part takes its changes.
	if err := s.DeleteBoard(ctx, "clans", part(&podium.GroupBatch{DeleteSets: []string{"clans"}})...); err != nil {
		t.Fatal(err)
	}
	if cs, err := gs.GroupChanges(ctx, "clans", 0); err != nil || len(cs) != 0 {
		t.Fatalf("GroupChanges after the set's deletion = %+v, %v; want none", cs, err)
	}
}
