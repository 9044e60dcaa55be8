package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/podiumhq/podium"
)

// The activity feed's contract (podium.FeedStore and its part of a Batch):
//   - events are stored by Commit in the batch's transaction: a batch that
//     fails stores none of its events;
//   - an event whose (board, seq, kind) is stored already is kept as it
//     is (a second node, or a retry, stores nothing new);
//   - Feed reads newest first in the order (at, board, seq, kind), for one
//     board, several, or all, with a Before cursor and a limit;
//   - keys and old keep nil (none) apart from values, data byte for byte;
//   - PruneFeed keeps the newest keep events of each board named, deletes at
//     most max rows a call (the oldest first), and touches no other board;
//   - DeleteBoard removes the board's events.

func feedStore(t *testing.T, s podium.Store) podium.FeedStore {
	t.Helper()
	fs, ok := s.(podium.FeedStore)
	if !ok {
		t.Fatalf("%T is not a podium.FeedStore", s)
	}
	return fs
}

func feedEvent(b string, seq uint64, kind podium.FeedKind, atMS int64, player string, keys, old []int64) podium.FeedEvent {
	return podium.FeedEvent{Board: b, Seq: seq, Kind: kind, At: at(atMS), Period: "all", Player: player, Keys: keys, Old: old}
}

func readFeed(t *testing.T, s podium.FeedStore, q podium.FeedQuery) []podium.FeedEvent {
	t.Helper()
	evs, err := s.Feed(ctx, q)
	if err != nil {
		t.Fatalf("Feed(%+v): %v", q, err)
	}
	return evs
}

func feedIDs(evs []podium.FeedEvent) []string {
	ids := []string{}
	for i := range evs {
		ids = append(ids, evs[i].ID())
	}
	return ids
}

func wantFeed(t *testing.T, what string, got []podium.FeedEvent, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if ids := feedIDs(got); !reflect.DeepEqual(ids, want) {
		t.Errorf("%s = %v, want %v", what, ids, want)
	}
}

