package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/stream"
)

// rest reads events until the stream ends or within passes; it reports
// whether the server ended the stream.
func (c *sseClient) rest(within time.Duration) (evs []sseEvent, ended bool) {
	deadline := time.After(within)
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				return evs, true
			}
			evs = append(evs, ev)
		case <-deadline:
			return evs, false
		}
	}
}

// leaks returns the events that carry s.
func leaks(evs []sseEvent, s string) []sseEvent {
	var out []sseEvent
	for _, ev := range evs {
		if b, _ := json.Marshal(ev.Data); strings.Contains(string(b), s) {
			out = append(out, ev)
		}
	}
	return out
}

// wsClient is a WebSocket on /v1/stream.
type wsClient struct {
	t   *testing.T
	c   *websocket.Conn
	ctx context.Context
}

func (s *server) dialWS(query string) *wsClient {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	s.t.Cleanup(cancel)
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.url, "http")+"/v1/stream"+query, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.CloseNow() })
	return &wsClient{t: s.t, c: c, ctx: ctx}
}

func (w *wsClient) send(v string) {
	w.t.Helper()
	if err := w.c.Write(w.ctx, websocket.MessageText, []byte(v)); err != nil {
		w.t.Fatal(err)
	}
}

// recv returns the next message, or the error that ended the socket.
func (w *wsClient) recv(within time.Duration) (map[string]any, []byte, error) {
	ctx, cancel := context.WithTimeout(w.ctx, within)
	defer cancel()
	_, b, err := w.c.Read(ctx)
	if err != nil {
		return nil, nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		w.t.Fatalf("not JSON: %s", b)
	}
	return m, b, nil
}

// subscribe subscribes to board and waits for "subscribed" and the
// snapshot.
func (w *wsClient) subscribe(board string) {
	w.t.Helper()
	w.send(fmt.Sprintf(`{"op":"subscribe","board":%q,"limit":10}`, board))
	got := map[string]bool{}
	for !got["subscribed"] || !got["snapshot"] {
		m, b, err := w.recv(5 * time.Second)
		if err != nil {
			w.t.Fatal(err)
		}
		if m["type"] == "error" {
			w.t.Fatalf("subscribe %s: %s", board, b)
		}
		got[m["type"].(string)] = true
	}
}

const (
	publicBoard  = `{"title":"open","keys":[{"name":"points","order":"desc"}],"mode":"latest","public":true}`
	privateBoard = `{"title":"closed","keys":[{"name":"points","order":"desc"}],"mode":"latest","public":false}`
)

// TestStreamEndsWhenBoardGoesPrivate (issue 6 item 4): an anonymous SSE
// stream on a public board that is then made private and receives a
// submission ends with an unauthenticated error and never carries the
// entry submitted after the change; a reader with a key goes on.
func TestStreamEndsWhenBoardGoesPrivate(t *testing.T) {
	s := newServer(t) // the default 200 ms coalescing, on the wall clock
	s.mkBoard("vis", publicBoard)
	s.score("vis", "public-era", 1)
	anon := s.openSSE("/v1/boards/vis/stream?limit=10", "")
	keyed := s.openSSE("/v1/boards/vis/stream?limit=10", "", adminKey)
	if ev := anon.next(2 * time.Second); ev.Type != "snapshot" {
		t.Fatalf("first event %+v", ev)
	}
	keyed.next(2 * time.Second)

	s.must(200, s.do("PUT", "/v1/boards/vis", adminKey, privateBoard))
	s.score("vis", "secret", 2)
	evs, ended := anon.rest(3 * time.Second)
	if l := leaks(evs, "secret"); len(l) > 0 {
		t.Fatalf("the anonymous stream got the private state: %+v", l)
	}
	if !ended || len(evs) == 0 || evs[len(evs)-1].Type != "error" || evs[len(evs)-1].Data["code"] != "board_not_found" {
		t.Fatalf("the anonymous stream of a board made private got %+v (ended %v); want board_not_found (as if gone), then the end", evs, ended)
	}
	for {
		ev := keyed.next(2 * time.Second)
		if len(leaks([]sseEvent{ev}, "secret")) > 0 {
			break // the reader with a key sees the new entry
		}
	}
}

