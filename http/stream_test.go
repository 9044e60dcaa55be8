package http_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/podiumhq/podium/stream"
)

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct {
	ID, Type string
	Data     map[string]any
}

type sseClient struct {
	t      *testing.T
	resp   *http.Response
	events chan sseEvent
	cancel context.CancelFunc
}

// openSSE opens a stream (with an API key if one is given) and parses its
// events in the background.
func (s *server) openSSE(path, lastID string, key ...string) *sseClient {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+path, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	if len(key) > 0 {
		req.Header.Set("Authorization", "Bearer "+key[0])
	}
	resp, err := s.httpClient().Do(req)
	if err != nil {
		cancel()
		s.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		cancel()
		s.t.Fatalf("stream status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		s.t.Fatalf("content type %q", ct)
	}
	c := &sseClient{t: s.t, resp: resp, events: make(chan sseEvent, 1000), cancel: cancel}
	go func() {
		defer close(c.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		var ev sseEvent
		var data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Type != "" {
					json.Unmarshal([]byte(data), &ev.Data)
					c.events <- ev
				}
				ev, data = sseEvent{}, ""
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.Type = line[7:]
			case strings.HasPrefix(line, "data: "):
				data = line[6:]
			}
		}
	}()
	s.t.Cleanup(c.close)
	return c
}

func (c *sseClient) close() { c.cancel(); c.resp.Body.Close() }

func (c *sseClient) next(wait time.Duration) sseEvent {
	c.t.Helper()
	select {
	case ev, ok := <-c.events:
		if !ok {
			c.t.Fatal("stream ended")
		}
		return ev
	case <-time.After(wait):
		c.t.Fatalf("no event within %s", wait)
	}
	return sseEvent{}
}

// board is a client-side copy of a window, kept by applying events the way
// a browser would (docs/CLIENT.md): changed entries at their new ranks,
// untouched entries filling the free ranks in their old order.
type board struct {
	snap    float64
	seq     float64
	entries []map[string]any // in rank order
}

func (b *board) apply(t *testing.T, ev sseEvent) {
	t.Helper()
	d := ev.Data
	switch ev.Type {
	case "snapshot":
		b.snap, b.seq = d["snapshot_id"].(float64), d["seq"].(float64)
		b.entries = nil
		for _, e := range d["entries"].([]any) {
			b.entries = append(b.entries, e.(map[string]any))
		}
	case "delta":
		if d["snapshot_id"].(float64) != b.snap || d["prev_seq"].(float64) != b.seq {
			t.Fatalf("gap: delta %v applies to %v/%v, client at %v/%v", ev.ID, d["snapshot_id"], d["prev_seq"], b.snap, b.seq)
		}
		if d["seq"].(float64) <= b.seq {
			t.Fatalf("seq did not increase: %v after %v", d["seq"], b.seq)
		}
		b.seq = d["seq"].(float64)
		gone := map[string]bool{}
		for _, r := range d["removed"].([]any) {
			gone[r.(map[string]any)["player"].(string)] = true
		}
		changes := d["changes"].([]any)
		for _, c := range changes {
			gone[c.(map[string]any)["player"].(string)] = true
		}
		var rest []map[string]any
		for _, e := range b.entries {
			if !gone[e["player"].(string)] {
				rest = append(rest, e)
			}
		}
		next := make([]map[string]any, len(rest)+len(changes))
		for _, c := range changes {
			m := c.(map[string]any)
			r := int(m["rank"].(float64))
			if r < 1 || r > len(next) || next[r-1] != nil {
				t.Fatalf("delta rank %d does not fit a window of %d: %v", r, len(next), d)
			}
			next[r-1] = m
		}
		for i, j := 0, 0; i < len(next); i++ {
			if next[i] == nil {
				e := map[string]any{}
				for k, v := range rest[j] {
					e[k] = v
				}
				e["rank"] = float64(i + 1)
				next[i] = e
				j++
			}
		}
		b.entries = next
	}
}

