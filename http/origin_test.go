package http_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/stream"
)

// dialOrigin opens a WebSocket with an Origin header ("" for none) and
// returns the HTTP status of the upgrade.
func (s *server) dialOrigin(origin string) int {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	c, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.url, "http")+"/v1/stream", &websocket.DialOptions{HTTPHeader: h})
	if err == nil {
		c.CloseNow()
		return res.StatusCode
	}
	if res == nil {
		s.t.Fatal(err)
	}
	return res.StatusCode
}

// TestAllowedOrigins (issue 6 item 12): by default any page may open a
// WebSocket or read a board (documented: podium holds no ambient
// credentials). With --allowed-origins, a WebSocket or SSE stream from a
// page of another origin is refused with 403, CORS answers name only the
// allowed origins, and programs (no Origin) and podium's own pages (same
// host) are unaffected.
func TestAllowedOrigins(t *testing.T) {
	open := newServer(t)
	open.mkBoard("o", publicBoard)
	if st := open.dialOrigin("https://evil.example"); st != http.StatusSwitchingProtocols {
		t.Fatalf("default: a WebSocket from another origin got %d", st)
	}
	if r := open.do("GET", "/v1/boards/o/entries", "", nil, "Origin", "https://evil.example"); r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("default CORS: %v", r.header)
	} else if exp := r.header.Get("Access-Control-Expose-Headers"); !strings.Contains(exp, "RateLimit-Policy") || !strings.Contains(exp, "Idempotent-Reconstructed") ||
		!strings.Contains(exp, "Podium-Export-Consistent") {
		t.Fatalf("a page on another origin cannot read the rate limit, reconstruction and export headers: %q", exp)
	}

	s := newServerOpts(t, stream.Config{}, false, func(c *podiumhttp.Config) {
		c.AllowedOrigins = []string{"https://good.example", "https://*.trusted.example"}
	})
	s.mkBoard("o", publicBoard)
	host := strings.TrimPrefix(s.url, "http://")
	for origin, want := range map[string]int{
		"https://evil.example":      http.StatusForbidden,
		"http://good.example":       http.StatusForbidden, // another scheme is another origin
		"https://good.example.evil": http.StatusForbidden,
		"null":                      http.StatusForbidden,
		"https://good.example":      http.StatusSwitchingProtocols,
		"https://a.trusted.example": http.StatusSwitchingProtocols,
		"":                          http.StatusSwitchingProtocols, // not a browser
		"http://" + host:            http.StatusSwitchingProtocols, // podium's own pages
	} {
		if st := s.dialOrigin(origin); st != want {
			t.Errorf("WebSocket from %q: %d, want %d", origin, st, want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/boards/o/stream", nil)
	req.Header.Set("Origin", "https://evil.example")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 403 {
		t.Fatalf("SSE from another origin: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	req, _ = http.NewRequestWithContext(ctx, "GET", s.url+"/v1/boards/o/stream", nil)
	req.Header.Set("Origin", "https://good.example")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 256)
	n, _ := io.ReadAtLeast(res.Body, head, 40)
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "https://good.example" || !strings.Contains(string(head[:n]), "retry:") {
		t.Fatalf("SSE from an allowed origin: %d %v %q", res.StatusCode, res.Header, head[:n])
	}
	r := s.do("GET", "/v1/boards/o/entries", "", nil, "Origin", "https://evil.example")
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("CORS for another origin: %d %v", r.status, r.header)
	}
	r = s.do("GET", "/v1/boards/o/entries", "", nil, "Origin", "https://good.example")
	if r.header.Get("Access-Control-Allow-Origin") != "https://good.example" || !strings.Contains(strings.Join(r.header.Values("Vary"), ","), "Origin") {
		t.Fatalf("CORS for an allowed origin: %v", r.header)
	}
	r = s.do("OPTIONS", "/v1/boards/o/scores", "", nil, "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
	if r.status != 403 {
		t.Fatalf("preflight from another origin: %d %v", r.status, r.header)
	}
}

func TestCheckOrigins(t *testing.T) {
	for _, ok := range [][]string{{"*"}, {"https://example.com"}, {"http://localhost:3000", "https://*.example.com"}} {
		if err := podiumhttp.CheckOrigins(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range [][]string{{"*", "https://a.example"}, {"example.com"}, {"ftp://example.com"}, {"https://example.com/path"}, {"https://[x"}} {
		if err := podiumhttp.CheckOrigins(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
