package engine

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/sqlite"
)

// TestCloseAnswersEveryWrite holds writers between their check that
// writes are taken and the queueing of their op while Close runs to the
// end, then lets them go: every one must be answered (refused, as podium
// is shutting down). Before, an op could be queued after the writer's
// final drain and never be answered: Go picks at random between ready
// select cases.
func TestCloseAnswersEveryWrite(t *testing.T) {
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
	if _, _, err := eng.PutBoard(ctx, &podium.Board{ID: "s", Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}}); err != nil {
		t.Fatal(err)
	}
	const writers = 64
	var held sync.WaitGroup
	held.Add(writers)
	release := make(chan struct{})
	testHookSend = func() { held.Done(); <-release }
	defer func() { testHookSend = nil }()
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		go func() {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, err := eng.Submit(ctx, []Score{{Board: "s", Player: "p", Keys: []int64{1}}}, true, nil)
			errs <- err
		}()
	}
	held.Wait()
	eng.Close()
	close(release)
	for i := 0; i < writers; i++ {
		err := <-errs
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatal("a write sent during Close was never answered")
		}
		if podium.ErrorCode(err) != podium.ECodeUnavailable {
			t.Fatalf("write during Close: %v", err)
		}
	}
}