// order renders the client's window as "rank:player:keys" in rank order.
func (b *board) order() []string {
	var out []string
	for _, m := range b.entries {
		out = append(out, fmt.Sprintf("%03.0f:%s:%v", m["rank"], m["player"], m["keys"]))
	}
	sort.Strings(out)
	return out
}

// restOrder renders the REST view of the top n the same way.
func (s *server) restOrder(board string, n int) []string {
	s.t.Helper()
	r := s.must(200, s.do("GET", fmt.Sprintf("/v1/boards/%s/entries?limit=%d", board, n), adminKey, nil)).json(s.t)
	var out []string
	for _, e := range r["entries"].([]any) {
		m := e.(map[string]any)
		out = append(out, fmt.Sprintf("%03.0f:%s:%v", m["rank"], m["player"], m["keys"]))
	}
	return out
}

func (s *server) score(board, player string, v int) {
	s.t.Helper()
	s.must(200, s.do("POST", "/v1/boards/"+board+"/scores", adminKey, fmt.Sprintf(`{"player":%q,"score":%d}`, player, v)))
}

// waitFor applies events until the client's window equals the board's
// top n (REST) or the deadline passes; it returns the events applied.
func waitFor(t *testing.T, s *server, c *sseClient, b *board, board string, n int, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	count := 0
	for {
		want := s.restOrder(board, n)
		if fmt.Sprint(b.order()) == fmt.Sprint(want) {
			return count
		}
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("client window\n%v\nnever matched the board\n%v", b.order(), want)
		}
		b.apply(t, c.next(left))
		count++
	}
}

// waitCond polls ok until it holds; the deadline is a failure timeout
// only, generous for a busy machine.
func waitCond(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); !ok(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

const oneKey = `{"keys":[{"name":"points","order":"desc"}],"mode":"latest","public":true}`

func TestSSESnapshotThenDeltas(t *testing.T) {
	s := newServer(t)
	s.mkBoard("live", oneKey)
	s.score("live", "a", 10)
	s.score("live", "b", 20)
	c := s.openSSE("/v1/boards/live/stream?limit=4", "")
	first := c.next(2 * time.Second)
	if first.Type != "snapshot" || first.ID == "" || len(first.Data["entries"].([]any)) != 2 || first.Data["seq"].(float64) != 2 {
		t.Fatalf("first event: %+v", first)
	}
	var b board
	b.apply(t, first)
	s.score("live", "c", 30) // enters at the top
	s.score("live", "d", 5)  // enters last
	s.score("live", "e", 1)  // below the window of 4: only total changes
	waitFor(t, s, c, &b, "live", 4, 3*time.Second)
	s.score("live", "a", 40)
	moved := map[string]float64{}
	for moved["a"] == 0 {
		ev := c.next(2 * time.Second)
		if ev.Type != "delta" {
			t.Fatalf("want a delta, got %+v", ev)
		}
		b.apply(t, ev)
		for _, e := range ev.Data["changes"].([]any) {
			m := e.(map[string]any)
			if pr, ok := m["prev_rank"].(float64); ok {
				moved[m["player"].(string)] = pr
			}
		}
	}
	if moved["a"] != 3 {
		t.Fatalf("a moved from rank 3 to 1; delta says %v", moved)
	}
	// The entries a pushed down are in the delta too, with their old ranks.
	if moved["c"] != 1 || moved["b"] != 2 {
		t.Fatalf("entries pushed down by a are missing from the delta: %v", moved)
	}
	if fmt.Sprint(b.order()) != fmt.Sprint(s.restOrder("live", 4)) {
		t.Fatalf("after delta %v != %v", b.order(), s.restOrder("live", 4))
	}
}

// TestSSECoalescing: a burst of 1,000 submissions becomes a handful of
// events whose final state equals the board.
func TestSSECoalescing(t *testing.T) {
	s := newServer(t)
	s.mkBoard("burst", oneKey)
	c := s.openSSE("/v1/boards/burst/stream?limit=50", "")
	var b board
	b.apply(t, c.next(2*time.Second))
	var wg sync.WaitGroup
	for w := 0; w < 10; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var items []string
			for i := 0; i < 100; i++ {
				items = append(items, fmt.Sprintf(`{"board":"burst","player":"p%d","keys":[%d]}`, (w*100+i)%300, w*1000+i))
			}
			s.must(200, s.do("POST", "/v1/scores", adminKey, `{"scores":[`+strings.Join(items, ",")+`]}`))
		}(w)
	}
	wg.Wait()
	n := waitFor(t, s, c, &b, "burst", 50, 5*time.Second)
	if n > 12 {
		t.Fatalf("1,000 submissions produced %d events; coalescing should give a handful", n)
	}
	t.Logf("1,000 submissions -> %d events", n)
}

