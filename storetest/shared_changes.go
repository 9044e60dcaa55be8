package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// The SharedStore contract (RunShared): the change feed and the loads a
// follower reads after a change.

func lastChange(t *testing.T, s podium.SharedStore) int64 {
	t.Helper()
	id, err := s.LastChange(ctx)
	if err != nil {
		t.Fatalf("LastChange: %v", err)
	}
	return id
}

func changes(t *testing.T, s podium.SharedStore, after int64, limit int) []podium.Change {
	t.Helper()
	cs, err := s.Changes(ctx, after, limit)
	if err != nil {
		t.Fatalf("Changes(%d, %d): %v", after, limit, err)
	}
	return cs
}

// Every board, player and key change appends to the feed, in order; a
// change that fails appends nothing.
func testChanges(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	if id := lastChange(t, s); id != 0 {
		t.Fatalf("LastChange of an empty store = %d, want 0", id)
	}
	if cs := changes(t, s, 0, 10); len(cs) != 0 {
		t.Fatalf("Changes of an empty store = %v", cs)
	}
	putBoard(t, s, "a", podium.Never, 1)
	if err := s.PutPlayer(ctx, &podium.Player{ID: "p", Name: "P", UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	key := podium.APIKey{ID: "k", Name: "k", Hash: "h1", CreatedAt: t0}
	if err := s.PutKey(ctx, &key); err != nil {
		t.Fatal(err)
	}
	// Failures append nothing.
	if err := s.PutKey(ctx, &podium.APIKey{ID: "k2", Name: "k2", Hash: "h1", CreatedAt: t0}); err == nil {
		t.Fatal("PutKey with another key's hash succeeded")
	}
	if err := s.DeleteKey(ctx, "nope"); err == nil {
		t.Fatal("DeleteKey of a missing key succeeded")
	}
	if err := s.DeleteBoard(ctx, "nope"); err == nil {
		t.Fatal("DeleteBoard of a missing board succeeded")
	}
	if err := s.DeleteKey(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	tx := begin(t, s, "b", "a")
	if err := tx.PutBoard(ctx, board(t, "b", 1)); err != nil {
		t.Fatal(err)
	}
	if err := tx.DeleteBoard(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	commitTx(t, tx, &podium.Batch{})
	if err := s.DeleteBoard(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	want := []podium.Change{
		{Kind: podium.ChangeBoard, Key: "a"}, {Kind: podium.ChangePlayer, Key: "p"}, {Kind: podium.ChangeKey, Key: "k"},
		{Kind: podium.ChangeKey, Key: "k"}, {Kind: podium.ChangeBoard, Key: "b"}, {Kind: podium.ChangeBoard, Key: "a"},
		{Kind: podium.ChangeBoard, Key: "b"},
	}
	all := changes(t, s, 0, 100)
	if len(all) != len(want) {
		t.Fatalf("Changes = %+v, want %d changes: %+v", all, len(want), want)
	}
	for i, c := range all {
		if c.Kind != want[i].Kind || c.Key != want[i].Key {
			t.Errorf("change %d = %s %s, want %s %s", i, c.Kind, c.Key, want[i].Kind, want[i].Key)
		}
		if i > 0 && c.ID <= all[i-1].ID {
			t.Errorf("change ids not increasing: %d after %d", c.ID, all[i-1].ID)
		}
	}
	if id := lastChange(t, s); id != all[len(all)-1].ID {
		t.Errorf("LastChange = %d, want the newest id %d", id, all[len(all)-1].ID)
	}
	if page := changes(t, s, all[2].ID, 2); len(page) != 2 || page[0] != all[3] || page[1] != all[4] {
		t.Errorf("Changes(after %d, 2) = %+v, want %+v", all[2].ID, page, all[3:5])
	}
	if rest := changes(t, s, all[len(all)-1].ID, 10); len(rest) != 0 {
		t.Errorf("Changes after the newest = %+v, want none", rest)
	}
}

// Under concurrent writers of the feed, a reader that polls it from where
// it stopped never skips a change: what it collected is, in the end, the
// whole feed in order.
func testChangesConcurrent(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := s.PutPlayer(ctx, &podium.Player{ID: id, Name: id, UpdatedAt: t0}); err != nil {
					errs <- err
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var seen []podium.Change
	var cursor int64
	deadline := time.Now().Add(within)
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		cs := changes(t, s, cursor, 7)
		seen = append(seen, cs...)
		if len(cs) > 0 {
			cursor = cs[len(cs)-1].ID
		}
		if finished && len(cs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the writers did not finish")
		}
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all := changes(t, s, 0, 2*writers*each)
	if len(all) != writers*each {
		t.Fatalf("the feed has %d changes, want %d", len(all), writers*each)
	}
	if !slices.Equal(seen, all) {
		missed := 0
		for _, c := range all {
			if !slices.Contains(seen, c) {
				missed++
			}
		}
		t.Fatalf("the polling reader collected %d changes (%d missed), the feed has %d", len(seen), missed, len(all))
	}
}

// LoadBoard, LoadPlayer and LoadKey return one object, nil when absent.
func testLoads(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	if b, err := s.LoadBoard(ctx, "b"); b != nil || err != nil {
		t.Errorf("LoadBoard of a missing board = %+v, %v", b, err)
	}
	if p, err := s.LoadPlayer(ctx, "p"); p != nil || err != nil {
		t.Errorf("LoadPlayer of a missing player = %+v, %v", p, err)
	}
	if k, err := s.LoadKey(ctx, "k"); k != nil || err != nil {
		t.Errorf("LoadKey of a missing key = %+v, %v", k, err)
	}
	bd := putBoard(t, s, "b", podium.Weekly, 2)
	b, err := s.LoadBoard(ctx, "b")
	if err != nil || b == nil {
		t.Fatalf("LoadBoard = %v, %v", b, err)
	}
	checkBoard(t, *b, *bd)
	p := podium.Player{ID: "p", Name: "Pé", Hidden: true, Meta: []byte(`{"c":1}`), UpdatedAt: at(5)}
	if err := s.PutPlayer(ctx, &p); err != nil {
		t.Fatal(err)
	}
	gp, err := s.LoadPlayer(ctx, "p")
	if err != nil || gp == nil || gp.Name != p.Name || !gp.Hidden || string(gp.Meta) != `{"c":1}` || !gp.UpdatedAt.Equal(p.UpdatedAt.Truncate(time.Millisecond)) {
		t.Errorf("LoadPlayer = %+v, %v; want %+v", gp, err, p)
	}
	k := podium.APIKey{ID: "k", Name: "n", Scopes: []string{"read"}, Boards: []string{"b"}, Hash: "abc", CreatedAt: at(7)}
	if err := s.PutKey(ctx, &k); err != nil {
		t.Fatal(err)
	}
	gk, err := s.LoadKey(ctx, "k")
	if err != nil || gk == nil || gk.Hash != "abc" || !slices.Equal(gk.Scopes, k.Scopes) || !slices.Equal(gk.Boards, k.Boards) {
		t.Errorf("LoadKey = %+v, %v; want %+v", gk, err, k)
	}
	if err := s.DeleteKey(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if gk, err := s.LoadKey(ctx, "k"); gk != nil || err != nil {
		t.Errorf("LoadKey of a revoked key = %+v, %v", gk, err)
	}
}
