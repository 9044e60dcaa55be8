package engine

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/sqlite"
)

// TestNoTornPages reads each board every time applyChanges lets go of a
// board's lock while it applies one batch whose changes alternate between
// two boards (a, b, a, b, a). Every page read must be the board as of its
// own seq: exactly the entries whose seq is at most the page's. Before,
// board a was unlocked after its first change with its seq already at the
// group's last one on a, so a page (and its ETag) carried seq 3 with one
// entry of three.
func TestNoTornPages(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng := New(Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	for _, id := range []string{"a", "b"} {
		if _, _, err := eng.PutBoard(ctx, &podium.Board{ID: id, Public: true, Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}}); err != nil {
			t.Fatal(err)
		}
	}
	var pages []Page
	testHookApplied = func(bs *BoardState) {
		p, err := eng.Top(ctx, Query{Board: bs.def.Load().ID}, 0, 100)
		if err != nil {
			t.Error(err)
			return
		}
		pages = append(pages, p)
	}
	defer func() { testHookApplied = nil }()
	scores := []Score{
		{Board: "a", Player: "p1", Keys: []int64{10}},
		{Board: "b", Player: "p1", Keys: []int64{10}},
		{Board: "a", Player: "p2", Keys: []int64{20}},
		{Board: "b", Player: "p2", Keys: []int64{20}},
		{Board: "a", Player: "p3", Keys: []int64{30}},
	}
	res, err := eng.Submit(ctx, scores, false, nil)
	testHookApplied = nil
	if err != nil {
		t.Fatal(err)
	}
	seqs := map[string][]uint64{} // board: the seqs of its entries
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		seqs[r.Board] = append(seqs[r.Board], r.Seq)
	}
	if len(pages) == 0 {
		t.Fatal("the hook never ran")
	}
	for _, p := range pages {
		want := 0
		for _, s := range seqs[p.Board] {
			if s <= p.Seq {
				want++
			}
		}
		if p.Total != want || len(p.Entries) != want {
			t.Errorf("board %s read at seq %d has %d entries (total %d); the board at that seq has %d", p.Board, p.Seq, len(p.Entries), p.Total, want)
		}
		for _, en := range p.Entries {
			if en.Seq > p.Seq {
				t.Errorf("board %s read at seq %d holds an entry of seq %d", p.Board, p.Seq, en.Seq)
			}
		}
	}
}
