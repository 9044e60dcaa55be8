package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
)

// boardRows is a module with rows in every board change's transaction
// (engine.BoardPartMaker), as the webhooks' board events are: an outbox
// event per change, for endpoint "x", and, while fail is set, a part the
// store refuses. It records the hooks it hears, in order.
type boardRows struct {
	fail atomic.Bool
	// shared: the node also reloads its own changes as it follows the
	// change feed, at a time of its own, so BoardChanged is not recorded.
	shared bool

	mu    sync.Mutex
	calls []string
	gens  []uint64 // next.Gen as BoardParts saw it
}

// failingPart is a part no store takes (its Check fails).
type failingPart struct{}

func (failingPart) Len() int     { return 1 }
func (failingPart) Check() error { return errors.New("this part cannot be stored") }

func (r *boardRows) Name() string { return "boardrows" }

func change(old, next *podium.Board) (string, *podium.Board) {
	switch {
	case old == nil:
		return "created", next
	case next == nil:
		return "deleted", old
	}
	return "updated", next
}

func (r *boardRows) add(s string) {
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
}

func (r *boardRows) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

// watched is calls without the BoardChanged ones if they are not recorded.
func (r *boardRows) watched(calls ...string) []string {
	if r.shared {
		return slices.DeleteFunc(calls, func(c string) bool { return strings.HasPrefix(c, "changed ") })
	}
	return calls
}

func (r *boardRows) BoardParts(st podium.Store, old, next *podium.Board) []podium.Part {
	what, b := change(old, next)
	r.add("parts " + what + " " + b.ID)
	r.mu.Lock()
	if next != nil {
		r.gens = append(r.gens, next.Gen)
	}
	r.mu.Unlock()
	ev := podium.WebhookEvent{ID: what + "/" + b.ID + "/" + strconv.FormatUint(b.Gen, 10), Type: "board." + what, Board: b.ID,
		At: time.UnixMilli(1), Payload: json.RawMessage(`{}`), Endpoints: []string{"x"}}
	parts := []podium.Part{st.(podium.WebhookStore).WebhookPart([]podium.WebhookEvent{ev})}
	if r.fail.Load() {
		parts = append(parts, failingPart{})
	}
	return parts
}

func (r *boardRows) BoardStored(old, next *podium.Board, err error) {
	what, b := change(old, next)
	r.add("stored " + what + " " + b.ID + " " + strconv.FormatBool(err == nil))
}

// BoardChanged records a change's order against BoardStored.
func (r *boardRows) BoardChanged(old, next *podium.Board) {
	if r.shared {
		return
	}
	what, b := change(old, next)
	r.add("changed " + what + " " + b.ID)
}

// testBoardParts: a module's rows of a board change are stored in the
// change's transaction, or neither is: a refused part fails the change
// (503, nothing stored, nothing applied) and BoardStored hears it; the
// BoardWatchers hear only of a stored change, after BoardStored.
func testBoardParts(t *testing.T, st podium.Store, eng *engine.Engine, r *boardRows) {
	ctx := context.Background()
	ws := st.(podium.WebhookStore)
	outbox := func() []string {
		t.Helper()
		ds, err := ws.WebhookQueue(ctx, "x", 10)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range ds {
			ids = append(ids, d.Event.Type+" "+d.Event.Board)
		}
		return ids
	}
	stored := func() []string {
		t.Helper()
		bs, err := st.Boards(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, b := range bs {
			ids = append(ids, b.ID)
		}
		return ids
	}
	want := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Fatalf("%s = %q, want %q", what, got, want)
		}
	}
	b := &podium.Board{ID: "b", Keys: []podium.KeyDef{{Name: "score", Order: podium.Desc}}, Mode: podium.Best}
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}

	r.fail.Store(true)
	if _, _, err := eng.PutBoard(ctx, b); podium.ErrorCode(err) != podium.ECodeUnavailable {
		t.Fatalf("PutBoard with a refused part = %v, want %s", err, podium.ECodeUnavailable)
	}
	if _, err := eng.Board("b"); podium.ErrorCode(err) != podium.ECodeBoardNotFound {
		t.Fatalf("Board after a failed PutBoard = %v, want %s", err, podium.ECodeBoardNotFound)
	}
	want("stored boards after a failed PutBoard", stored(), nil)
	want("outbox after a failed PutBoard", outbox(), nil)
	want("hooks after a failed PutBoard", r.take(), []string{"parts created b", "stored created b false"})

	r.fail.Store(false)
	if _, created, err := eng.PutBoard(ctx, b); err != nil || !created {
		t.Fatalf("PutBoard = %v, %v", created, err)
	}
	want("stored boards", stored(), []string{"b"})
	want("outbox", outbox(), []string{"board.created b"})
	want("hooks", r.take(), r.watched("parts created b", "stored created b true", "changed created b"))

	b.Public = true // an update: both old and next
	if _, _, err := eng.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	want("outbox after an update", outbox(), []string{"board.created b", "board.updated b"})
	want("hooks of an update", r.take(), r.watched("parts updated b", "stored updated b true", "changed updated b"))

	r.fail.Store(true)
	if err := eng.DeleteBoard(ctx, "b"); podium.ErrorCode(err) != podium.ECodeUnavailable {
		t.Fatalf("DeleteBoard with a refused part = %v, want %s", err, podium.ECodeUnavailable)
	}
	if _, err := eng.Board("b"); err != nil {
		t.Fatalf("Board after a failed DeleteBoard: %v", err)
	}
	want("stored boards after a failed DeleteBoard", stored(), []string{"b"})
	want("outbox after a failed DeleteBoard", outbox(), []string{"board.created b", "board.updated b"})
	want("hooks after a failed DeleteBoard", r.take(), []string{"parts deleted b", "stored deleted b false"})

	r.fail.Store(false)
	if err := eng.DeleteBoard(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	want("stored boards after DeleteBoard", stored(), nil)
	want("outbox after DeleteBoard", outbox(), []string{"board.created b", "board.updated b", "board.deleted b"})
	want("hooks of DeleteBoard", r.take(), r.watched("parts deleted b", "stored deleted b true", "changed deleted b"))
}

func TestBoardParts(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &boardRows{}
	eng := engine.New(engine.Config{Store: st, Modules: []engine.Module{r}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	testBoardParts(t, st, eng, r)
}

// In shared mode the parts ride the SharedStore transaction that puts the
// board, asked for once it has given the board its generation.
func TestSharedBoardParts(t *testing.T) {
	c := newCluster(t)
	n, cfg := c.open("a", nodeOpts{})
	r := &boardRows{shared: true}
	cfg.Modules = []engine.Module{r}
	eng := engine.New(cfg)
	if err := eng.Start(bg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	testBoardParts(t, n.store, eng, r)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, g := range r.gens {
		if g == 0 {
			t.Fatalf("BoardParts %d saw the board before its generation was set", i)
		}
	}
}
