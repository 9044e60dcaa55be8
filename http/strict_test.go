package http_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestFieldNamesExact replays the reproductions: a case-folded name
// may not override the real one, a capitalised name is unknown, and a name
// given twice is refused; nothing is stored.
func TestFieldNamesExact(t *testing.T) {
	s := newServer(t)
	s.mkBoard("b", `{"keys":[{"name":"n","order":"desc"}],"public":true}`)
	for _, tc := range []struct{ body, code string }{
		{`{"player":"legit","pLaYeR":"victim","score":1}`, "invalid_argument"},
		{`{"Player":"victim","score":1}`, "invalid_argument"},
		{`{"player":"legit","player":"victim","score":1}`, "invalid_json"},
		{`{"player":"legit","score":1,"meta":{"a":1,"a":2}}`, "invalid_json"},
	} {
		r := s.do("POST", "/v1/boards/b/scores", adminKey, tc.body)
		if r.status != 400 || r.errCode(t) != tc.code {
			t.Errorf("%s: %d %s, want 400 %s", tc.body, r.status, r.body, tc.code)
		}
	}
	for _, tc := range []struct{ method, path, body string }{
		{"PUT", "/v1/boards/b", `{"keys":[{"name":"n","order":"desc"}],"Public":false}`},
		{"PUT", "/v1/boards/b", `{"keys":[{"name":"n","order":"desc","Order":"asc"}]}`},
		{"PUT", "/v1/boards/b", `{"public":true,"public":false}`},
		{"PUT", "/v1/players/legit", `{"name":"a","NAME":"b"}`},
		{"POST", "/v1/keys", `{"name":"k","scopes":["read"],"Scopes":["admin"]}`},
	} {
		if r := s.do(tc.method, tc.path, adminKey, tc.body); r.status != 400 {
			t.Errorf("%s %s %s: %d %s", tc.method, tc.path, tc.body, r.status, r.body)
		}
	}
	got := s.must(200, s.do("GET", "/v1/boards/b/entries", "", nil)).json(t)
	if got["total"].(float64) != 0 || got["seq"].(float64) != 0 {
		t.Fatalf("a refused body changed the board: %v", got)
	}
	if b := s.must(200, s.do("GET", "/v1/boards/b", "", nil)).json(t); b["public"] != true {
		t.Fatalf("a refused PUT changed the board: %v", b)
	}
	s.must(404, s.do("GET", "/v1/players/legit", adminKey, nil))
	if keys := s.must(200, s.do("GET", "/v1/keys", adminKey, nil)).json(t)["keys"].([]any); len(keys) != 0 {
		t.Fatalf("a refused key body made a key: %v", keys)
	}
}

