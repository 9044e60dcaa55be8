package http_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestQueryParamsStrict: an unknown or repeated query parameter on an API
// endpoint is 400 invalid_argument naming it, and changes nothing; every
// parameter an endpoint documents is still taken; pages ignore queries.
func TestQueryParamsStrict(t *testing.T) {
	s := newServer(t)
	s.mkBoard("b", `{"keys":[{"name":"n","order":"desc"}],"reset":{"every":"day"},"public":true}`)
	for _, p := range []string{"p1", "p2", "p3"} {
		s.must(200, s.do("POST", "/v1/boards/b/scores", adminKey, `{"player":"`+p+`","score":1}`))
	}
	refused := []struct{ method, path, body, mention string }{
		{"GET", "/v1/boards/b/entries?limt=2", "", `"limt"`},
		{"GET", "/v1/boards/b/entries?limit=1&limit=2", "", "limit is given more than once"},
		{"GET", "/v1/boards/b/entries?limit=1&Limit=2", "", `"Limit"`},
		{"GET", "/v1/boards/b/entries?limit=%zz", "", "not properly escaped"},
		{"GET", "/v1/boards/b/entries?limit=1;offset=1", "", "not ;"},
		{"GET", "/v1/boards/b/entries?key=" + adminKey, "", "Authorization header"},
		{"GET", "/v1/boards/b/entries/p1?radius=3", "", `"radius"`},
		{"GET", "/v1/boards/b/entries/p1/around?limit=3", "", `"limit"`},
		{"GET", "/v1/boards/b?period=current", "", "takes none"},
		{"GET", "/v1/boards?public=true", "", `"public"`},
		{"GET", "/v1/boards/b/periods?limit=1", "", `"limit"`},
		{"GET", "/v1/boards/b/stream?limit=5&key=x", "", "?key= is read only by the WebSocket endpoint"},
		{"GET", "/v1/boards/b/stream?lmit=5", "", `"lmit"`},
		{"GET", "/v1/stream?token=x", "", `"token"`},
		{"POST", "/v1/boards/b/scores?dry_run=1", `{"player":"p4","score":5}`, `"dry_run"`},
		{"POST", "/v1/scores?x", `{"scores":[{"board":"b","player":"p4","score":5}]}`, `"x"`},
		{"DELETE", "/v1/boards/b/entries/p1?perod=previous", "", `"perod"`},
		{"DELETE", "/v1/boards/b?force=1", "", `"force"`},
		{"PUT", "/v1/players/p1?hidden=true", `{"name":"P"}`, `"hidden"`},
		{"POST", "/v1/keys?scopes=admin", `{"name":"k","scopes":["read"]}`, `"scopes"`},
		{"POST", "/v1/admin/check?x=1", "", `"x"`},
	}
	for _, tc := range refused {
		// Bounded: a stream that is wrongly opened must not hang the test.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, tc.method, s.url+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer "+adminKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		r := resp{status: res.StatusCode, body: b}
		if r.status != 400 || r.errCode(t) != "invalid_argument" || !strings.Contains(r.json(t)["error"].(map[string]any)["message"].(string), tc.mention) {
			t.Errorf("%s %s: %d %s, want 400 invalid_argument mentioning %s", tc.method, tc.path, r.status, r.body, tc.mention)
		}
	}
	got := s.must(200, s.do("GET", "/v1/boards/b/entries", "", nil)).json(t)
	if got["total"].(float64) != 3 || got["seq"].(float64) != 3 {
		t.Fatalf("a refused request changed the board: %v", got)
	}
	if p := s.must(200, s.do("GET", "/v1/players/p1", adminKey, nil)).json(t); p["name"] != "p1" {
		t.Fatalf("a refused PUT renamed the player: %v", p)
	}

	// What each endpoint documents still works, escaped names included.
	if n := len(s.must(200, s.do("GET", "/v1/boards/b/entries?limit=2&offset=1&period=current&include_hidden=false", "", nil)).json(t)["entries"].([]any)); n != 2 {
		t.Fatalf("limit=2&offset=1 gave %d entries", n)
	}
	if n := len(s.must(200, s.do("GET", "/v1/boards/b/entries?%6Cimit=1&", "", nil)).json(t)["entries"].([]any)); n != 1 {
		t.Fatalf("escaped limit gave %d entries", n)
	}
	if n := len(s.must(200, s.do("GET", "/v1/boards/b/entries?players=p1%2Cp3&include_hidden=true", adminKey, nil)).json(t)["entries"].([]any)); n != 2 {
		t.Fatalf("players=p1,p3 gave %d entries", n)
	}
	s.must(200, s.do("GET", "/v1/boards/b/entries/p1?period=current&include_hidden=1", adminKey, nil))
	if n := len(s.must(200, s.do("GET", "/v1/boards/b/entries/p2/around?radius=0&period=current", "", nil)).json(t)["entries"].([]any)); n != 1 {
		t.Fatalf("radius=0 gave %d entries", n)
	}
	s.must(200, s.do("GET", "/v1/boards/b/entries?period=previous", "", nil))
	s.must(204, s.do("DELETE", "/v1/boards/b/entries/p1?period=current", adminKey, nil))
	c := s.openSSE("/v1/boards/b/stream?limit=2&last_event_id=", "")
	if ev := c.next(5 * time.Second); ev.Type != "snapshot" || len(ev.Data["entries"].([]any)) != 2 {
		t.Fatalf("stream?limit=2: %v", ev)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.url, "http")+"/v1/stream?key="+adminKey, nil)
	if err != nil {
		t.Fatalf("WebSocket with ?key=: %v %v", err, res)
	}
	ws.CloseNow()

	// Pages, assets, health and metrics ignore query strings.
	for _, path := range []string{"/?v=1", "/boards/b?limit=5&transport=ws", "/assets/app.css?v=2", "/v1/client.js?v=3", "/healthz?probe=1", "/readyz?x", "/metrics?name[]=x"} {
		req, _ := http.NewRequest("GET", s.url+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("%s: %d", path, res.StatusCode)
		}
	}
}
