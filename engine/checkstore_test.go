package engine_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
)

// writingStore is a store that another writer commits to while it is
// read: the first time an entry is loaded, it commits a batch, as another
// node on a shared database would between the check's reads.
type writingStore struct {
	*sqlite.Store
	once  sync.Once
	batch *podium.Batch
	err   error
}

func (w *writingStore) LoadEntries(ctx context.Context, board, period string, fn func(*podium.Entry) error) error {
	w.once.Do(func() { w.err = w.Store.Commit(ctx, w.batch) })
	return w.Store.LoadEntries(ctx, board, period, fn)
}

// TestCheckStoreWhileOthersWrite: on a database that other nodes write
// while podium check --db reads it, the log, the entries and the
// watermarks cannot be read as one snapshot. A commit that lands between
// the check's reads must not be reported as a difference; a real one must
// still be.
func TestCheckStoreWhileOthersWrite(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	b := &podium.Board{ID: "b", Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}, Mode: podium.Sum,
		Reset: podium.Reset{Every: podium.Never, TZ: "UTC"}, CreatedAt: t0, UpdatedAt: t0}
	if err := st.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	sub := func(seq uint64, player string, kind podium.Kind, keys ...int64) podium.Submission {
		return podium.Submission{Seq: seq, Board: "b", Period: "all", Player: player, Kind: kind, Keys: keys, At: t0.Add(time.Duration(seq) * time.Second)}
	}
	entry := func(s podium.Submission, keys ...int64) podium.Entry {
		return podium.Entry{Board: "b", Period: "all", Player: s.Player, Keys: keys, At: s.At, Seq: s.Seq}
	}
	s1, s2, s3 := sub(1, "p1", podium.KindScore, 10), sub(2, "p2", podium.KindScore, 20), sub(3, "p3", podium.KindScore, 30)
	err = st.Commit(ctx, &podium.Batch{
		Submissions: []podium.Submission{s1, s2, s3},
		Upserts: []podium.Entry{entry(s1, 10), entry(s2, 20), entry(s3, 30),
			// A real difference: an entry that no submission made.
			{Board: "b", Period: "all", Player: "intruder", Keys: []int64{99}, At: t0, Seq: 3}},
		Watermarks: []podium.Watermark{{Board: "b", Seq: 3}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// What another node commits (written through, as in shared mode) once
	// the check has read the log: p1 grows, p2 is deleted, p5 is new.
	s4, s5, s6 := sub(4, "p1", podium.KindScore, 5), sub(5, "p2", podium.KindDelete), sub(6, "p5", podium.KindScore, 50)
	w := &writingStore{Store: st, batch: &podium.Batch{
		Submissions: []podium.Submission{s4, s5, s6},
		Upserts:     []podium.Entry{entry(s4, 15), entry(s6, 50)},
		Deletes:     []podium.EntryRef{{Board: "b", Period: "all", Player: "p2"}},
		Watermarks:  []podium.Watermark{{Board: "b", Seq: 6}},
	}}
	r, err := engine.CheckStoreDetail(ctx, w)
	if err != nil || w.err != nil {
		t.Fatal(err, w.err)
	}
	if len(r.Diffs) != 1 || r.Diffs[0].Player != "intruder" {
		t.Fatalf("differences: want only the intruder, got %v", r.Diffs)
	}
	if r.Moved != 2 || r.Entries != 2 { // p1 and p2 moved; p3 and the intruder compared
		t.Fatalf("moved %d, compared %d: want 2 and 2", r.Moved, r.Entries)
	}
	// Once nobody writes, everything is compared again.
	r, err = engine.CheckStoreDetail(ctx, st)
	if err != nil || len(r.Diffs) != 1 || r.Moved != 0 || r.Entries != 4 {
		t.Fatalf("quiet store: %+v %v", r, err)
	}
}
