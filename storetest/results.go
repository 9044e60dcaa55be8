package storetest

import (
	"encoding/json"
	"testing"

	"github.com/podiumhq/podium"
)

// testBestKResults: the kept results of a best_k board's entries are stored
// with the entry, replaced by a later upsert (none clears them), and
// carried by ReplaceEntries; the board document keeps keep and the
// aggregate definition.
func testBestKResults(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	bd := &podium.Board{ID: "ms:beg", Keys: []podium.KeyDef{{Name: "time", Order: podium.Asc}, {Name: "bbbv", Order: podium.Desc}},
		Mode: podium.BestK, Keep: 3, CreatedAt: t0, UpdatedAt: t0}
	mustNormalize(t, bd)
	if err := s.PutBoard(ctx, bd); err != nil {
		t.Fatal(err)
	}
	agg := &podium.Board{ID: "ms:total", Keys: bd.Keys, CreatedAt: t0, UpdatedAt: t0,
		Aggregate: &podium.Aggregate{Kind: podium.BestKSum, RequireAll: true,
			Sources: []podium.AggregateSource{{Board: "ms:beg", K: 2, Fill: []int64{10000, 0}}}}}
	mustNormalize(t, agg)
	if err := s.PutBoard(ctx, agg); err != nil {
		t.Fatal(err)
	}
	bs := boards(t, s)
	if len(bs) != 2 {
		t.Fatalf("%d boards, want 2", len(bs))
	}
	checkBoard(t, bs[0], *bd)
	checkBoard(t, bs[1], *agg)

	res := func(seq uint64, keys ...int64) podium.Result {
		return podium.Result{Keys: keys, At: at(int64(seq)), Seq: seq}
	}
	a := entry(bd, 2, "all", "alice", 900, 5)
	a.Results = []podium.Result{res(2, 900, 5), res(7, 950, 9), res(1, 1200, 3)}
	b := entry(bd, 4, "all", "bob", 1000, 1) // neighbours without results catch a leak between rows
	c := entry(bd, 5, "all", "carol", 800, 2)
	c.Results = []podium.Result{res(5, 800, 2)}
	c.Meta = json.RawMessage(`{"replay":"x"}`)
	commit(t, s, &podium.Batch{Upserts: []podium.Entry{a, b, c}})
	checkEntries(t, load(t, s, bd.ID, "all"), []podium.Entry{a, b, c})

	// A later upsert replaces the results; one without results clears them.
	a.Results = []podium.Result{res(9, 700, 1), res(2, 900, 5), res(7, 950, 9)}
	a.Keys, a.Seq, a.At = []int64{700, 1}, 9, at(9)
	c.Results = nil
	commit(t, s, &podium.Batch{Upserts: []podium.Entry{a, c}})
	checkEntries(t, load(t, s, bd.ID, "all"), []podium.Entry{a, b, c})

	d := entry(bd, 11, "all", "dave", 1, 1)
	d.Results = []podium.Result{res(11, 1, 1), res(10, 2, 2)}
	if err := s.ReplaceEntries(ctx, bd.ID, []podium.Entry{d}, 11); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, load(t, s, bd.ID, "all"), []podium.Entry{d})
}
