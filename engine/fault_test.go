package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// faultyStore is the real SQLite store whose group commits can be made to
// fail, as a full disk would.
type faultyStore struct {
	*sqlite.Store
	fail     atomic.Bool // group commits fail, as on a full disk
	failAll  atomic.Bool // every commit fails (a batch without submissions too)
	failSync atomic.Bool // fsyncs fail, as on a dying disk
}

func (f *faultyStore) Commit(ctx context.Context, b *podium.Batch) error {
	if f.failAll.Load() || f.fail.Load() && len(b.Submissions) > 0 {
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
		// What the store reports when the WAL's fdatasync fails (the
		// data is in the file, maybe on the disk).
		return podium.OutcomeUnknown(fmt.Errorf("sync: %w", &os.PathError{Op: "fdatasync", Path: "/data/podium.db-wal", Err: syscall.ENOSPC}))
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
	eng := modules.Engine(engine.Config{Store: fs, Logger: log})
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
	eng = modules.Engine(engine.Config{Store: st, Logger: log})
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	check(eng)
	if d, err := engine.CheckStore(ctx, st); err != nil || len(d) != 0 {
		t.Fatalf("CheckStore: %v %v", d, err)
	}
}

// TestFailedSyncStopsWrites: when an fsync fails, podium cannot know
// whether the group reached the disk. The writes of that group are answered
// 503 outcome_unknown (never "nothing was applied"), podium takes no more
// writes until it is restarted and says why, and reads go on being served.
func TestFailedSyncStopsWrites(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fs := &faultyStore{Store: st}
	eng := modules.Engine(engine.Config{Store: fs, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	b := &podium.Board{ID: "s", Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}}
	if _, _, err := eng.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Submit(ctx, []engine.Score{{Board: "s", Player: "a", Keys: []int64{1}}}, true, nil); err != nil {
		t.Fatal(err)
	}
	fs.failSync.Store(true)
	_, err = eng.Submit(ctx, []engine.Score{{Board: "s", Player: "b", Keys: []int64{2}}}, true, nil)
	if podium.ErrorCode(err) != podium.ECodeOutcomeUnknown {
		t.Fatalf("submit with a failing fsync: %v, want outcome_unknown", err)
	}
	if !strings.Contains(podium.ErrorMessage(err), "fdatasync: no space left on device") || strings.Contains(podium.ErrorMessage(err), "podium.db") {
		t.Fatalf("the answer should name the failure without internals: %q", podium.ErrorMessage(err))
	}
	st2 := eng.Status()
	if st2.StorageFailed == "" || !eng.Ready() {
		t.Fatalf("status after an fsync failure: %+v, ready %v", st2, eng.Ready())
	}
	fs.failSync.Store(false)
	_, err = eng.Submit(ctx, []engine.Score{{Board: "s", Player: "a", Keys: []int64{1}}}, true, nil)
	if podium.ErrorCode(err) != podium.ECodeUnavailable || !strings.Contains(podium.ErrorMessage(err), "restart") {
		t.Fatalf("a write after an fsync failure: %v", err)
	}
	if _, _, err := eng.PutBoard(ctx, &podium.Board{ID: "t", Keys: b.Keys}); podium.ErrorCode(err) != podium.ECodeUnavailable {
		t.Fatalf("a board change after an fsync failure: %v", err)
	}
	p, err := eng.Top(ctx, engine.Query{Board: "s"}, 0, 10)
	if err != nil || len(p.Entries) != 1 || p.Entries[0].Player != "a" {
		t.Fatalf("reads after an fsync failure: %+v %v", p.Entries, err)
	}
}

// TestOutcomeUnknownRetryIsSafe replays the issue: a sum +18 whose fsync
// failed was answered 503, yet counted after the restart. Now it is
// answered outcome_unknown, and the retry with the same Idempotency-Key
// after the restart finds the first request committed and applies nothing
// again, whichever way the failed commit went.
func TestOutcomeUnknownRetryIsSafe(t *testing.T) {
	for _, survived := range []bool{true, false} {
		t.Run(fmt.Sprintf("survived=%v", survived), func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "podium.db")
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			open := func() (*sqlite.Store, *faultyStore, *engine.Engine) {
				st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
				if err != nil {
					t.Fatal(err)
				}
				fs := &faultyStore{Store: st}
				eng := modules.Engine(engine.Config{Store: fs, Logger: log})
				if err := eng.Start(ctx); err != nil {
					t.Fatal(err)
				}
				return st, fs, eng
			}
			st, fs, eng := open()
			b := &podium.Board{ID: "s", Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}, Mode: podium.Sum}
			if _, _, err := eng.PutBoard(ctx, b); err != nil {
				t.Fatal(err)
			}
			if _, err := eng.Submit(ctx, []engine.Score{{Board: "s", Player: "a", Keys: []int64{10}}}, true, nil); err != nil {
				t.Fatal(err)
			}
			hash := []byte("sha256 of the body")
			submit := func(eng *engine.Engine) (*podium.IdempotencyRecord, error) {
				claim, prior, err := eng.Idempotency().Claim(ctx, "admin /v1/boards/s/scores", "retry-1", hash)
				if err != nil || prior != nil {
					return prior, err
				}
				_, err = eng.Submit(ctx, []engine.Score{{Board: "s", Player: "a", Keys: []int64{18}}}, true, claim)
				if err == nil {
					claim.Finish(200, []byte("{}"))
				}
				return nil, err
			}
			fs.failSync.Store(true)
			if _, err := submit(eng); podium.ErrorCode(err) != podium.ECodeOutcomeUnknown {
				t.Fatalf("first try: %v, want outcome_unknown", err)
			}
			// The same retry before a restart is refused, never answered
			// as if it had been applied.
			if prior, err := submit(eng); prior != nil || podium.ErrorCode(err) != podium.ECodeUnavailable {
				t.Fatalf("retry before the restart: %+v %v", prior, err)
			}
			eng.Close()
			st.Close()
			if !survived {
				// The commit never reached the disk: remove it, as a
				// power loss would have.
				db, err := sql.Open("sqlite", path)
				if err != nil {
					t.Fatal(err)
				}
				for _, q := range []string{"DELETE FROM submissions WHERE seq = 2", "DELETE FROM idempotency"} {
					if _, err := db.Exec(q); err != nil {
						t.Fatal(err)
					}
				}
				db.Close()
			}
			st, _, eng = open()
			defer st.Close()
			defer eng.Close()
			prior, err := submit(eng)
			if err != nil {
				t.Fatalf("retry after the restart: %v", err)
			}
			if survived != (prior != nil) {
				t.Fatalf("retry after the restart: prior %+v, want a prior answer: %v", prior, survived)
			}
			page, err := eng.Entry(ctx, engine.Query{Board: "s"}, "a")
			if err != nil || page.Entries[0].Keys[0] != 28 {
				t.Fatalf("total after the retry: %+v %v, want 28 (10 + 18 once)", page.Entries, err)
			}
		})
	}
}