// TestBodiesMustBeIJSON: invalid UTF-8 and lone surrogate escapes are
// refused everywhere in a body, so "a\xff" and "a\xfe" can no longer both
// become "a\uFFFD", and no stored string can break a WebSocket text frame.
func TestBodiesMustBeIJSON(t *testing.T) {
	s := newServer(t)
	s.mkBoard("b", `{"keys":[{"name":"n","order":"desc"}],"public":true}`)
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/v1/boards/b/scores", "{\"player\":\"a\xff\",\"score\":1}"},
		{"POST", "/v1/boards/b/scores", "{\"player\":\"a\xfe\",\"score\":1}"},
		{"POST", "/v1/boards/b/scores", `{"player":"a\udc00","score":1}`},
		{"POST", "/v1/boards/b/scores", `{"player":"a\ud800","score":1}`},
		{"POST", "/v1/boards/b/scores", "{\"player\":\"p\",\"score\":1,\"meta\":{\"x\":\"\xff\xfe\"}}"},
		{"POST", "/v1/boards/b/scores", `{"player":"p","score":1,"meta":{"x":"\udc00"}}`},
		{"POST", "/v1/scores", "{\"scores\":[{\"board\":\"b\",\"player\":\"ok\",\"score\":1},{\"board\":\"b\",\"player\":\"a\xff\",\"score\":1}]}"},
		{"POST", "/v1/scores", `{"scores":[{"board":"b","player":"ok","score":1},{"board":"b","player":"p","score":1,"meta":{"x":"\udc00"}}]}`},
		{"PUT", "/v1/players/p", "{\"name\":\"A\xff\"}"},
		{"PUT", "/v1/players/p", `{"name":"\ud83d"}`},
		{"PUT", "/v1/players/p", "{\"meta\":{\"\xfe\":1}}"},
		{"PUT", "/v1/boards/b", "{\"title\":\"T\xc0\xaf\"}"},
		{"PUT", "/v1/boards/b", `{"meta":{"x":"\udfff"}}`},
		{"POST", "/v1/keys", "{\"name\":\"k\xff\",\"scopes\":[\"read\"]}"},
	} {
		r := s.do(tc.method, tc.path, adminKey, tc.body)
		if r.status != 400 || r.errCode(t) != "invalid_json" {
			t.Errorf("%s %s %q: %d %s, want 400 invalid_json", tc.method, tc.path, tc.body, r.status, r.body)
		}
	}
	got := s.must(200, s.do("GET", "/v1/boards/b/entries", "", nil)).json(t)
	if got["total"].(float64) != 0 || got["seq"].(float64) != 0 {
		t.Fatalf("a refused body changed the board: %v", got)
	}
	if b := s.must(200, s.do("GET", "/v1/boards/b", "", nil)).json(t); b["title"] != "" {
		t.Fatalf("a refused PUT changed the board: %v", b)
	}
	s.must(404, s.do("GET", "/v1/players/p", adminKey, nil))

	// Surrogate pairs are fine, and the player reads back as sent.
	s.must(200, s.do("POST", "/v1/boards/b/scores", adminKey, `{"player":"\ud83d\ude00","score":1}`))
	one := s.must(200, s.do("GET", "/v1/boards/b/entries/%F0%9F%98%80", "", nil)).json(t)
	if one["player"] != "\U0001F600" {
		t.Fatalf("surrogate pair: %v", one)
	}
}

// TestBatchStrictness: inside a batch a duplicate or case-folded name fails
// only its item; text that is not I-JSON fails the whole batch.
func TestBatchStrictness(t *testing.T) {
	s := newServer(t)
	s.mkBoard("b", `{"keys":[{"name":"n","order":"desc"}],"mode":"sum","public":true}`)
	res := s.must(200, s.do("POST", "/v1/scores", adminKey, `{"scores":[
		{"board":"b","player":"legit","pLaYeR":"victim","score":1},
		{"board":"b","player":"legit","player":"victim","score":1},
		{"board":"b","player":"ok","score":5}]}`)).json(t)["results"].([]any)
	for i, want := range []string{"invalid_argument", "invalid_json", ""} {
		m := res[i].(map[string]any)
		e, _ := m["error"].(map[string]any)
		switch {
		case want == "" && e != nil:
			t.Fatalf("item %d: %v", i, m)
		case want != "" && (e == nil || e["code"] != want):
			t.Fatalf("item %d: %v, want %s", i, m, want)
		}
	}
	got := s.must(200, s.do("GET", "/v1/boards/b/entries", "", nil)).json(t)
	if got["total"].(float64) != 1 || got["entries"].([]any)[0].(map[string]any)["player"] != "ok" {
		t.Fatalf("entries after the batch: %v", got)
	}
}

// TestWebSocketMessagesStrict: WebSocket client messages go through the
// same decoder: a case-folded or duplicate name is an error event.
func TestWebSocketMessagesStrict(t *testing.T) {
	s := newServer(t)
	s.mkBoard("w", `{"keys":[{"name":"n","order":"desc"}],"public":true}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.url, "http")+"/v1/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	for _, tc := range []struct{ msg, code string }{
		{`{"op":"subscribe","board":"w","Board":"x"}`, "invalid_argument"},
		{`{"op":"ping","op":"subscribe","board":"w"}`, "invalid_json"},
		{"{\"op\":\"ping\",\"id\":\"\xff\"}", "invalid_json"},
		// A key goes in the Authorization header or ?key= of the upgrade,
		// never in a message: a "key" field used to pass and be ignored.
		{`{"op":"subscribe","board":"w","key":"pdm_x"}`, "invalid_argument"},
	} {
		if err := c.Write(ctx, websocket.MessageText, []byte(tc.msg)); err != nil {
			t.Fatal(err)
		}
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil || m["type"] != "error" || m["code"] != tc.code {
			t.Fatalf("%q: got %s, want an error event %s", tc.msg, b, tc.code)
		}
	}
}