// TestSSEResume: a reconnect with Last-Event-ID gets exactly the missed
// deltas while the history reaches back, and a snapshot beyond it.
func TestSSEResume(t *testing.T) {
	s := newServerWith(t, stream.Config{History: 4, Coalesce: 20 * time.Millisecond}, false)
	s.mkBoard("r", oneKey)
	s.score("r", "a", 1)
	keep := s.openSSE("/v1/boards/r/stream?limit=10", "") // keeps the window alive
	var kb board
	kb.apply(t, keep.next(2*time.Second))

	c := s.openSSE("/v1/boards/r/stream?limit=10", "")
	var b board
	snap := c.next(2 * time.Second)
	b.apply(t, snap)
	s.score("r", "b", 2)
	ev := c.next(2 * time.Second)
	b.apply(t, ev)
	lastID := ev.ID
	c.close()
	waitFor(t, s, keep, &kb, "r", 10, 2*time.Second)

	// Two changes while away, each its own delta.
	s.score("r", "c", 3)
	waitFor(t, s, keep, &kb, "r", 10, 2*time.Second)
	s.score("r", "d", 4)
	waitFor(t, s, keep, &kb, "r", 10, 2*time.Second)

	c2 := s.openSSE("/v1/boards/r/stream?limit=10", lastID)
	for i := 0; i < 2; i++ {
		ev := c2.next(2 * time.Second)
		if ev.Type != "delta" {
			t.Fatalf("resume event %d is %s, want only the missed deltas", i, ev.Type)
		}
		b.apply(t, ev)
	}
	if fmt.Sprint(b.order()) != fmt.Sprint(s.restOrder("r", 10)) {
		t.Fatalf("resumed window %v != board %v", b.order(), s.restOrder("r", 10))
	}
	// Nothing more was sent: the next event is the next change.
	s.score("r", "e", 5)
	if ev := c2.next(2 * time.Second); ev.Type != "delta" || ev.Data["seq"].(float64) != 5 {
		t.Fatalf("after resume: %+v", ev)
	}
	c2.close()

	// Beyond the history (4 events): a snapshot.
	for i := 0; i < 6; i++ {
		s.score("r", "f", 10+i)
		waitFor(t, s, keep, &kb, "r", 10, 2*time.Second)
	}
	c3 := s.openSSE("/v1/boards/r/stream?limit=10", lastID)
	if ev := c3.next(2 * time.Second); ev.Type != "snapshot" {
		t.Fatalf("resume beyond history sent %s, want snapshot", ev.Type)
	}
	c4 := s.openSSE("/v1/boards/r/stream?limit=10", "garbage-id")
	if ev := c4.next(2 * time.Second); ev.Type != "snapshot" {
		t.Fatalf("unknown id sent %s, want snapshot", ev.Type)
	}
}

