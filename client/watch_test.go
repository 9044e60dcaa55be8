package client_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/podiumhq/podium/client"
)

// TestWatchFollowsResumesAndResyncs follows a board through deltas, a
// disconnect (resumed with Last-Event-ID: only deltas), a lost delta (a
// gap: a fresh snapshot), a server restart (a snapshot of the new chain)
// and the board's deletion (the watch ends with board_not_found), checking
// after each step that the window is the REST top N.
func TestWatchFollowsResumesAndResyncs(t *testing.T) {
	f := &streamFront{}
	srv := newTestServer(t, f.wrap)
	ctx := ctxT(t)
	admin := client.New(srv.URL, client.WithKey(adminKey), client.WithRetry(fastRetry))
	if _, _, err := admin.PutBoard(ctx, "live", client.BoardSpec{Keys: []client.RankKey{{Name: "pts", Order: "desc"}}, Mode: "latest", Public: client.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(watchSeed(t), 1))
	submit := func(n int) {
		for range n {
			// latest mode: entries move up and down, in and out of the window.
			must(admin.Submit(ctx, "live", client.Score{Player: fmt.Sprintf("p%02d", rng.IntN(15)), Score: score(rng.Int64N(50))}))
		}
	}
	submit(8)
	w := startWatch(t, client.New(srv.URL), "live", 5)
	w.match("initial snapshot")
	if len(w.log) != 1 || !w.log[0].update.Initial || w.log[0].update.Type != "snapshot" {
		t.Fatalf("first updates %q, want one initial snapshot", w.types())
	}
	for i := range 8 {
		w.log = nil
		submit(1 + rng.IntN(4))
		w.match(fmt.Sprintf("deltas, step %d", i))
		if !isDeltas(w.types()) {
			t.Fatalf("step %d: updates %q, want deltas only", i, w.types())
		}
	}

	// A disconnect: the watch resumes from its last event and gets only
	// the deltas it missed. Another viewer keeps the window running
	// meanwhile (a window nobody watches is not advanced, and a resume
	// from it gets a snapshot).
	v := viewer(t, srv.URL, "live", 5)
	v.match("the viewer's first snapshot")
	before := w.last.EventID()
	f.hold()
	f.cut()
	waitFor(t, "the watch to reconnect", func() bool { return f.held() > 0 })
	w.log = nil
	must(admin.Submit(ctx, "live", client.Score{Player: "top", Score: score(1000)})) // one change at least
	submit(6)
	// The viewer has them once the hub has turned them into deltas, which
	// are then in the window's history.
	v.match("the viewer before the resume")
	f.release()
	w.match("resume")
	if ids := f.ids(); ids[len(ids)-1] != before {
		t.Fatalf("reconnected with Last-Event-ID %q, want %q (all: %q)", ids[len(ids)-1], before, ids)
	}
	if ty := w.types(); ty == "" || !isDeltas(ty) {
		t.Fatalf("after the resume: updates %q, want only deltas", ty)
	}

	// A lost delta: the next one does not follow, so the watch starts
	// over from a fresh snapshot, without Last-Event-ID. First a delta
	// that only changes #1's points: only the seq check can see that it
	// is missing (the next delta's ranks still fit). Then one with a new
	// #1, which every other entry of the window moves for.
	lost := []func(i int){
		func(i int) {
			must(admin.Submit(ctx, "live", client.Score{Player: "top", Score: score(1001 + int64(i))}))
		},
		func(i int) {
			must(admin.Submit(ctx, "live", client.Score{Player: fmt.Sprintf("top%d", i), Score: score(2000 + int64(i))}))
		},
	}
	for n, change := range lost {
		conns := len(f.ids())
		w.log = nil
		f.mu.Lock()
		f.dropDelta, f.dropped = true, 0
		f.mu.Unlock()
		for i := range 3 {
			change(i)
			// Separate deltas: the next change is made once the viewer
			// (and so every subscriber of the window) has this one.
			v.match(fmt.Sprintf("the viewer, gap %d change %d", n, i))
		}
		waitFor(t, "a new connection after the gap", func() bool { return len(f.ids()) > conns })
		for !hasSnapshot(w.log) {
			if !waitUpdate(w, 10*time.Second) {
				t.Fatalf("gap %d: no snapshot (updates %q)", n, w.types())
			}
		}
		w.match(fmt.Sprintf("gap %d", n))
		f.mu.Lock()
		dropped := f.dropped
		f.mu.Unlock()
		if ids := f.ids(); dropped != 1 || len(ids) != conns+1 || ids[conns] != "" {
			t.Fatalf("gap %d: %d dropped, connections %q (from %d), want one new without Last-Event-ID", n, dropped, ids, conns)
		}
	}

	// A restart: the new server cannot resume the old chain and sends a
	// snapshot; the watch follows it on.
	oldSnap, lastID := w.last.SnapshotID, w.last.EventID()
	conns := len(f.ids())
	srv.restart()
	submit(3)
	for w.last.SnapshotID == oldSnap {
		if !waitUpdate(w, 10*time.Second) {
			t.Fatalf("no snapshot of the restarted server (updates %q)", w.types())
		}
	}
	w.match("restart")
	if ids := f.ids(); len(ids) <= conns || ids[conns] != lastID {
		t.Fatalf("reconnected after the restart with %q, want the last event's id", ids[conns:])
	}
	w.log = nil
	submit(5)
	must(admin.Submit(ctx, "live", client.Score{Player: "top", Score: score(3000)}))
	w.match("deltas after the restart")
	if ty := w.types(); ty == "" || !isDeltas(ty) {
		t.Fatalf("after the restart: updates %q, want deltas", ty)
	}

	// Deleting the board ends the watch for good.
	if err := admin.DeleteBoard(ctx, "live"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-w.done:
		if !errors.Is(err, client.ErrBoardNotFound) {
			t.Fatalf("Watch after the board was deleted: %v", err)
		}
		w.done <- nil // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("the watch went on after the board was deleted")
	}
	select {
	case err := <-v.done:
		if !errors.Is(err, client.ErrBoardNotFound) {
			t.Fatalf("the viewer after the board was deleted: %v", err)
		}
		v.done <- nil // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("the viewer went on after the board was deleted")
	}
}

// A board that does not exist ends Watch at once with the server's error.
func TestWatchUnknownBoard(t *testing.T) {
	srv := newTestServer(t, nil)
	err := client.New(srv.URL).Watch(ctxT(t), "nope", client.WatchOptions{}, func(client.State, client.Update) {
		t.Error("an update for a board that does not exist")
	})
	if !errors.Is(err, client.ErrBoardNotFound) || client.StatusOf(err) != 404 {
		t.Fatalf("Watch of an unknown board: %v", err)
	}
	if _, _, err := client.New(srv.URL, client.WithKey(adminKey)).PutBoard(ctxT(t), "b", client.BoardSpec{Keys: []client.RankKey{{Name: "n", Order: "asc"}}, Public: client.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	if err := client.New(srv.URL).Watch(ctxT(t), "b", client.WatchOptions{Limit: 5000}, func(client.State, client.Update) {}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("Watch with limit 5000: %v", err)
	}
}

// Watch's normal stop, its context ending, returns nil: for a deadline as
// for a cancel, while connected and while waiting to reconnect.
func TestWatchStopsWithNil(t *testing.T) {
	srv := newTestServer(t, nil)
	if _, _, err := client.New(srv.URL, client.WithKey(adminKey)).PutBoard(ctxT(t), "b", client.BoardSpec{Keys: []client.RankKey{{Name: "n", Order: "asc"}}, Public: client.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	err := client.New(srv.URL).Watch(ctx, "b", client.WatchOptions{}, func(client.State, client.Update) { cancel() })
	if err != nil {
		t.Fatalf("Watch cancelled after its first snapshot = %v, want nil", err)
	}
	// A deadline ends it the same way, whether it passes before or after
	// the first snapshot.
	ctx, cancel = context.WithTimeout(ctxT(t), 50*time.Millisecond)
	defer cancel()
	if err := client.New(srv.URL).Watch(ctx, "b", client.WatchOptions{}, func(client.State, client.Update) {}); err != nil {
		t.Fatalf("Watch past its deadline = %v, want nil", err)
	}
	// Waiting to reconnect to a server that is gone.
	srv.stop()
	ctx, cancel = context.WithTimeout(ctxT(t), 50*time.Millisecond)
	defer cancel()
	if err := client.New(srv.URL).Watch(ctx, "b", client.WatchOptions{MinDelay: time.Hour}, func(client.State, client.Update) {}); err != nil {
		t.Fatalf("Watch past its deadline while reconnecting = %v, want nil", err)
	}
}

// A daily board at midnight: the watch gets the server's period event and
// the new period's snapshot, reports the period that ended, and follows
// the new period's deltas.
func TestWatchPeriodRolloverOnServer(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)}
	srv := newClockServer(t, nil, clk.Now)
	ctx := ctxT(t)
	admin := client.New(srv.URL, client.WithKey(adminKey))
	if _, _, err := admin.PutBoard(ctx, "day", client.BoardSpec{Keys: []client.RankKey{{Name: "n", Order: "desc"}},
		Reset: &client.Reset{Every: "day"}, Public: client.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{"a", "b", "c"} {
		must(admin.Submit(ctx, "day", client.Score{Player: p, Score: score(int64(10 * (i + 1)))}))
	}
	w := startWatch(t, client.New(srv.URL), "day", 2)
	w.match("before midnight")
	if w.last.Period != "2026-11-30" || w.last.NextReset == nil || !w.last.NextReset.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("state before midnight: %+v", w.last)
	}
	w.log = nil
	clk.Add(time.Hour)
	for w.last.Period != "2026-12-01" {
		if !waitUpdate(w, 10*time.Second) {
			t.Fatalf("no snapshot of the new period (updates %q)", w.types())
		}
	}
	u := w.log[len(w.log)-1].update
	if u.Type != "snapshot" || u.PreviousPeriod != "2026-11-30" || len(u.Changed) != 0 || len(w.last.Entries) != 0 || w.last.Total != 0 {
		t.Fatalf("the new period's snapshot: %+v, state %+v", u, w.last)
	}
	w.match("after midnight")
	w.log = nil
	must(admin.Submit(ctx, "day", client.Score{Player: "b", Score: score(5)}))
	must(admin.Submit(ctx, "day", client.Score{Player: "d", Score: score(7)}))
	w.match("the new period's deltas")
	if ty := w.types(); ty == "" || !isDeltas(ty) {
		t.Fatalf("updates in the new period %q, want deltas", ty)
	}
}
