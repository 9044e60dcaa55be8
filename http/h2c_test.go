package http_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/stream"
)

func serveTest(srv *podiumhttp.Server) *httptest.Server { return serveTestWith(srv, nil) }

func serveTestWith(srv *podiumhttp.Server, serve func(*http.Server)) *httptest.Server {
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.Listener = srv.Listener(ts.Listener)
	ts.Config.ConnContext = srv.ConnContext
	if serve != nil {
		serve(ts.Config)
	}
	ts.Start()
	return ts
}

// h2cClient speaks only HTTP/2 with prior knowledge: every request of it
// goes over one connection while the server keeps it open.
func h2cClient(t *testing.T) *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// newH2CServer is a test server with ServeH2C whose do and openSSE speak
// h2c.
func newH2CServer(t *testing.T, cfg stream.Config, opts func(*podiumhttp.Config)) *server {
	s := newServerServed(t, cfg, false, opts, sqlite.Options{}, nil, podiumhttp.ServeH2C)
	s.clientOnce.Do(func() { s.client = h2cClient(t) })
	return s
}

var openConns = regexp.MustCompile(`(?m)^podium_http_connections (\d+)$`)

// conns is the number of connections open on the server's listener.
func (s *server) conns() string {
	s.t.Helper()
	m := openConns.FindStringSubmatch(string(s.must(200, s.do("GET", "/metrics", "", nil)).body))
	if m == nil {
		s.t.Fatal("no podium_http_connections in /metrics")
	}
	return m[1]
}

// TestH2CRequests: with ServeH2C a read and a submission work over HTTP/2
// with prior knowledge, a bad body is refused 400 with a JSON error and
// changes nothing, and all of it shares one connection.
func TestH2CRequests(t *testing.T) {
	s := newH2CServer(t, stream.Config{}, nil)
	s.mkBoard("h2", oneKey)
	s.score("h2", "a", 10)
	req, _ := http.NewRequest("GET", s.url+"/v1/boards/h2/entries/a", nil)
	res, err := s.httpClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.ProtoMajor != 2 {
		t.Fatalf("read: %d over %s", res.StatusCode, res.Proto)
	}
	for _, body := range []string{`{"player":"b","score":`, `{"player":"b","score":1,"extra":1}`, `{"player":"b","score":1}{}`} {
		r := s.do("POST", "/v1/boards/h2/scores", adminKey, body)
		if r.status != 400 || r.errCode(t) == "" {
			t.Fatalf("bad body %s: %d %s", body, r.status, r.body)
		}
	}
	if got := s.restOrder("h2", 10); len(got) != 1 || !strings.Contains(got[0], ":a:") {
		t.Fatalf("a refused body changed the board: %v", got)
	}
	if c := s.conns(); c != "1" {
		t.Fatalf("%s connections open, want the one h2c connection", c)
	}
}

// TestH2CStream: an SSE stream over h2c gets its snapshot and then the
// delta of a submission made on the same connection.
func TestH2CStream(t *testing.T) {
	s := newH2CServer(t, stream.Config{}, nil)
	s.mkBoard("live", oneKey)
	s.score("live", "a", 10)
	c := s.openSSE("/v1/boards/live/stream?limit=4", "")
	if c.resp.ProtoMajor != 2 {
		t.Fatalf("stream over %s", c.resp.Proto)
	}
	var b board
	if ev := c.next(5 * time.Second); ev.Type != "snapshot" {
		t.Fatalf("first event: %+v", ev)
	} else {
		b.apply(t, ev)
	}
	s.score("live", "b", 20)
	if ev := c.next(5 * time.Second); ev.Type != "delta" {
		t.Fatalf("want a delta, got %+v", ev)
	} else {
		b.apply(t, ev)
	}
	waitFor(t, s, c, &b, "live", 4, 5*time.Second)
}

// TestH2CStreamCapPerIP: the per-address stream cap counts the streams of
// one h2c connection, as it counts HTTP/1.1 connections.
func TestH2CStreamCapPerIP(t *testing.T) {
	s := newH2CServer(t, stream.Config{MaxPerIP: 2}, nil)
	s.mkBoard("cap", oneKey)
	s.openSSE("/v1/boards/cap/stream", "")
	s.openSSE("/v1/boards/cap/stream", "")
	r := s.do("GET", "/v1/boards/cap/stream", "", nil)
	if r.status != 429 || r.header.Get("Retry-After") == "" || r.errCode(t) != "rate_limited" {
		t.Fatalf("third stream: %d %v %s", r.status, r.header, r.body)
	}
	if c := s.conns(); c != "1" {
		t.Fatalf("%s connections open, want the one h2c connection", c)
	}
}

// TestH2CUnreadBodyKeepsConnection: a body answered before it was read
// (413) ends only its stream on HTTP/2. Before, its Connection: close made
// net/http's HTTP/2 server send GOAWAY: the client had to open another
// connection for its next request, and the live streams of the first
// stayed on a connection that took no new requests.
func TestH2CUnreadBodyKeepsConnection(t *testing.T) {
	s := newH2CServer(t, stream.Config{}, func(c *podiumhttp.Config) { c.MaxBody = 1 << 10 })
	s.mkBoard("big", oneKey)
	c := s.openSSE("/v1/boards/big/stream", "")
	if ev := c.next(5 * time.Second); ev.Type != "snapshot" {
		t.Fatalf("first event: %+v", ev)
	}
	big := `{"player":"x","score":1,"meta":{"pad":"` + strings.Repeat("x", 64<<10) + `"}}`
	if r := s.do("POST", "/v1/boards/big/scores", adminKey, big); r.status != 413 {
		t.Fatalf("oversized body: %d %s", r.status, r.body)
	}
	s.score("big", "a", 1)
	if ev := c.next(5 * time.Second); ev.Type != "delta" {
		t.Fatalf("want a delta after the refused body, got %+v", ev)
	}
	if c := s.conns(); c != "1" {
		t.Fatalf("%s connections open after a refused body, want the one h2c connection", c)
	}
}

// TestH2CRefusedByDefault: without ServeH2C, a request in HTTP/2 with
// prior knowledge is not served.
func TestH2CRefusedByDefault(t *testing.T) {
	s := newServer(t)
	res, err := h2cClient(t).Get(s.url + "/healthz")
	if err == nil {
		res.Body.Close()
		t.Fatalf("h2c request served without ServeH2C: %d over %s", res.StatusCode, res.Proto)
	}
}