// TestStalledReaderIsResynced: a subscriber that stops reading does not
// block the writer or other subscribers; when it reads again it gets a
// snapshot of the current state.
func TestStalledReaderIsResynced(t *testing.T) {
	s := newServerWith(t, stream.Config{Queue: 4, Coalesce: 10 * time.Millisecond}, false)
	s.mkBoard("slow", oneKey)
	stalled, err := s.hub.Connect("203.0.113.9", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	if _, err := stalled.Subscribe(context.Background(), "slow", 10, ""); err != nil {
		t.Fatal(err)
	}
	c := s.openSSE("/v1/boards/slow/stream?limit=10", "")
	var b board
	b.apply(t, c.next(2*time.Second))
	// Every change reaches the live client although the stalled one
	// never reads: a hub that waited for the stalled queue would hold
	// every later round back, and waitFor would fail (its deadline is
	// only a failure timeout, not a latency bound).
	for i := 0; i < 20; i++ {
		s.score("slow", fmt.Sprintf("p%d", i%12), i)
		waitFor(t, s, c, &b, "slow", 10, 10*time.Second)
	}
	// The stalled reader's queue overflowed: its first event is a fresh
	// snapshot equal to the board, not stale deltas.
	_, ev, ok := stalled.Next(10*time.Second, nil)
	if !ok || ev == nil || ev.Type != "snapshot" {
		t.Fatalf("stalled reader got %+v", ev)
	}
	if stalled.Resyncs() == 0 {
		t.Fatal("no resync counted")
	}
	var snap map[string]any
	json.Unmarshal(ev.JSON, &snap)
	var sb board
	sb.apply(t, sseEvent{Type: "snapshot", Data: snap})
	if fmt.Sprint(sb.order()) != fmt.Sprint(s.restOrder("slow", 10)) {
		t.Fatalf("resync snapshot %v != board %v", sb.order(), s.restOrder("slow", 10))
	}
}

func TestStreamCapPerIP(t *testing.T) {
	s := newServerWith(t, stream.Config{MaxPerIP: 2}, false)
	s.mkBoard("cap", oneKey)
	s.openSSE("/v1/boards/cap/stream", "")
	s.openSSE("/v1/boards/cap/stream", "")
	r := s.do("GET", "/v1/boards/cap/stream", "", nil)
	if r.status != 429 || r.header.Get("Retry-After") == "" || r.header.Get("Retry-After") == "0" {
		t.Fatalf("third stream: %d %v %s", r.status, r.header, r.body)
	}
	if c := r.errCode(t); c != "rate_limited" {
		t.Fatal(c)
	}
}

func TestPeriodRolloverEvent(t *testing.T) {
	s := newServerWith(t, stream.Config{}, true)
	s.mkBoard("day", `{"keys":[{"name":"n","order":"desc"}],"reset":{"every":"day"},"public":true}`)
	s.score("day", "a", 1)
	c := s.openSSE("/v1/boards/day/stream", "")
	if ev := c.next(2 * time.Second); ev.Type != "snapshot" || ev.Data["period"] != "2026-11-30" {
		t.Fatalf("first: %+v", ev)
	}
	s.clock.Add(24 * time.Hour)
	ev := c.next(2 * time.Second)
	if ev.Type != "period" || ev.Data["period"] != "2026-12-01" || ev.Data["previous"] != "2026-11-30" || ev.ID == "" {
		t.Fatalf("rollover: %+v", ev)
	}
	periodID := ev.ID
	ev = c.next(2 * time.Second)
	if ev.Type != "snapshot" || len(ev.Data["entries"].([]any)) != 0 || ev.Data["period"] != "2026-12-01" || ev.ID == periodID {
		t.Fatalf("snapshot of the new period: %+v", ev)
	}
	// A client that dropped right after the period event resumes with the
	// new period's snapshot.
	c2 := s.openSSE("/v1/boards/day/stream", periodID)
	if ev2 := c2.next(2 * time.Second); ev2.Type != "snapshot" || ev2.ID != ev.ID {
		t.Fatalf("resume after the period event: %+v", ev2)
	}
}

func TestWebSocketSeveralBoards(t *testing.T) {
	s := newServer(t)
	s.mkBoard("w1", oneKey)
	s.mkBoard("w2", oneKey)
	s.mkBoard("private", `{"keys":[{"name":"n","order":"desc"}]}`)
	s.score("w1", "a", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.url, "http")+"/v1/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	send := func(v string) {
		if err := c.Write(ctx, websocket.MessageText, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("not JSON: %s", b)
		}
		return m
	}
	send(`{"op":"subscribe","board":"w1","limit":5}`)
	send(`{"op":"subscribe","board":"w2","limit":5}`)
	got := map[string]bool{}
	for i := 0; i < 4; i++ {
		m := recv()
		got[fmt.Sprint(m["type"], ":", m["board"])] = true
	}
	for _, want := range []string{"snapshot:w1", "snapshot:w2", "subscribed:w1", "subscribed:w2"} {
		if !got[want] {
			t.Fatalf("missing %s in %v", want, got)
		}
	}
	s.score("w2", "z", 9)
	if m := recv(); m["type"] != "delta" || m["board"] != "w2" {
		t.Fatalf("want delta on w2, got %v", m)
	}
	send(`{"op":"subscribe","board":"nope"}`)
	if m := recv(); m["type"] != "error" || m["code"] != "board_not_found" {
		t.Fatalf("unknown board: %v", m)
	}
	send(`{"op":"subscribe","board":"private"}`)
	if m := recv(); m["type"] != "error" || m["code"] != "board_not_found" || m["message"] != `board "private" does not exist` {
		t.Fatalf("private board without key: %v", m)
	}
	send(`{"op":"bogus"}`)
	if m := recv(); m["type"] != "error" || m["code"] != "invalid_argument" {
		t.Fatalf("bad op: %v", m)
	}
	send(`{"op":"unsubscribe","board":"w2"}`)
	if m := recv(); m["type"] != "unsubscribed" {
		t.Fatalf("unsubscribe: %v", m)
	}
	s.score("w2", "y", 10)
	s.score("w1", "b", 2)
	if m := recv(); m["board"] != "w1" {
		t.Fatalf("after unsubscribing w2 got %v", m)
	}
}

