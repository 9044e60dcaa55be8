package http_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"
)

// TestLookAlikeIDsRefused: a player or team id with an invisible or bidi
// character (p<U+200B>1 shows as p1) is refused with 400 invalid_argument
// wherever a request could create it, and nothing is written; a name may
// hold them (pages isolate names). A player stored under the older rule
// (here through restore) stays readable, nameable and removable.
func TestLookAlikeIDsRefused(t *testing.T) {
	s, _ := newContestServer(t)
	s.mkBoard("b", `{"keys":[{"name":"score","order":"desc"}],"public":true}`)
	s.must(201, s.do("PUT", "/v1/contests/ctf:l", adminKey, `{"title":"L","start":"2026-11-30T09:00:00Z","end":"2026-11-30T13:00:00Z","public":true}`))
	s.must(201, s.do("PUT", "/v1/contests/ctf:l/challenges/web", adminKey, `{"scoring":{"value":100}}`))
	for _, id := range []string{"p\u200b1", "\ufeffp1", "p\u202e1", "p\u2066x\u20691", "p\u00a01", "p1 ", "p\u200d1", "p\u061c1"} {
		q := fmt.Sprintf("%q", id)
		for _, c := range []struct{ method, path, body string }{
			{"POST", "/v1/boards/b/scores", `{"player":` + q + `,"score":1}`},
			{"PUT", "/v1/players/" + url.PathEscape(id), `{"name":"x"}`},
			{"POST", "/v1/players/" + url.PathEscape(id) + "/sessions", `{"device":"phone"}`},
			{"POST", "/v1/contests/ctf:l/attempts", `{"team":` + q + `,"challenge":"web","correct":true}`},
		} {
			r := s.do(c.method, c.path, adminKey, c.body)
			if r.status != 400 || r.errCode(t) != "invalid_argument" {
				t.Errorf("%s %s with id %+q: %d %s, want 400 invalid_argument", c.method, c.path, id, r.status, r.body)
			}
		}
		res := s.must(200, s.do("POST", "/v1/scores", adminKey, `{"scores":[{"board":"b","player":`+q+`,"score":1}]}`)).json(t)["results"].([]any)
		if e, _ := res[0].(map[string]any)["error"].(map[string]any); e == nil || e["code"] != "invalid_argument" {
			t.Errorf("batch item with id %+q: %v", id, res[0])
		}
	}
	if top := s.must(200, s.do("GET", "/v1/boards/b/entries", "", nil)).json(t); top["total"] != float64(0) {
		t.Fatalf("refused ids left entries: %v", top)
	}
	// Names may hold them: a page isolates a name (<bdi>).
	s.must(200, s.do("PUT", "/v1/players/p1", adminKey, `{"name":"\u202eevil\u200d"}`))

	// A player stored before the rule: restore moves rows already accepted.
	legacy := "p\u200b1"
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC).Format(time.RFC3339)
	got := s.must(200, s.do("POST", "/v1/boards/b/restore", adminKey, fmt.Sprintf(`{"entries":[{"period":"all","player":%q,"keys":[5],"at":%q}]}`, legacy, at))).json(t)
	if got["restored"] != float64(1) {
		t.Fatalf("restore of a legacy id: %v", got)
	}
	p := url.PathEscape(legacy)
	s.must(200, s.do("GET", "/v1/boards/b/entries/"+p, "", nil))
	s.must(200, s.do("PUT", "/v1/players/"+p, adminKey, `{"name":"old","hidden":true}`))
	if r := s.do("POST", "/v1/boards/b/scores", adminKey, fmt.Sprintf(`{"player":%q,"score":9}`, legacy)); r.status != 400 {
		t.Fatalf("a new score for a legacy id: %d %s", r.status, r.body)
	}
	s.must(204, s.do("DELETE", "/v1/boards/b/entries/"+p, adminKey, nil))
}
