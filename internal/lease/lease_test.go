package lease

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// fakeStore counts renewals on a channel and records releases; after
// takeAt renewals it answers that another holder has the lease.
type fakeStore struct {
	mu       sync.Mutex
	renewals chan int64
	released []int64
	takeAt   int
	n        int
	taken    chan struct{} // closed when a renewal finds the lease taken
}

func (f *fakeStore) AcquireLease(_ context.Context, name, holder string, _ time.Time, _ time.Duration) (podium.Lease, bool, error) {
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	if f.takeAt > 0 && n >= f.takeAt {
		if n == f.takeAt {
			close(f.taken)
		}
		return podium.Lease{Name: name, Holder: "other", Epoch: 9}, false, nil
	}
	f.renewals <- 1
	return podium.Lease{Name: name, Holder: holder, Epoch: 1}, true, nil
}

func (f *fakeStore) ReleaseLease(_ context.Context, _, _ string, epoch int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released = append(f.released, epoch)
	return nil
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestHoldRenewsThenReleases(t *testing.T) {
	f := &fakeStore{renewals: make(chan int64, 10)}
	release := Hold(f, podium.Lease{Name: "settlement", Holder: "a", Epoch: 1}, 30*time.Millisecond, time.Now, quiet, "test")
	for range 2 { // renewed while held
		select {
		case <-f.renewals:
		case <-time.After(10 * time.Second):
			t.Fatal("no renewal")
		}
	}
	release()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.released) != 1 || f.released[0] != 1 {
		t.Fatalf("released %v, want the held epoch once", f.released)
	}
}

// A renewal that finds the lease taken stops renewing (the fence fails
// the work's commit); release still gives up what it held.
func TestHoldStopsWhenTaken(t *testing.T) {
	f := &fakeStore{renewals: make(chan int64, 10), takeAt: 2, taken: make(chan struct{})}
	release := Hold(f, podium.Lease{Name: "settlement", Holder: "a", Epoch: 1}, 30*time.Millisecond, time.Now, quiet, "test")
	<-f.renewals // the first renewal; the second finds the lease taken
	select {
	case <-f.taken:
	case <-time.After(10 * time.Second):
		t.Fatal("no second renewal attempt")
	}
	release() // returns: the renewer has stopped
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n != 2 {
		t.Fatalf("%d renewal attempts after the lease was taken, want 2 in all", f.n)
	}
}