// TestBoardRecreatedStream: a board deleted and made again while nobody
// watches must not stream the old board's state; a watcher of the deleted
// board gets an error event.
func TestBoardRecreatedStream(t *testing.T) {
	s := newServerWith(t, stream.Config{Coalesce: 20 * time.Millisecond}, false)
	s.mkBoard("again", oneKey)
	s.score("again", "old1", 1)
	s.score("again", "old2", 2)
	c := s.openSSE("/v1/boards/again/stream?limit=10", "")
	first := c.next(2 * time.Second)
	c.close()
	// The server notices that the client left: the window of 10 is idle.
	waitCond(t, "the closed stream's subscription to go", func() bool { return s.hub.Stats().Subscriptions == 0 })
	watcher := s.openSSE("/v1/boards/again/stream?limit=5", "")
	watcher.next(2 * time.Second)

	s.must(204, s.do("DELETE", "/v1/boards/again", adminKey, nil))
	if ev := watcher.next(2 * time.Second); ev.Type != "error" || ev.Data["code"] != "board_not_found" {
		t.Fatalf("watcher of a deleted board got %+v", ev)
	}
	s.mkBoard("again", oneKey)
	s.score("again", "new", 5)
	for _, last := range []string{"", first.ID} {
		c2 := s.openSSE("/v1/boards/again/stream?limit=10", last)
		ev := c2.next(2 * time.Second)
		if ev.Type != "snapshot" || ev.ID == first.ID {
			t.Fatalf("after recreating (last id %q): %+v", last, ev)
		}
		es := ev.Data["entries"].([]any)
		if len(es) != 1 || es[0].(map[string]any)["player"] != "new" {
			t.Fatalf("the recreated board streams the old state (last id %q): %v", last, es)
		}
		c2.close()
	}
}

