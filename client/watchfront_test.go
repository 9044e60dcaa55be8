package client_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium/client"
)

// What the Watch tests (watch_test.go) run against and observe with: a
// front of the server's stream endpoint that cuts, holds and drops, the
// watches under test and the viewers beside them, a clock.

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
