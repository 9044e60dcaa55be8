package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// gatedStore is the SQLite store whose log reads wait, once armed, until
// the gate opens; its snapshots share the gate.
type gatedStore struct {
	*sqlite.Store
	armed   *atomic.Bool
	entered chan struct{} // a log read is waiting at the gate
	gate    chan struct{}
}

func (g *gatedStore) Log(ctx context.Context, board string, after uint64, fn func(*podium.Submission) error) error {
	if g.armed.Load() {
		select {
		case g.entered <- struct{}{}:
		default:
		}
		<-g.gate
	}
	return g.Store.Log(ctx, board, after, fn)
}

func (g *gatedStore) Snapshot(ctx context.Context) (podium.Store, func() error, error) {
	snap, release, err := g.Store.Snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	return &gatedStore{Store: snap.(*sqlite.Store), armed: g.armed, entered: g.entered, gate: g.gate}, release, nil
}

// TestCheckLogDoesNotStopWrites: the store check of a running engine
// replays whole logs (17 s for 1M submissions); it must not hold up writes
// meanwhile.
func TestCheckLogDoesNotStopWrites(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := &gatedStore{Store: st, armed: new(atomic.Bool), entered: make(chan struct{}, 1), gate: make(chan struct{})}
	eng := modules.Engine(engine.Config{Store: g, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	b := &podium.Board{ID: "b", Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}, Mode: podium.Sum}
	b.Normalize()
	if _, _, err := eng.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	submit := func(player string) error {
		_, err := eng.Submit(ctx, []engine.Score{{Board: "b", Player: player, Keys: []int64{1}}}, true, nil)
		return err
	}
	if err := submit("a"); err != nil {
		t.Fatal(err)
	}

	g.armed.Store(true)
	type answer struct {
		diffs []engine.Diff
		err   error
	}
	checked := make(chan answer, 1)
	go func() {
		diffs, err := eng.Checker().Log(ctx)
		checked <- answer{diffs, err}
	}()
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		close(g.gate)
		t.Fatal("the check never read the log")
	}
	submitted := make(chan error, 1)
	go func() { submitted <- submit("b") }()
	select {
	case err := <-submitted:
		if err != nil {
			t.Errorf("submit during the check: %v", err)
		}
	case <-time.After(10 * time.Second):
		close(g.gate)
		<-submitted
		t.Fatal("a write waited for the store check to finish")
	}
	close(g.gate)
	if a := <-checked; a.err != nil || len(a.diffs) != 0 {
		t.Errorf("CheckLog = %v, %v; want no differences", a.diffs, a.err)
	}
}

// BenchmarkCheckStore1M measures the store check of podium check (entries
// table against a replay of the log) on one board of 1M entries and their
// 1M logged submissions: why a running server checks a snapshot instead of
// holding its writer for as long.
func BenchmarkCheckStore1M(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	bd := &podium.Board{ID: "big", Keys: []podium.KeyDef{{Name: "t", Order: podium.Asc}, {Name: "v", Order: podium.Desc}}}
	bd.Normalize()
	if err := st.PutBoard(ctx, bd); err != nil {
		b.Fatal(err)
	}
	const n = 1_000_000
	r := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var batch podium.Batch
	for i := 0; i < n; {
		batch.Reset()
		for ; i < n && len(batch.Upserts) < 10_000; i++ {
			p := fmt.Sprintf("player-%07d", i)
			keys := []int64{r.Int64N(1e9), r.Int64N(1000)}
			at := t0.Add(time.Duration(i) * time.Millisecond)
			batch.Submissions = append(batch.Submissions, podium.Submission{Seq: uint64(i + 1), Board: "big", Period: podium.PeriodAll, Player: p, Keys: keys, At: at})
			batch.Upserts = append(batch.Upserts, podium.Entry{Board: "big", Period: podium.PeriodAll, Player: p, Keys: keys, At: at, Seq: uint64(i + 1)})
		}
		batch.Watermarks = append(batch.Watermarks, podium.Watermark{Board: "big", Seq: uint64(i)})
		if err := st.Commit(ctx, &batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		diffs, err := engine.CheckStore(ctx, st)
		if err != nil || len(diffs) != 0 {
			b.Fatal(len(diffs), err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/check")
}
