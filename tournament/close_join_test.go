package tournament

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
)

// leaseStore is a store whose AcquireLease waits, once entered, until its
// context ends or the test releases it, and which notes a lease call that
// returns after the engine's Close did.
type leaseStore struct {
	*sqlite.Store
	closed   atomic.Bool   // set by the test once Close returned
	late     atomic.Bool   // a lease call returned after Close
	entered  chan struct{} // closed when AcquireLease is first entered
	release  chan struct{} // closed by the test after Close returned
	returned chan struct{} // closed when the first AcquireLease returned
	once     sync.Once
}

func (s *leaseStore) AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (podium.Lease, bool, error) {
	first := false
	s.once.Do(func() { first = true; close(s.entered) })
	if first {
		defer close(s.returned)
		select {
		case <-ctx.Done():
		case <-s.release:
		}
	}
	defer s.note()
	return s.Store.AcquireLease(ctx, name, holder, now, ttl)
}

func (s *leaseStore) ReleaseLease(ctx context.Context, name, holder string, epoch int64) error {
	defer s.note()
	return s.Store.ReleaseLease(ctx, name, holder, epoch)
}

func (s *leaseStore) note() {
	if s.closed.Load() {
		s.late.Store(true)
	}
}

// TestCloseJoinsScheduler closes the engine while the tournament
// scheduler waits in the store for the settlement lease. Close must end
// that wait and join the scheduler: once Close returns, no lease call may
// run or return. Before, Close did not wait for the scheduler, whose
// SettleDue went on to take (and release) the lease on a store the caller
// had closed.
func TestCloseJoinsScheduler(t *testing.T) {
	ctx := context.Background()
	sq, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	st := &leaseStore{Store: sq, entered: make(chan struct{}), release: make(chan struct{}), returned: make(chan struct{})}
	var mu sync.Mutex
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := engine.New(engine.Config{Store: st, Now: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Modules: []engine.Module{New(Config{SettleEvery: time.Millisecond})}})
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b := &podium.Board{ID: "cup", Keys: []podium.KeyDef{{Name: "t", Order: podium.Asc}}, Tournament: &podium.Tournament{Start: now.Add(-time.Hour), End: now.Add(time.Hour)}}
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Submit(ctx, []engine.Score{{Board: "cup", Player: "a", Keys: []int64{5}}}, true, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour) // the tournament has ended: the scheduler settles it
	mu.Unlock()
	select {
	case <-st.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the scheduler never asked for the lease")
	}
	closed := make(chan struct{})
	go func() { e.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return: it did not end the scheduler's wait for the store")
	}
	st.closed.Store(true)
	close(st.release)
	<-st.returned
	if st.late.Load() {
		t.Fatal("the scheduler used the store after Close returned")
	}
}