// TestOverloadFallsBackToSnapshots: when a window changes much faster than
// its rate (here 5 changed entries a second, less than one event), it
// sends at most one event a second, a snapshot, each equal to the board at
// its seq.
func TestOverloadFallsBackToSnapshots(t *testing.T) {
	s := newServerWith(t, stream.Config{Coalesce: 20 * time.Millisecond, OverloadChanges: 5}, false)
	s.mkBoard("hot", oneKey)
	c := s.openSSE("/v1/boards/hot/stream?limit=20", "")
	var b board
	b.apply(t, c.next(2*time.Second))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// Not s.score: a test may not fail from another goroutine.
			if r := s.do("POST", "/v1/boards/hot/scores", adminKey, fmt.Sprintf(`{"player":"p%d","score":%d}`, i%40, i)); r.status != 200 {
				t.Errorf("score: %d %s", r.status, r.body)
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	var snaps []time.Time
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		// Generous: on a loaded machine a second between snapshots can
		// stretch; what the test checks is that they never come closer.
		ev := c.next(10 * time.Second)
		b.apply(t, ev)
		if ev.Type == "snapshot" {
			snaps = append(snaps, time.Now())
		}
	}
	close(stop)
	<-done
	if len(snaps) < 2 {
		t.Fatalf("an overloaded window sent %d snapshots in 4 s", len(snaps))
	}
	for i := 1; i < len(snaps); i++ {
		if gap := snaps[i].Sub(snaps[i-1]); gap < 900*time.Millisecond {
			t.Fatalf("snapshots %v apart: more than one a second", gap)
		}
	}
	// Once calm, the window ends equal to the board.
	waitFor(t, s, c, &b, "hot", 20, 3*time.Second)
}

// TestShutdownTellsClientsToComeBack: closing the hub ends every SSE stream
// with a short retry hint, so browsers reconnect to the restarted server.
func TestShutdownTellsClientsToComeBack(t *testing.T) {
	s := newServer(t)
	s.mkBoard("bye", oneKey)
	resp, err := http.Get(s.url + "/v1/boards/bye/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "event: snapshot") {
			break
		}
	}
	s.hub.Close()
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), "retry: 1000\n") {
		t.Fatalf("stream ended without a retry hint: %q", rest)
	}
}

