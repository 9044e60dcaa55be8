package storetest

import (
	"testing"

	"github.com/podiumhq/podium"
)

// A Batch's parts (podium.Part) are written by the store that made them:
// a part made by another store, or a Part the test implements itself, fails
// the commit, and nothing of the batch is stored.

// foreignPart is a Part that no store made.
type foreignPart struct{}

func (foreignPart) Len() int     { return 1 }
func (foreignPart) Check() error { return nil }

func testForeignParts(t *testing.T, open func(*testing.T) podium.Store) {
	s, other := open(t), open(t)
	a := putBoard(t, s, "a", podium.Never, 1)
	putBoard(t, other, "a", podium.Never, 1)
	ev := feedEvent("a", 1, podium.FeedPersonalBest, 1, "p", []int64{3}, nil)
	join := &podium.TourneyBatch{Joins: []podium.Join{{Board: "a", Player: "p", N: 1, At: at(1)}}}
	for _, c := range []struct {
		name string
		part podium.Part
	}{
		{"Foreign", foreignPart{}},
		{"Nil", nil},
		{"OtherStoreFeed", feedStore(t, other).FeedPart([]podium.FeedEvent{ev})},
		{"OtherStoreTourney", tourneyStore(t, other).TourneyPart(join)},
		{"OtherStoreReview", reviewStore(t, other).ReviewPart([]podium.ReviewItem{reviewItem("rv_00000000000000aa", "a", "p", 10, 1)}, nil)},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The store's own part rides along, before the foreign one.
			b := &podium.Batch{Submissions: []podium.Submission{sub(a, 1, "all", "p", 3)},
				Parts: append(feedRows(t, s, ev), c.part)}
			if err := s.Commit(ctx, b); err == nil {
				t.Fatalf("a batch with a part not made by the store (%T) was stored", c.part)
			}
			if seq := lastSeq(t, s, "a"); seq != 0 {
				t.Fatalf("LastSeq = %d after a refused batch, want 0", seq)
			}
			wantFeed(t, "Feed after a refused batch", readFeed(t, feedStore(t, s), podium.FeedQuery{Limit: 10}))
			if js, err := tourneyStore(t, s).Joins(ctx, "a", 0); err != nil || len(js) != 0 {
				t.Fatalf("Joins after a refused batch = %v, %v; want none", js, err)
			}
		})
	}
	t.Run("OwnParts", func(t *testing.T) {
		commit(t, s, &podium.Batch{Submissions: []podium.Submission{sub(a, 1, "all", "p", 3)},
			Parts: append(feedRows(t, s, ev), tourneyRows(t, s, join)...)})
		if seq := lastSeq(t, s, "a"); seq != 1 {
			t.Fatalf("LastSeq = %d, want 1", seq)
		}
		wantFeed(t, "Feed", readFeed(t, feedStore(t, s), podium.FeedQuery{Limit: 10}), "a/1/personal_best")
	})
}

// testTxForeignParts: WriteTx.Commit refuses a part made by another store
// as Commit does, storing nothing.
func testTxForeignParts(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s, other := open(t), open(t)
	a := putBoard(t, s, "a", podium.Never, 1)
	ev := feedEvent("a", 1, podium.FeedPersonalBest, 1, "p", []int64{3}, nil)
	for _, part := range []podium.Part{foreignPart{}, feedStore(t, other).FeedPart([]podium.FeedEvent{ev})} {
		tx := begin(t, s, "a")
		if err := tx.Commit(ctx, &podium.Batch{Submissions: []podium.Submission{sub(a, 1, "all", "p", 3)},
			Parts: []podium.Part{part}}); err == nil {
			t.Fatalf("WriteTx.Commit stored a batch with a part not made by the store (%T)", part)
		}
		tx.Rollback()
		if seq := lastSeq(t, s, "a"); seq != 0 {
			t.Fatalf("LastSeq = %d after a refused batch, want 0", seq)
		}
		wantFeed(t, "Feed after a refused batch", readFeed(t, feedStore(t, s), podium.FeedQuery{Limit: 10}))
	}
}
