package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium/client"
)

// streamFront is a front of a real server's stream endpoint that records
// the Last-Event-ID of every connection, can cut the open ones, hold new
// ones at the door, and drop one delta from a stream.
type streamFront struct {
	mu        sync.Mutex
	lastIDs   []string
	cancels   []context.CancelFunc
	gate      chan struct{} // non-nil: new streams wait until it is closed
	waiting   int
	dropDelta bool // drop the next delta event
	dropped   int
}

func (f *streamFront) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "text/event-stream" {
			h.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		if r.Header.Get("X-Test-Viewer") != "" { // another viewer of the window: never cut
			h.ServeHTTP(w, r)
			return
		}
		f.mu.Lock()
		f.lastIDs = append(f.lastIDs, r.Header.Get("Last-Event-ID"))
		f.cancels = append(f.cancels, cancel)
		gate := f.gate
		if gate != nil {
			f.waiting++
		}
		f.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
				return
			}
		}
		h.ServeHTTP(&deltaFilter{ResponseWriter: w, f: f}, r.WithContext(ctx))
	})
}

// cut ends every open stream (the server ends the response: a clean EOF).
func (f *streamFront) cut() {
	f.mu.Lock()
	for _, c := range f.cancels {
		c()
	}
	f.cancels = nil
	f.mu.Unlock()
}

func (f *streamFront) hold() {
	f.mu.Lock()
	f.gate, f.waiting = make(chan struct{}), 0
	f.mu.Unlock()
}

func (f *streamFront) release() {
	f.mu.Lock()
	close(f.gate)
	f.gate = nil
	f.mu.Unlock()
}

func (f *streamFront) held() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.waiting
}

func (f *streamFront) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.lastIDs...)
}

// deltaFilter passes a stream through, whole events at a time, leaving out
// the first delta after dropDelta is set.
type deltaFilter struct {
	http.ResponseWriter
	f   *streamFront
	buf []byte
}

func (d *deltaFilter) Write(b []byte) (int, error) {
	d.buf = append(d.buf, b...)
	for {
		i := bytes.Index(d.buf, []byte("\n\n"))
		if i < 0 {
			return len(b), nil
		}
		frame := d.buf[:i+2]
		d.f.mu.Lock()
		drop := d.f.dropDelta && bytes.Contains(frame, []byte("\nevent: delta\n"))
		if drop {
			d.f.dropDelta = false
			d.f.dropped++
		}
		d.f.mu.Unlock()
		if !drop {
			if _, err := d.ResponseWriter.Write(frame); err != nil {
				return 0, err
			}
		}
		d.buf = d.buf[i+2:]
	}
}

func (d *deltaFilter) Flush() { http.NewResponseController(d.ResponseWriter).Flush() }

// Unwrap gives the server's response controller the real writer.
func (d *deltaFilter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// seen is one callback of a watch.
type seen struct {
	state  client.State
	update client.Update
}

// watching runs a Watch and collects what it hands over.
type watching struct {
	t       *testing.T
	c       *client.Client
	board   string
	limit   int
	updates chan seen
	done    chan error
	cancel  context.CancelFunc
	last    client.State
	log     []seen // since the last take
}

func startWatch(t *testing.T, c *client.Client, board string, limit int) *watching {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watching{t: t, c: c, board: board, limit: limit, updates: make(chan seen, 10000), done: make(chan error, 1), cancel: cancel}
	go func() {
		w.done <- c.Watch(ctx, board, client.WatchOptions{Limit: limit, MinDelay: 10 * time.Millisecond, MaxDelay: 100 * time.Millisecond},
			func(s client.State, u client.Update) { w.updates <- seen{s, u} })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-w.done; err != nil {
			t.Errorf("Watch ended with %v, want nil (its context ended)", err)
		}
	})
	return w
}

// match takes updates until the window is the REST top N (read once,
// after the submissions were answered), or fails after 10 s. Submissions
// that leave the window as it was make no event, so the window's seq may
// stay behind the board's.
func (w *watching) match(step string) {
	w.t.Helper()
	p, err := w.c.Top(context.Background(), w.board, 0, w.limit, client.ReadOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	want := ranking(p.Entries)
	timeout := time.After(10 * time.Second)
	for w.last.SnapshotID == 0 || ranking(w.last.Entries) != want || w.last.Total != p.Total {
		select {
		case s := <-w.updates:
			w.log = append(w.log, s)
			w.last = s.state
		case err := <-w.done:
			w.t.Fatalf("%s: Watch ended: %v", step, err)
		case <-timeout:
			w.t.Fatalf("%s: after 10s the window (total %d) is\n  %s\nnot the REST top %d (total %d)\n  %s",
				step, w.last.Total, ranking(w.last.Entries), w.limit, p.Total, want)
		}
	}
	if w.last.Seq > p.Seq || len(w.last.Entries) > w.limit {
		w.t.Fatalf("%s: window at seq %d with %d entries, REST at %d", step, w.last.Seq, len(w.last.Entries), p.Seq)
	}
}

func (w *watching) types() string {
	s := ""
	for _, x := range w.log {
		s += x.update.Type[:1]
	}
	return s
}

func watchSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("SEED=%q", v)
		}
	}
	t.Logf("seed %d (replay with SEED=%d)", seed, seed)
	return seed
}

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

func isDeltas(s string) bool {
	for _, c := range s {
		if c != 'd' {
			return false
		}
	}
	return true
}

func hasSnapshot(l []seen) bool {
	for _, s := range l {
		if s.update.Type == "snapshot" {
			return true
		}
	}
	return false
}

// waitUpdate takes one more update into w.log.
func waitUpdate(w *watching, d time.Duration) bool {
	select {
	case s := <-w.updates:
		w.log = append(w.log, s)
		w.last = s.state
		return true
	case <-time.After(d):
		return false
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !ok(); {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
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

// viewer watches a board's window of its own, past the front (which never
// cuts it), until the test ends. Its match tells when the hub has sent
// what the board's last changes did to the window.
func viewer(t *testing.T, url, board string, limit int) *watching {
	hc := &http.Client{Transport: viewerTransport{}}
	return startWatch(t, client.New(url, client.WithHTTPClient(hc)), board, limit)
}

// viewerTransport marks a viewer's requests for the front.
type viewerTransport struct{}

func (viewerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Viewer", "1")
	return http.DefaultTransport.RoundTrip(r)
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
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