// TestStalledConnectionIsDropped: a client that stops reading while the
// server has data for it is disconnected once a write makes no progress
// for StallTimeout, freeing its slot.
func TestStalledConnectionIsDropped(t *testing.T) {
	s := newServerWith(t, stream.Config{Coalesce: 10 * time.Millisecond, SnapshotEvery: 20 * time.Millisecond}, false)
	s.streamStall(200 * time.Millisecond)
	s.mkBoard("big", oneKey)
	var items []string
	for i := 0; i < 1000; i++ {
		items = append(items, fmt.Sprintf(`{"board":"big","player":"player-with-a-long-name-%04d","keys":[%d],"meta":{"note":"%s"}}`, i, i, strings.Repeat("x", 200)))
	}
	s.must(200, s.do("POST", "/v1/scores", adminKey, `{"scores":[`+strings.Join(items, ",")+`]}`))
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/boards/big/stream?limit=1000 HTTP/1.1\r\nHost: x\r\n\r\n")
	// Never read. Snapshots of ~300 KB every 20 ms fill the socket.
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if s.hub.Stats().Connections == 1 {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("the stream never started")
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if s.hub.Stats().Connections == 0 {
			// What the server sent before giving up starts as a stream.
			head := make([]byte, 64)
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			n, _ := io.ReadFull(conn, head)
			if !strings.HasPrefix(string(head[:n]), "HTTP/1.1 200") {
				t.Fatalf("the connection was not a stream: %q", head[:n])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a client that stopped reading was never dropped")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSSEIsNotChunked: over HTTP/1.1 the stream's body ends with the
// connection instead of being chunked, so that an event larger than
// net/http's 4 KiB connection buffer is one write, not two; events of
// any size arrive whole.
func TestSSEIsNotChunked(t *testing.T) {
	s := newServer(t)
	s.mkBoard("big", oneKey)
	for i := range 60 {
		s.score("big", fmt.Sprintf("player-with-a-long-name-%03d", i), i)
	}
	c := s.openSSE("/v1/boards/big/stream?limit=50", "")
	if te := c.resp.TransferEncoding; len(te) != 0 || !c.resp.Close {
		t.Fatalf("transfer encoding %q, close %v: want a body that ends with the connection", te, c.resp.Close)
	}
	var b board
	ev := c.next(2 * time.Second)
	if ev.Type != "snapshot" || len(ev.Data["entries"].([]any)) != 50 {
		t.Fatalf("first event %s with %v", ev.Type, ev.Data["entries"])
	}
	b.apply(t, ev)
	s.score("big", "leader", 1000) // everyone moves down: a delta of the whole window
	waitFor(t, s, c, &b, "big", 50, 3*time.Second)
}

// TestNonReaderCutSoonAfterFallingBehind: a client that stops reading
// falls behind its connection's memory bound; it is then cut after the
// behind grace, not after the (here 10-minute) stall timeout, over SSE
// and over WebSocket (issue 17 item 5: non-readers held their bytes for
// 15-40 s).
func TestNonReaderCutSoonAfterFallingBehind(t *testing.T) {
	smallRcv := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	for _, proto := range []string{"sse", "ws"} {
		t.Run(proto, func(t *testing.T) {
			s := newServerWith(t, stream.Config{Coalesce: 10 * time.Millisecond, SnapshotEvery: 20 * time.Millisecond, QueueBytes: 1 << 20}, false)
			s.streamStall(10 * time.Minute)
			s.srv.SetBehindGrace(100 * time.Millisecond)
			s.mkBoard("big", oneKey)
			var items []string
			for i := 0; i < 1000; i++ {
				items = append(items, fmt.Sprintf(`{"board":"big","player":"player-with-a-long-name-%04d","keys":[%d],"meta":{"note":"%s"}}`, i, i, strings.Repeat("x", 200)))
			}
			s.must(200, s.do("POST", "/v1/scores", adminKey, `{"scores":[`+strings.Join(items, ",")+`]}`))
			if proto == "sse" {
				conn, err := smallRcv.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				fmt.Fprintf(conn, "GET /v1/boards/big/stream?limit=1000 HTTP/1.1\r\nHost: x\r\n\r\n")
			} else {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				hc := &http.Client{Transport: &http.Transport{DialContext: smallRcv.DialContext}}
				c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.url, "http")+"/v1/stream", &websocket.DialOptions{HTTPClient: hc})
				if err != nil {
					t.Fatal(err)
				}
				defer c.CloseNow()
				if err := c.Write(ctx, websocket.MessageText, []byte(`{"op":"subscribe","board":"big","limit":1000}`)); err != nil {
					t.Fatal(err)
				}
				// Never read: coder/websocket reads only when asked.
			}
			for start := time.Now(); s.hub.Stats().Connections != 1; time.Sleep(10 * time.Millisecond) {
				if time.Since(start) > 10*time.Second {
					t.Fatal("the stream never started")
				}
			}
			// Snapshots of ~300 KB every 20 ms fill the socket, then the
			// connection's 1 MiB bound. The deadline is a failure timeout
			// only: without the grace the cut waits 10 minutes.
			for start := time.Now(); s.hub.Stats().Connections != 0; time.Sleep(20 * time.Millisecond) {
				if time.Since(start) > 30*time.Second {
					t.Fatalf("a client that fell behind and stopped reading was not cut (stats %+v)", s.hub.Stats())
				}
			}
			if s.hub.Stats().Behind == 0 {
				t.Fatal("the connection was cut without falling behind")
			}
		})
	}
}