func testFeed(t *testing.T, open func(*testing.T) podium.Store) {
	t.Run("CommitAndRead", func(t *testing.T) {
		s := open(t)
		fs := feedStore(t, s)
		a, b := putBoard(t, s, "a", podium.Never, 2), putBoard(t, s, "b", podium.Never, 1)
		pb := feedEvent("a", 1, podium.FeedPersonalBest, 1, "p1", []int64{5, -7}, nil)
		lead := feedEvent("a", 1, podium.FeedNewLeader, 1, "p1", []int64{5, -7}, nil)
		commit(t, s, &podium.Batch{Submissions: []podium.Submission{sub(a, 1, "all", "p1", 5, -7)}, Parts: feedRows(t, s, pb, lead)})
		pb2 := feedEvent("a", 2, podium.FeedPersonalBest, 2, "p1", []int64{4, -7}, []int64{5, -7})
		lead2 := feedEvent("a", 2, podium.FeedNewLeader, 2, "p1", []int64{4, -7}, []int64{5, -7})
		lead2.Other = "p0"
		settled := podium.FeedEvent{Board: "b", Seq: 1, Kind: podium.FeedTournamentSettled, At: at(2), Period: "all",
			Data: json.RawMessage(`{"tournament":"b","winners":["p1"]}`)}
		commit(t, s, &podium.Batch{Submissions: []podium.Submission{sub(a, 2, "all", "p1", 4, -7), sub(b, 1, "all", "p2", 3)},
			Parts: feedRows(t, s, pb2, lead2, settled)})
		got := readFeed(t, fs, podium.FeedQuery{Limit: 10})
		wantFeed(t, "Feed(all)", got, "b/1/tournament_settled", "a/2/new_leader", "a/2/personal_best", "a/1/new_leader", "a/1/personal_best")
		if len(got) == 5 {
			want := settled
			want.At = want.At.UTC().Truncate(1e6)
			if !reflect.DeepEqual(got[0], want) {
				t.Errorf("settled event read back as %+v, want %+v", got[0], want)
			}
			for i, want := range []podium.FeedEvent{lead2, pb2, lead, pb} {
				want.At = want.At.UTC().Truncate(1e6)
				if !reflect.DeepEqual(got[i+1], want) {
					t.Errorf("event %s read back as %+v, want %+v", want.ID(), got[i+1], want)
				}
			}
		}
		wantFeed(t, "Feed(a, limit 3)", readFeed(t, fs, podium.FeedQuery{Boards: []string{"a"}, Limit: 3}),
			"a/2/new_leader", "a/2/personal_best", "a/1/new_leader")
		pos := lead2.Pos()
		wantFeed(t, "Feed(before a/2/new_leader)", readFeed(t, fs, podium.FeedQuery{Before: &pos, Limit: 10}),
			"a/2/personal_best", "a/1/new_leader", "a/1/personal_best")
		wantFeed(t, "Feed(a, b)", readFeed(t, fs, podium.FeedQuery{Boards: []string{"b", "a"}, Limit: 2}),
			"b/1/tournament_settled", "a/2/new_leader")
		wantFeed(t, "Feed(no boards)", readFeed(t, fs, podium.FeedQuery{Boards: []string{}, Limit: 10}))
		wantFeed(t, "Feed(missing)", readFeed(t, fs, podium.FeedQuery{Boards: []string{"missing"}, Limit: 10}))
	})
	t.Run("Idempotent", func(t *testing.T) {
		s := open(t)
		fs := feedStore(t, s)
		putBoard(t, s, "a", podium.Never, 1)
		first := feedEvent("a", 1, podium.FeedPersonalBest, 1, "p1", []int64{5}, nil)
		again := feedEvent("a", 1, podium.FeedPersonalBest, 9, "p2", []int64{6}, []int64{1})
		commit(t, s, &podium.Batch{Parts: feedRows(t, s, first, again)})
		commit(t, s, &podium.Batch{Parts: feedRows(t, s, again)})
		got := readFeed(t, fs, podium.FeedQuery{Limit: 10})
		if len(got) != 1 || got[0].Player != "p1" || !reflect.DeepEqual(got[0].Keys, []int64{5}) || got[0].Old != nil {
			t.Errorf("after storing an event three times, Feed = %+v; want the first one once", got)
		}
	})
	t.Run("FailedCommitStoresNone", func(t *testing.T) {
		s := open(t)
		fs := feedStore(t, s)
		a := putBoard(t, s, "a", podium.Never, 1)
		commit(t, s, &podium.Batch{Submissions: []podium.Submission{sub(a, 1, "all", "p1", 5)}})
		// seq 1 is logged already: the whole batch fails.
		err := s.Commit(ctx, &podium.Batch{Submissions: []podium.Submission{sub(a, 1, "all", "p1", 4)},
			Parts: feedRows(t, s, feedEvent("a", 1, podium.FeedPersonalBest, 1, "p1", []int64{4}, []int64{5}))})
		if err == nil {
			t.Fatal("Commit of a duplicate seq succeeded")
		}
		wantFeed(t, "Feed after a failed commit", readFeed(t, fs, podium.FeedQuery{Limit: 10}))
	})
	t.Run("Prune", func(t *testing.T) {
		s := open(t)
		fs := feedStore(t, s)
		putBoard(t, s, "a", podium.Never, 1)
		putBoard(t, s, "b", podium.Never, 1)
		var evs []podium.FeedEvent
		for i := uint64(1); i <= 10; i++ {
			evs = append(evs, feedEvent("a", i, podium.FeedPersonalBest, int64(i), "p", []int64{int64(i)}, nil))
		}
		for i := uint64(1); i <= 3; i++ {
			evs = append(evs, feedEvent("b", i, podium.FeedNewLeader, int64(i), "p", []int64{int64(i)}, nil))
		}
		commit(t, s, &podium.Batch{Parts: feedRows(t, s, evs...)})
		if oc, ok := fs.(podium.FeedOverCap); ok {
			for keep, want := range map[int]string{2: "[a b]", 3: "[a]", 10: "[]"} {
				got, err := oc.FeedBoardsOver(ctx, keep)
				slices.Sort(got)
				if err != nil || fmt.Sprint(got) != want {
					t.Errorf("FeedBoardsOver(%d) = %v, %v; want %s", keep, got, err, want)
				}
			}
		}
		n, err := fs.PruneFeed(ctx, []string{"a", "b"}, 2, 5)
		if err != nil || n != 5 {
			t.Fatalf("PruneFeed(keep 2, max 5) = %d, %v; want 5", n, err)
		}
		if got := readFeed(t, fs, podium.FeedQuery{Boards: []string{"a"}, Limit: 20}); len(got) != 5 || got[4].Seq != 6 {
			t.Errorf("after one bounded prune, a's feed = %v; want seqs 10..6", feedIDs(got))
		}
		if n, err = fs.PruneFeed(ctx, []string{"a", "b"}, 2, 100); err != nil || n != 4 {
			t.Fatalf("second PruneFeed = %d, %v; want 4", n, err)
		}
		wantFeed(t, "a after pruning", readFeed(t, fs, podium.FeedQuery{Boards: []string{"a"}, Limit: 20}),
			"a/10/personal_best", "a/9/personal_best")
		wantFeed(t, "b after pruning", readFeed(t, fs, podium.FeedQuery{Boards: []string{"b"}, Limit: 20}),
			"b/3/new_leader", "b/2/new_leader")
		if n, err = fs.PruneFeed(ctx, []string{"a", "b"}, 2, 100); err != nil || n != 0 {
			t.Errorf("PruneFeed with nothing to prune = %d, %v; want 0", n, err)
		}
	})
	t.Run("DeleteBoard", func(t *testing.T) {
		s := open(t)
		fs := feedStore(t, s)
		putBoard(t, s, "gone", podium.Never, 1)
		putBoard(t, s, "kept", podium.Never, 1)
		commit(t, s, &podium.Batch{Parts: feedRows(t, s, feedEvent("gone", 1, podium.FeedPersonalBest, 1, "p", []int64{1}, nil),
			feedEvent("kept", 1, podium.FeedPersonalBest, 1, "p", []int64{1}, nil))})
		if err := s.DeleteBoard(ctx, "gone"); err != nil {
			t.Fatal(err)
		}
		wantFeed(t, "Feed after DeleteBoard(gone)", readFeed(t, fs, podium.FeedQuery{Limit: 10}), "kept/1/personal_best")
	})
}

// testTxFeed: a WriteTx stores a batch's events with its submissions, and
// WriteTx.DeleteBoard removes the board's events.
func testTxFeed(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	fs := feedStore(t, s)
	a := putBoard(t, s, "a", podium.Never, 1)
	putBoard(t, s, "b", podium.Never, 1)
	tx := begin(t, s, "a")
	commitTx(t, tx, &podium.Batch{Submissions: []podium.Submission{sub(a, 1, "all", "p", 3)},
		Parts: feedRows(t, s, feedEvent("a", 1, podium.FeedPersonalBest, 1, "p", []int64{3}, nil))})
	commit(t, s, &podium.Batch{Parts: feedRows(t, s, feedEvent("b", 1, podium.FeedPersonalBest, 1, "p", []int64{3}, nil))})
	wantFeed(t, "Feed after a WriteTx commit", readFeed(t, fs, podium.FeedQuery{Limit: 10}), "b/1/personal_best", "a/1/personal_best")
	tx = begin(t, s, "a")
	if err := tx.DeleteBoard(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	commitTx(t, tx, &podium.Batch{})
	wantFeed(t, "Feed after WriteTx.DeleteBoard(a)", readFeed(t, fs, podium.FeedQuery{Limit: 10}), "b/1/personal_best")
}
