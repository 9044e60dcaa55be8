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
	fail atomic.Bool
}

func (f *faultyStore) Commit(ctx context.Context, b *podium.Batch) error {
	if f.fail.Load() && len(b.Submissions) > 0 {
		return errors.New("disk full (injected)")
	}
	return f.Store.Commit(ctx, b)
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
