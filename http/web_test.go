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