// TestRecreatedPrivateBoardOverWebSocket (issue 6 item 4): a board deleted
// and made again as private, then written, all within the coalescing
// window: an anonymous WebSocket subscriber gets an error and never
// anything of the private board, cycle after cycle.
func TestRecreatedPrivateBoardOverWebSocket(t *testing.T) {
	s := newServerWith(t, stream.Config{Coalesce: 50 * time.Millisecond}, false)
	ws := s.dialWS("")
	for i := 0; i < 25; i++ {
		if i > 0 {
			s.must(204, s.do("DELETE", "/v1/boards/cyc", adminKey, nil))
		}
		s.mkBoard("cyc", publicBoard)
		ws.subscribe("cyc")
		secret := fmt.Sprint("secret-", i)
		s.must(204, s.do("DELETE", "/v1/boards/cyc", adminKey, nil))
		s.mkBoard("cyc", privateBoard)
		s.score("cyc", secret, i)
		m, b, err := ws.recv(5 * time.Second)
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		if strings.Contains(string(b), secret) || strings.Contains(string(b), `"closed"`) || m["type"] != "error" {
			t.Fatalf("cycle %d: after the board was made again as private, the anonymous subscriber got %s", i, b)
		}
		if c := m["code"]; c != "unauthenticated" && c != "board_not_found" {
			t.Fatalf("cycle %d: error %s", i, b)
		}
		// Nothing follows the error (the subscription ended).
		ws.send(`{"op":"ping","id":"p"}`)
		if m, b, err := ws.recv(5 * time.Second); err != nil || m["type"] != "pong" {
			t.Fatalf("cycle %d: after the error: %s %v", i, b, err)
		}
	}
}

// TestRevokedKeyEndsStreams (issue 6 item 5): deleting a key ends, within
// a second, the SSE streams opened with it (private and public boards)
// with an unauthenticated error, and closes the WebSocket opened with it
// with 1008 after an error message; nothing submitted after the
// revocation reaches them, and the key cannot open a stream again.
func TestRevokedKeyEndsStreams(t *testing.T) {
	s := newServer(t)
	s.mkBoard("priv", privateBoard)
	s.mkBoard("pub", publicBoard)
	k := s.must(201, s.do("POST", "/v1/keys", adminKey, `{"name":"reader","scopes":["read"]}`)).json(t)
	secret, id := k["key"].(string), k["id"].(string)
	sses := []*sseClient{
		s.openSSE("/v1/boards/priv/stream", "", secret),
		s.openSSE("/v1/boards/pub/stream", "", secret),
	}
	for _, c := range sses {
		if ev := c.next(2 * time.Second); ev.Type != "snapshot" {
			t.Fatalf("first event %+v", ev)
		}
	}
	ws := s.dialWS("?key=" + secret)
	ws.subscribe("priv")

	s.must(204, s.do("DELETE", "/v1/keys/"+id, adminKey, nil))
	s.score("priv", "after-revocation", 1)
	s.score("pub", "after-revocation", 1)
	for i, c := range sses {
		evs, ended := c.rest(time.Second)
		if !ended || len(evs) != 1 || evs[0].Type != "error" || evs[0].Data["code"] != "unauthenticated" {
			t.Fatalf("SSE stream %d after its key was revoked: %+v (ended %v); want one unauthenticated error, then the end", i, evs, ended)
		}
		// An error event has the shape of every other (API.md): it names
		// the stream's board.
		if want := []string{"priv", "pub"}[i]; evs[0].Data["board"] != want {
			t.Errorf("SSE stream %d: the revocation error names board %v, want %q", i, evs[0].Data["board"], want)
		}
	}
	m, b, err := ws.recv(time.Second)
	if err != nil || m["type"] != "error" || m["code"] != "unauthenticated" {
		t.Fatalf("WebSocket after its key was revoked: %s %v", b, err)
	}
	if _, b, err := ws.recv(time.Second); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("WebSocket after the error: %s %v, want close 1008", b, err)
	}
	if r := s.do("GET", "/v1/boards/pub/stream", secret, nil); r.status != 401 {
		t.Fatalf("a stream with the revoked key: %d %s", r.status, r.body)
	}
}

