package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
)

// boardPut is the answer of one PutBoard.
type boardPut struct {
	i       int
	created bool
	err     error
}

// queuePuts holds the writer, queues one PutBoard of each board in order
// (each queued before the next is sent, so that the writer takes them in
// that order), and lets them run as one drain. It returns the answers by
// index.
func queuePuts(t *testing.T, eng *engine.Engine, boards []*podium.Board) []boardPut {
	t.Helper()
	ctx := context.Background()
	release, held := make(chan struct{}), make(chan struct{})
	go eng.OnWriter(ctx, func() { close(held); <-release })
	<-held
	answers := make(chan boardPut, len(boards))
	for i, b := range boards {
		go func() {
			_, created, err := eng.PutBoard(ctx, b)
			answers <- boardPut{i, created, err}
		}()
		for eng.QueuedOps() < i+1 {
			runtime.Gosched()
		}
	}
	close(release)
	out := make([]boardPut, len(boards))
	for range boards {
		a := <-answers
		out[a.i] = a
	}
	return out
}

func plainBoard(id string) *podium.Board {
	return &podium.Board{ID: id, Keys: []podium.KeyDef{{Name: "score", Order: podium.Desc}}, Mode: podium.Best, Reset: podium.Reset{Every: podium.Daily, TZ: "UTC"}}
}

// Board PUTs that queue while the writer is busy share one transaction
// and one fsync; an invalid one among them is refused alone; a second PUT
// of a board in the group is applied after the first (an update, not a
// second creation); each is durable when answered: all are there after a
// restart.
func TestBoardPutsShareACommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "podium.db")
	open := func() (*sqlite.Store, *engine.Engine) {
		st, err := sqlite.Open(path, sqlite.Options{Sync: "full"})
		if err != nil {
			t.Fatal(err)
		}
		// No modules: the webhooks' worker fsyncs at times of its own.
		eng := engine.New(engine.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err := eng.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return st, eng
	}
	st, eng := open()
	const n = 40
	var boards []*podium.Board
	for i := range n {
		boards = append(boards, plainBoard(fmt.Sprintf("b%02d", i)))
	}
	bad := plainBoard("bad")
	bad.Keys = nil // no keys: invalid
	boards = slices.Insert(boards, 7, bad)
	again := plainBoard("b03")
	again.Public = true
	boards = append(boards, again)

	fsyncs := st.Fsyncs()
	answers := queuePuts(t, eng, boards)
	used := st.Fsyncs() - fsyncs
	for i, a := range answers {
		switch {
		case boards[i] == bad:
			if podium.ErrorCode(a.err) != podium.ECodeInvalid {
				t.Errorf("PUT of an invalid board among others = %v, want %s", a.err, podium.ECodeInvalid)
			}
		case boards[i] == again:
			if a.err != nil || a.created {
				t.Errorf("second PUT of b03 in the same drain = created %v, %v; want an update", a.created, a.err)
			}
		case a.err != nil || !a.created:
			t.Errorf("PUT of %s = created %v, %v", boards[i].ID, a.created, a.err)
		}
	}
	// One group up to the second PUT of b03, which starts the next: two
	// fsyncs, not one a board.
	if used > 2 {
		t.Errorf("%d board PUTs used %d fsyncs, want 2 (the PUTs share commits)", len(boards), used)
	}
	t.Logf("%d board PUTs, %d fsyncs", len(boards), used)
	eng.Close()
	st.Close()

	st, eng = open()
	defer st.Close()
	defer eng.Close()
	for i := range n {
		id := fmt.Sprintf("b%02d", i)
		bi, err := eng.Board(id)
		if err != nil {
			t.Fatalf("board %s after a restart: %v", id, err)
		}
		if want := id == "b03"; bi.Public != want {
			t.Errorf("board %s after a restart: public %v, want %v", id, bi.Public, want)
		}
	}
	if _, err := eng.Board("bad"); podium.ErrorCode(err) != podium.ECodeBoardNotFound {
		t.Errorf("the invalid board after a restart: %v, want %s", err, podium.ECodeBoardNotFound)
	}
}

// A store failure of a group fails each PUT of it (503), stores and
// applies none, and the modules hear each change's parts, then each
// change's end, in order.
func TestBoardPutsGroupFails(t *testing.T) {
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
	boards := []*podium.Board{plainBoard("x"), plainBoard("y"), plainBoard("z")}

	r.fail.Store(true)
	for _, a := range queuePuts(t, eng, boards) {
		if podium.ErrorCode(a.err) != podium.ECodeUnavailable {
			t.Errorf("PUT of %s in a failing group = %v, want %s", boards[a.i].ID, a.err, podium.ECodeUnavailable)
		}
	}
	for _, b := range boards {
		if _, err := eng.Board(b.ID); podium.ErrorCode(err) != podium.ECodeBoardNotFound {
			t.Errorf("board %s after its group failed: %v", b.ID, err)
		}
	}
	if bs, err := st.Boards(context.Background()); err != nil || len(bs) != 0 {
		t.Errorf("stored boards after the group failed: %d, %v", len(bs), err)
	}
	want := []string{"parts created x", "parts created y", "parts created z", "stored created x false", "stored created y false", "stored created z false"}
	if got := r.take(); !slices.Equal(got, want) {
		t.Errorf("hooks of a failed group = %q, want %q", got, want)
	}

	r.fail.Store(false)
	for _, a := range queuePuts(t, eng, boards) {
		if a.err != nil || !a.created {
			t.Errorf("PUT of %s = created %v, %v", boards[a.i].ID, a.created, a.err)
		}
	}
	want = []string{"parts created x", "parts created y", "parts created z",
		"stored created x true", "changed created x", "stored created y true", "changed created y", "stored created z true", "changed created z"}
	if got := r.take(); !slices.Equal(got, want) {
		t.Errorf("hooks of a group = %q, want %q", got, want)
	}
}

// An aggregate PUT queued behind the PUTs of its sources is checked once
// they are applied (a PUT that locks other boards ends the group before
// it), so it is made; a PUT in the same drain after it joins a new group.
func TestBoardPutsAggregateAfterSources(t *testing.T) {
	e := newEnv(t)
	src := func(id string) *podium.Board {
		return &podium.Board{ID: id, Keys: []podium.KeyDef{asc("ms")}, Mode: podium.Best, Public: true}
	}
	agg := aggSumOfBests("total", false, []podium.KeyDef{asc("ms")}, "a", "b")
	boards := []*podium.Board{src("a"), src("b"), agg, src("c")}
	for _, a := range queuePuts(t, e.eng, boards) {
		if a.err != nil || !a.created {
			t.Errorf("PUT of %s = created %v, %v", boards[a.i].ID, a.created, a.err)
		}
	}
	e.submit("a", "alice", 5)
	e.submit("b", "alice", 7)
	eq(t, e.top("total", ""), []string{"1:alice:[12]"})
}
