package engine_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
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
	eng := engine.New(engine.Config{Store: g, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
		diffs, err := eng.CheckLog(ctx)
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