// TestRecreatedBoardNewChain (issue 6 item 6): board kc (one key, seq 2)
// deleted and made again with two keys and another title, then written:
// an attached reader gets a fresh snapshot with a new snapshot_id, the new
// keys and title, never a delta continuing the old chain.
func TestRecreatedBoardNewChain(t *testing.T) {
	s := newServerWith(t, stream.Config{ManualTick: true}, false)
	s.mkBoard("kc", `{"title":"one key","keys":[{"name":"n","order":"desc"}],"public":true}`)
	s.score("kc", "a", 1)
	s.score("kc", "b", 2)
	c := s.openSSE("/v1/boards/kc/stream?limit=10", "")
	first := c.next(2 * time.Second)
	if first.Type != "snapshot" || first.Data["seq"].(float64) != 2 {
		t.Fatalf("first event %+v", first)
	}
	s.must(204, s.do("DELETE", "/v1/boards/kc", adminKey, nil))
	s.mkBoard("kc", `{"title":"two keys","keys":[{"name":"a","order":"desc"},{"name":"b","order":"asc"}],"public":true}`)
	// Written past the old board's seq, as in the report (seq 6 after 2).
	for i, p := range []string{"w", "x", "y", "z"} {
		s.must(200, s.do("POST", "/v1/boards/kc/scores", adminKey, fmt.Sprintf(`{"player":%q,"keys":[%d,1]}`, p, 5+i)))
	}
	s.hub.Tick()
	ev := c.next(2 * time.Second)
	if ev.Type != "snapshot" || ev.Data["snapshot_id"] == first.Data["snapshot_id"] || ev.Data["title"] != "two keys" ||
		len(ev.Data["keys"].([]any)) != 2 {
		t.Fatalf("after the board was made again the reader got %s %v", ev.Type, ev.Data)
	}
	es := ev.Data["entries"].([]any)
	if len(es) != 4 || es[0].(map[string]any)["player"] != "z" || ev.Data["seq"].(float64) <= 2 {
		t.Fatalf("the recreated board's snapshot: seq %v, entries %v", ev.Data["seq"], es)
	}
}

// TestStreamMetrics (issue 6 item 23): /metrics has the live-stream
// gauges the README promises: connections, subscriptions, windows, history
// bytes, and the memory the streams hold against their budget.
func TestStreamMetrics(t *testing.T) {
	s := newServerWith(t, stream.Config{ManualTick: true}, false)
	s.mkBoard("m", publicBoard)
	s.score("m", "a", 1)
	c := s.openSSE("/v1/boards/m/stream?limit=10", "")
	c.next(2 * time.Second)
	ws := s.dialWS("")
	ws.subscribe("m")
	s.score("m", "b", 2)
	s.hub.Tick()
	c.next(2 * time.Second) // the delta, now in the history
	body := string(s.must(200, s.do("GET", "/metrics", "", nil)).body)
	metric := func(name string) float64 {
		for _, line := range strings.Split(body, "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				var f float64
				fmt.Sscan(v, &f)
				return f
			}
		}
		t.Fatalf("/metrics has no %s", name)
		return 0
	}
	if got := metric("podium_stream_connections"); got != 2 {
		t.Fatalf("connections %v, want 2", got)
	}
	if got := metric("podium_stream_subscriptions"); got != 2 {
		t.Fatalf("subscriptions %v, want 2", got)
	}
	if got := metric("podium_stream_windows"); got != 1 {
		t.Fatalf("windows %v, want 1 (both watch the top 10 of m)", got)
	}
	if metric("podium_stream_history_bytes") <= 0 || metric("podium_stream_memory_bytes") <= 0 ||
		metric("podium_stream_memory_budget_bytes") != 256<<20 || metric("podium_stream_events_sent_total") < 3 {
		t.Fatalf("stream metrics:\n%s", body)
	}
}

