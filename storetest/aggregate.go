package storetest

import (
	"testing"

	"github.com/podiumhq/podium"
)

// testTxLastChange: a write transaction knows the change feed position as
// of its locks, so that a writer sees every definition committed before
// it got them (an aggregate made over a board it writes, by another node
// that held that board meanwhile).
func testTxLastChange(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	src, agg := board(t, "src", 1), board(t, "agg", 1)
	tx := begin(t, s, "src")
	if err := tx.PutBoard(ctx, src); err != nil {
		t.Fatal(err)
	}
	commitTx(t, tx, &podium.Batch{})
	if tx := begin(t, s, "src"); tx.LastChange() != lastChange(t, s) || tx.LastChange() == 0 {
		t.Fatalf("LastChange in a transaction = %d, the store's %d", tx.LastChange(), lastChange(t, s))
	} else {
		tx.Rollback()
	}

	// A writer waits for src while another transaction, holding src,
	// defines a board over it: once it has src it sees that change.
	holder := begin(t, s, "src", "agg")
	ch := beginAsync(t, s, "src")
	notYet(t, ch, "Begin(src)")
	agg.Mode, agg.Aggregate = "", &podium.Aggregate{Kind: podium.SumOfBests, Sources: []podium.AggregateSource{{Board: "src"}}}
	mustNormalize(t, agg)
	if err := holder.PutBoard(ctx, agg); err != nil {
		t.Fatal(err)
	}
	commitTx(t, holder, &podium.Batch{})
	got := awaitBegin(t, ch)
	if got.err != nil {
		t.Fatal(got.err)
	}
	if want := lastChange(t, s); got.tx.LastChange() != want {
		t.Fatalf("LastChange after waiting = %d, want %d (the change committed before the lock)", got.tx.LastChange(), want)
	}
}
