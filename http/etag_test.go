package http_test

import (
	"strings"
	"testing"
	"time"
)

// TestPageETag: a top page carries an ETag that If-None-Match turns into
// 304 while nothing the page shows has changed, and never after: a new
// score, a renamed or hidden player, a board made again, a new period.
// Public pages may be cached for a second by shared caches; private ones
// and include_hidden answers not at all; decaying points boards get no tag.
func TestPageETag(t *testing.T) {
	s := newServer(t)
	s.mkBoard("e", `{"keys":[{"name":"score","order":"desc"}],"public":true,"reset":{"every":"day"}}`)
	s.must(200, s.do("POST", "/v1/boards/e/scores", adminKey, `{"player":"alice","score":10}`))
	get := func(path, key, tag string) resp {
		t.Helper()
		if tag == "" {
			return s.do("GET", path, key, nil)
		}
		return s.do("GET", path, key, nil, "If-None-Match", tag)
	}
	r := s.must(200, get("/v1/boards/e/entries", "", ""))
	tag := r.header.Get("ETag")
	if !strings.HasPrefix(tag, `W/"`) || r.header.Get("Cache-Control") != "public, max-age=1" {
		t.Fatalf("first read: ETag %q, Cache-Control %q", tag, r.header.Get("Cache-Control"))
	}
	same := func(what string) {
		t.Helper()
		r := get("/v1/boards/e/entries", "", tag)
		if r.status != 304 || len(r.body) != 0 || r.header.Get("ETag") != tag {
			t.Fatalf("%s: %d %q (ETag %q), want 304 with the same tag", what, r.status, r.body, r.header.Get("ETag"))
		}
	}
	changed := func(what, want string) {
		t.Helper()
		r := get("/v1/boards/e/entries", "", tag)
		if r.status != 200 || r.header.Get("ETag") == tag || !strings.Contains(string(r.body), want) {
			t.Fatalf("%s: %d %s (ETag %q, was %q), want 200 with %q and a new tag", what, r.status, r.body, r.header.Get("ETag"), tag, want)
		}
		tag = r.header.Get("ETag")
	}
	same("nothing changed")
	if r := get("/v1/boards/e/entries", "", `"other", `+strings.TrimPrefix(tag, "W/")); r.status != 304 {
		t.Fatalf("a list holding the tag without W/: %d", r.status)
	}
	s.must(200, s.do("POST", "/v1/boards/e/scores", adminKey, `{"player":"bob","score":20}`))
	changed("a new score", `"bob"`)
	same("nothing changed since")
	s.must(200, s.do("PUT", "/v1/players/alice", adminKey, `{"name":"Alice A."}`))
	changed("a renamed player", `"Alice A."`)
	s.must(200, s.do("PUT", "/v1/players/bob", adminKey, `{"hidden":true}`))
	changed("a hidden player", `"total":1`)
	// A board deleted and made again reaches the same seq with other entries.
	s.must(204, s.do("DELETE", "/v1/boards/e", adminKey, nil))
	s.mkBoard("e", `{"keys":[{"name":"score","order":"desc"}],"public":true,"reset":{"every":"day"}}`)
	s.must(200, s.do("POST", "/v1/boards/e/scores", adminKey, `{"player":"carol","score":1}`))
	s.must(200, s.do("POST", "/v1/boards/e/scores", adminKey, `{"player":"dave","score":2}`))
	s.must(200, s.do("POST", "/v1/boards/e/scores", adminKey, `{"player":"erin","score":3}`))
	changed("the board made again", `"carol"`)
	s.clock.Add(24 * time.Hour)
	changed("a new period", `"total":0`)

	// Private boards and include_hidden: no shared caching.
	s.mkBoard("p", `{"keys":[{"name":"score","order":"desc"}]}`)
	if r := s.must(200, get("/v1/boards/p/entries", adminKey, "")); r.header.Get("Cache-Control") != "private, no-cache" || r.header.Get("ETag") == "" {
		t.Fatalf("private board: %v", r.header)
	}
	if r := s.must(200, get("/v1/boards/e/entries?include_hidden=true", adminKey, "")); r.header.Get("Cache-Control") != "private, no-cache" {
		t.Fatalf("include_hidden: %v", r.header)
	}
	// A current points board's values decay with the clock: no tag.
	s.mkBoard("pts:current", `{"public":true,"mode":"sum","keys":[{"name":"era","order":"desc"},{"name":"points","order":"desc"}],"points":{"ladder":"pts","kind":"current"}}`)
	if r := s.must(200, get("/v1/boards/pts:current/entries", "", "")); r.header.Get("ETag") != "" {
		t.Fatalf("a decaying board has an ETag: %v", r.header)
	}
}