// TestStreamMemoryBudgetRefusesWindows (issue 6 item 7): once the live
// streams hold their memory budget, a stream that needs a new window is
// refused with 429 rate_limited and Retry-After (SSE) or a rate_limited
// error (WebSocket), while a stream on an open window is still served.
func TestStreamMemoryBudgetRefusesWindows(t *testing.T) {
	s := newServerWith(t, stream.Config{MemoryBudget: 600 << 10, MemoryPerAddress: 600 << 10}, false)
	s.mkBoard("big", publicBoard)
	var items []string
	for i := 0; i < 1000; i++ {
		items = append(items, fmt.Sprintf(`{"board":"big","player":"player-%04d","keys":[%d],"meta":{"note":"%s"}}`, i, i, strings.Repeat("x", 100)))
	}
	s.must(200, s.do("POST", "/v1/scores", adminKey, `{"scores":[`+strings.Join(items, ",")+`]}`))
	open := s.openSSE("/v1/boards/big/stream?limit=1000", "")
	open.next(2 * time.Second)
	r := s.do("GET", "/v1/boards/big/stream?limit=999", "", nil)
	if r.status != 429 || r.header.Get("Retry-After") == "" || r.errCode(t) != "rate_limited" {
		t.Fatalf("a new window past the budget: %d %v %s", r.status, r.header, r.body)
	}
	ws := s.dialWS("")
	ws.send(`{"op":"subscribe","board":"big","limit":998}`)
	if m, b, err := ws.recv(2 * time.Second); err != nil || m["type"] != "error" || m["code"] != "rate_limited" {
		t.Fatalf("a new window over WebSocket past the budget: %s %v", b, err)
	}
	// The first stream's snapshot stays charged to the address until its
	// writer asks for the next event, which may come after the client has
	// read it: wait for that, or the second stream's snapshot finds the
	// share still holding the first's.
	for deadline := time.Now().Add(5 * time.Second); s.hub.Stats().QueuedBytes != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the first stream's snapshot is still charged after 5s: %+v", s.hub.Stats())
		}
	}
	again := s.openSSE("/v1/boards/big/stream?limit=1000", "")
	if ev := again.next(2 * time.Second); ev.Type != "snapshot" {
		t.Fatalf("a stream on the open window: %+v", ev)
	}
}

// TestStreamMemoryShareBehindProxy (issue 17 item 5): each client address
// has its share of the streams' memory budget, so one address that opens
// window after window is refused (429 rate_limited, Retry-After) while
// another still opens its own. Behind a trusted proxy the share is the
// client's (X-Forwarded-For), not the proxy's; an IPv6 client's is its
// /64's.
func TestStreamMemoryShareBehindProxy(t *testing.T) {
	s := newLimitedServer(t, podiumhttp.RateLimits{}, "127.0.0.0/8", stream.Config{MemoryBudget: 8 << 20, MemoryPerAddress: 210 << 10})
	s.mkBoard("big", publicBoard)
	var items []string
	for i := 0; i < 300; i++ {
		items = append(items, fmt.Sprintf(`{"board":"big","player":"player-%04d","keys":[%d],"meta":{"note":"%s"}}`, i, i, strings.Repeat("x", 100)))
	}
	s.must(200, s.do("POST", "/v1/scores", adminKey, `{"scores":[`+strings.Join(items, ",")+`]}`))
	limit := 300
	open := func(xff string) *http.Response {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/v1/boards/big/stream?limit=%d", s.url, limit), nil)
		req.Header.Set("X-Forwarded-For", xff)
		limit-- // a window of its own each time
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	// fill opens windows from xff until one is refused; it returns how
	// many were taken.
	fill := func(xff string) int {
		t.Helper()
		for n := 0; n < 20; n++ {
			res := open(xff)
			switch res.StatusCode {
			case 200:
				continue
			case 429:
				if res.Header.Get("Retry-After") == "" {
					t.Fatalf("429 without Retry-After")
				}
				return n
			default:
				t.Fatalf("stream from %s: %d", xff, res.StatusCode)
			}
		}
		t.Fatalf("%s opened 20 windows past its share", xff)
		return 0
	}
	// The share (210 KiB) holds one window of 300 entries (~110 KB of
	// state, a ~55 KB snapshot) and not the state of a second (the
	// estimate of a new window is 158 KB).
	if n := fill("203.0.113.1"); n != 1 {
		t.Fatalf("%d windows in an address's share, want 1", n)
	}
	if res := open("203.0.113.2"); res.StatusCode != 200 {
		t.Fatalf("another client behind the same proxy: %d, want its own share", res.StatusCode)
	}
	if n := fill("2001:db8:1:2::1"); n != 1 {
		t.Fatalf("%d windows in an IPv6 address's share, want 1", n)
	}
	if res := open("2001:db8:1:2::9"); res.StatusCode != 429 {
		t.Fatalf("another address of the same /64: %d, want 429 (one share per /64)", res.StatusCode)
	}
	if st := s.hub.Stats(); st.AddressMax > st.MemoryPerAddr || st.MemoryPeak > st.MemoryBudget {
		t.Fatalf("an address holds %d bytes (share %d), peak %d (budget %d)", st.AddressMax, st.MemoryPerAddr, st.MemoryPeak, st.MemoryBudget)
	}
}
