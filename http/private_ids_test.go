package http_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestPrivateIDsLookUnknown: a private board, tournament or contest
// cannot be told from an unknown id by a caller who may not read it (no
// credential, a key limited to other ids, a key without the read scope, a
// player session): every read, stream, WebSocket op, page and write
// answers the same status, code and message for "priv..." as for an id
// that does not exist. A bad credential is 401 for both. A reader of the
// id gets its data.
func TestPrivateIDsLookUnknown(t *testing.T) {
	s, _ := newContestServer(t)
	s.mkBoard("privb", `{"keys":[{"name":"n","order":"desc"}],"evidence":{"public":true}}`)
	s.must(200, s.do("POST", "/v1/boards/privb/scores", adminKey, `{"player":"p","score":1}`))
	s.mkBoard("privt", `{"keys":[{"name":"n","order":"desc"}],"tournament":{"start":"2026-11-30T09:00:00Z","end":"2026-12-01T00:00:00Z"}}`)
	s.must(201, s.do("PUT", "/v1/contests/privc", adminKey, `{"start":"2026-11-30T09:00:00Z","end":"2026-11-30T13:00:00Z"}`))
	other := s.key(`{"name":"other","scopes":["read","submit","admin"],"boards":["zz"]}`)
	submitOnly := s.key(`{"name":"submit","scopes":["submit"],"boards":["priv"]}`)
	reader := s.key(`{"name":"reader","scopes":["read"],"boards":["priv"]}`)
	session, _ := s.issue("p", "phone", adminKey)

	// Each path is asked with {id} a private id and an unknown one of the
	// same kind.
	type route struct{ method, path, body, private, unknown string }
	var routes []route
	board := func(method, path, body string) {
		routes = append(routes, route{method, path, body, "privb", "nopeb"})
	}
	for _, p := range []string{"", "/entries", "/entries/p", "/entries/p/around", "/periods", "/export", "/stream",
		"/entries/p/history", "/entries/p/evidence", "/entries/p/evidence?review=rv_0123456789abcdef"} {
		board("GET", "/v1/boards/{id}"+p, "")
	}
	board("GET", "/v1/feed?board={id}", "")
	board("GET", "/v1/feed/stream?board={id}", "")
	board("GET", "/boards/{id}", "")
	board("POST", "/v1/boards/{id}/scores", `{"player":"p","score":2}`)
	board("PUT", "/v1/boards/{id}/entries/p/evidence", "")
	board("DELETE", "/v1/boards/{id}/entries/p", "")
	for _, p := range []string{"", "/participants", "/payouts"} {
		routes = append(routes, route{"GET", "/v1/tournaments/{id}" + p, "", "privt", "nopet"})
	}
	routes = append(routes, route{"POST", "/v1/tournaments/{id}/join", `{"player":"p"}`, "privt", "nopet"})
	for _, p := range []string{"", "/standings", "/standings/p", "/first-bloods", "/snapshots", "/chart", "/ctftime", "/export", "/stream", "/challenges"} {
		routes = append(routes, route{"GET", "/v1/contests/{id}" + p, "", "privc", "nopec"})
	}
	routes = append(routes, route{"GET", "/contests/{id}", "", "privc", "nopec"})
	routes = append(routes, route{"POST", "/v1/contests/{id}/attempts", `{"team":"p","challenge":"web","correct":true}`, "privc", "nopec"})

	answer := func(rt route, id, key string) string {
		r := s.do(rt.method, strings.ReplaceAll(rt.path, "{id}", id), key, rt.body)
		body := strings.ReplaceAll(string(r.body), id, "{id}")
		if !strings.HasPrefix(body, "{") {
			body = "(page)" // an HTML page: its status says it
		}
		return http.StatusText(r.status) + " " + body
	}
	for _, c := range []struct{ who, key string }{{"anonymous", ""}, {"a key for other ids", other},
		{"a submit key without read", submitOnly}, {"a player session", session}, {"a bad key", "pdm_nope"}} {
		for _, rt := range routes {
			if c.key == submitOnly && rt.method != "GET" {
				continue // it may write there: that it exists is no secret to it
			}
			p, u := answer(rt, rt.private, c.key), answer(rt, rt.unknown, c.key)
			if p != u {
				t.Errorf("%s, %s %s: private %q, unknown %q", c.who, rt.method, rt.path, p, u)
			}
			if c.key == "pdm_nope" && !strings.HasPrefix(rt.path, "/v1/") {
				continue // pages read no credential
			}
			if c.key == "pdm_nope" && !strings.HasPrefix(p, "Unauthorized") {
				t.Errorf("%s, %s %s: %s, want 401 whatever the id", c.who, rt.method, rt.path, p)
			}
		}
	}

	// WebSocket ops: the same error for both.
	for _, c := range []struct{ who, key string }{{"anonymous", ""}, {"a key for other ids", other}} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		h := http.Header{}
		if c.key != "" {
			h.Set("Authorization", "Bearer "+c.key)
		}
		ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.url, "http")+"/v1/stream", &websocket.DialOptions{HTTPHeader: h})
		if err != nil {
			t.Fatal(err)
		}
		op := func(op, id string) string {
			if err := ws.Write(ctx, websocket.MessageText, []byte(`{"op":"`+op+`","board":"`+id+`"}`)); err != nil {
				t.Fatal(err)
			}
			_, b, err := ws.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			json.Unmarshal(b, &m)
			return strings.ReplaceAll(m["type"].(string)+" "+m["code"].(string)+" "+m["message"].(string), id, "{id}")
		}
		for _, o := range []string{"subscribe", "subscribe_feed"} {
			if p, u := op(o, "privb"), op(o, "nopeb"); p != u || !strings.Contains(p, "board_not_found") {
				t.Errorf("%s, WebSocket %s: private %q, unknown %q", c.who, o, p, u)
			}
		}
		ws.CloseNow()
		cancel()
	}

	// Who may read gets the data.
	for _, path := range []string{"/v1/boards/privb/entries", "/v1/tournaments/privt", "/v1/contests/privc/standings"} {
		s.must(200, s.do("GET", path, reader, nil))
	}
}
