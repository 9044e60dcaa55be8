package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
)

// faultyStore is the real SQLite store whose group commits can be made to
// fail, as a full disk would.
type faultyStore struct {
	*sqlite.Store
	fail     atomic.Bool // group commits fail, as on a full disk
	failSync atomic.Bool // fsyncs fail, as on a dying disk
}

func (f *faultyStore) Commit(ctx context.Context, b *podium.Batch) error {
	if f.fail.Load() && len(b.Submissions) > 0 {
		return errors.New("disk full (injected)")
	}
	return f.Store.Commit(ctx, b)
}

func (f *faultyStore) CommitDeferred(ctx context.Context, b *podium.Batch) (uint64, error) {
	if f.fail.Load() && len(b.Submissions) > 0 {
		return 0, errors.New("disk full (injected)")
	}
	return f.Store.CommitDeferred(ctx, b)
}

func (f *faultyStore) Sync(ctx context.Context, ticket uint64) error {
	if f.failSync.Load() {
		return errors.New("fsync: input/output error (injected)")
	}
	return f.Store.Sync(ctx, ticket)
}

// TestFailedCommitAppliesNothing: while commits fail, every submission is
// answered 503 and nothing of it shows, in memory or after a restart; the
// pipeline recovers once commits work again.
func TestFailedCommitAppliesNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "podium.db")
	st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	fs := &faultyStore{Store: st}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := engine.New(engine.Config{Store: fs, Logger: log})
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b := &podium.Board{ID: "s", Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}, Mode: podium.Sum}
	b.Normalize()
	if _, _, err := eng.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	submit := func(player string, n int64) error {
		_, err := eng.Submit(ctx, []engine.Score{{Board: "s", Player: player, Keys: []int64{n}}}, true, nil)
		return err
	}
	if err := submit("a", 1); err != nil {
		t.Fatal(err)
	}
	fs.fail.Store(true)
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			err := submit(fmt.Sprintf("p%d", i%4), 10)
			if podium.ErrorCode(err) == podium.ECodeUnavailable {
				failed.Add(1)
			} else {
				t.Errorf("submit while the disk fails: %v", err)
			}
		}(i)
	}
	wg.Wait()
	if failed.Load() != 32 {
		t.Fatalf("%d of 32 submissions failed", failed.Load())
	}
	fs.fail.Store(false)
	for i := 0; i < 5; i++ {
		if err := submit("a", 1); err != nil {
			t.Fatalf("after recovery: %v", err)
		}
	}
	check := func(e *engine.Engine) {
		t.Helper()
		p, err := e.Top(ctx, engine.Query{Board: "s"}, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Entries) != 1 || p.Entries[0].Keys[0] != 6 || p.Seq != 6 {
			t.Fatalf("state after failed commits: seq %d %+v", p.Seq, p.Entries)
		}
	}
	check(eng)
	eng.Close()
	st.Close()
	st, err = sqlite.Open(path, sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng = engine.New(engine.Config{Store: st, Logger: log})
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	check(eng)
	if d, err := engine.CheckStore(ctx, st); err != nil || len(d) != 0 {
		t.Fatalf("CheckStore: %v %v", d, err)
	}
}

// TestFailedSyncStopsWrites: when an fsync fails, nothing acknowledged can
// be trusted to be on disk; podium answers 503, stops being ready, and
// takes no more writes until it is restarted.
func TestFailedSyncStopsWrites(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fs := &faultyStore{Store: st}
	eng := engine.New(engine.Config{Store: fs, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	b := &podium.Board{ID: "s", Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}}
	b.Normalize()
	if _, _, err := eng.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	fs.failSync.Store(true)
	_, err = eng.Submit(ctx, []engine.Score{{Board: "s", Player: "a", Keys: []int64{1}}}, true, nil)
	if podium.ErrorCode(err) != podium.ECodeUnavailable {
		t.Fatalf("submit with a failing fsync: %v", err)
	}
	if eng.Ready() {
		t.Fatal("still ready after an fsync failure")
	}
	fs.failSync.Store(false)
	if _, err := eng.Submit(ctx, []engine.Score{{Board: "s", Player: "a", Keys: []int64{1}}}, true, nil); podium.ErrorCode(err) != podium.ECodeUnavailable {
		t.Fatalf("a write after an fsync failure was taken: %v", err)
	}
}
