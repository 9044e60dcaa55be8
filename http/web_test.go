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
	s.must(204, s.do("DELETE", "/v1/boards/live", adminKey, nil))
	s.must(404, s.do("GET", "/boards/live", "", nil))
}
