package http_test

import (
	"strings"
	"testing"
)

// The live page of a board answers 200; the page of a board that does not
// exist (or could not: an invalid id) answers 404 with the same friendly
// page, whose script then says the board does not exist.
func TestBoardPage(t *testing.T) {
	s := newServer(t)
	s.mkBoard("live", `{"keys":[{"name":"n","order":"desc"}],"public":true}`)
	page := s.must(200, s.do("GET", "/boards/live", "", nil))
	if ct := page.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("board page Content-Type %q", ct)
	}
	for _, path := range []string{"/boards/nope", "/boards/Not_A_Valid_Id"} {
		r := s.must(404, s.do("GET", path, "", nil))
		if !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || string(r.body) != string(page.body) {
			t.Errorf("GET %s: 404 with %q, want the board page", path, r.header.Get("Content-Type"))
		}
	}
	// The page shows the board's activity feed with feed.js.
	if !strings.Contains(string(page.body), `<script src="/assets/feed.js" defer></script>`) || !strings.Contains(string(page.body), `id="feed"`) {
		t.Error("the board page does not load the activity feed")
	}
	if index := s.must(200, s.do("GET", "/", "", nil)); !strings.Contains(string(index.body), `<script src="/assets/feed.js" defer></script>`) {
		t.Error("the index page does not load the activity feed")
	}
	js := s.must(200, s.do("GET", "/assets/feed.js", "", nil))
	if ct := js.header.Get("Content-Type"); !strings.Contains(ct, "javascript") || !strings.Contains(string(js.body), "/v1/feed/stream?") {
		t.Errorf("feed.js: %q %.60q", ct, js.body)
	}
	s.must(204, s.do("DELETE", "/v1/boards/live", adminKey, nil))
	s.must(404, s.do("GET", "/boards/live", "", nil))
}

// The admin console is a page like the others, with headers fit for a
// page that holds the admin key, and every script and style it loads is
// served from the binary, with no inline script or style.
func TestAdminPage(t *testing.T) {
	s := newServer(t)
	page := s.must(200, s.do("GET", "/admin", "", nil))
	h := page.header
	want := map[string]string{
		"Content-Security-Policy": "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'none'; base-uri 'none'",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
		"X-Content-Type-Options":  "nosniff",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("GET /admin: %s = %q, want %q", k, got, v)
		}
	}
	// The other pages keep their policy without the console's additions.
	if csp := s.must(200, s.do("GET", "/", "", nil)).header.Get("Content-Security-Policy"); strings.Contains(csp, "form-action") {
		t.Errorf("the index page got the console's policy: %q", csp)
	}
	body := string(page.body)
	if strings.Contains(body, "<style") || strings.Contains(body, " style=") || strings.Contains(body, " onclick=") {
		t.Error("admin.html has an inline style or event handler, which the policy blocks")
	}
	n := 0
	for _, part := range strings.Split(body, `src="`)[1:] {
		src := part[:strings.IndexByte(part, '"')]
		if !strings.HasSuffix(src, ".js") {
			continue
		}
		n++
		js := s.must(200, s.do("GET", src, "", nil))
		if ct := js.header.Get("Content-Type"); !strings.Contains(ct, "javascript") {
			t.Errorf("%s: Content-Type %q", src, ct)
		}
		if strings.Contains(string(js.body), "innerHTML") {
			t.Errorf("%s assigns innerHTML: the console builds nodes, so names and titles cannot inject markup", src)
		}
	}
	if n < 6 {
		t.Errorf("admin.html loads %d scripts, want the client, the frame and its tabs", n)
	}
	s.must(200, s.do("GET", "/assets/admin.css", "", nil))
}

// TestPublicPageHeaders: every page, public ones included, refuses to be
// framed and sends no referrer, like the console; every answer, JSON ones
// first, says nosniff (issue 17).
func TestPublicPageHeaders(t *testing.T) {
	s, _ := newContestServer(t)
	s.mkBoard("live", `{"keys":[{"name":"n","order":"desc"}],"public":true}`)
	s.must(201, s.do("PUT", "/v1/contests/ctf:p", adminKey, `{"title":"P","start":"2026-11-30T11:00:00Z","end":"2026-11-30T13:00:00Z","public":true}`))
	for _, c := range []struct {
		path   string
		status int
	}{{"/", 200}, {"/boards/live", 200}, {"/boards/nope", 404}, {"/contests/ctf:p", 200}, {"/contests/nope", 404}, {"/admin", 200}} {
		h := s.must(c.status, s.do("GET", c.path, "", nil)).header
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "base-uri 'none'") || h.Get("X-Frame-Options") != "DENY" ||
			h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: CSP %q, X-Frame-Options %q, Referrer-Policy %q, X-Content-Type-Options %q", c.path, csp,
				h.Get("X-Frame-Options"), h.Get("Referrer-Policy"), h.Get("X-Content-Type-Options"))
		}
	}
	for _, c := range []struct {
		method, path, key string
		status            int
	}{
		{"GET", "/v1/boards", "", 200},
		{"GET", "/v1/boards/live/entries", "", 200},
		{"GET", "/v1/boards/nope/entries", "", 404},
		{"GET", "/v1/boards/live/entries?bogus=%3Cscript%3E", "", 400},
		{"GET", "/v1/contests/ctf:p/standings", "", 200},
		{"POST", "/v1/boards/live/scores", "", 401},
		{"GET", "/no/such/route", "", 404},
		{"GET", "/healthz", "", 200},
		{"GET", "/v1/openapi.json", "", 200},
		{"GET", "/v1/client.js", "", 200},
		{"GET", "/assets/app.css", "", 200},
		{"GET", "/v1/boards/live/export", "", 200},
	} {
		r := s.do(c.method, c.path, c.key, nil)
		if r.status != c.status || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s: %d, X-Content-Type-Options %q; want %d with nosniff", c.method, c.path, r.status, r.header.Get("X-Content-Type-Options"), c.status)
		}
	}
}
