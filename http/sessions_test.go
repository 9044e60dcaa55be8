package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/sqlite"
)

// sessionBoard takes player submissions; plainBoard is public but does not.
const (
	sessionBoard = `{"title":"open","keys":[{"name":"points","order":"desc"}],"public":true,"player_submit":true}`
	plainBoard   = `{"title":"plain","keys":[{"name":"points","order":"desc"}],"public":true}`
)

// eventually retries check until it holds, for up to 5 s (another node
// learns of a session change at its next poll of the change feed).
func sessionsEventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !check(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
	}
}

func (s *server) issue(player, device, key string, extra ...string) (token, id string) {
	s.t.Helper()
	m := s.must(201, s.do("POST", "/v1/players/"+player+"/sessions", key, `{"device":"`+device+`"}`, extra...)).json(s.t)
	if m["player"] != player || m["device"] != device || m["token"] == nil {
		s.t.Fatalf("issued %v", m)
	}
	return m["token"].(string), m["id"].(string)
}

func sessionScore(player string, n int) string {
	return fmt.Sprintf(`{"player":%q,"score":%d}`, player, n)
}

// TestPlayerSessions (issue 9 section 1): on SQLite and on two PostgreSQL
// nodes, a session issued on node a submits on node b only as its own
// player and only to a board that allows it; revoking it on a stops it on
// b, its open stream included; refreshing rotates the token; the cap
// evicts the oldest; an expired session stops by the clock.
func TestPlayerSessions(t *testing.T) {
	feedBackends(t, func(t *testing.T, a, b *server) {
		a.mkBoard("open", sessionBoard)
		a.mkBoard("plain", plainBoard)
		a.mkBoard("priv", privateBoard)
		// A key with the sessions scope issues; a submit key may not.
		gk := a.must(201, a.do("POST", "/v1/keys", adminKey, `{"name":"game","scopes":["sessions"]}`)).json(t)["key"].(string)
		sk := a.must(201, a.do("POST", "/v1/keys", adminKey, `{"name":"sub","scopes":["submit"]}`)).json(t)["key"].(string)
		if r := a.do("POST", "/v1/players/alice/sessions", sk, `{"device":"phone"}`); r.status != 403 {
			t.Fatalf("issue with a submit key: %d %s", r.status, r.body)
		}
		if r := a.do("POST", "/v1/players/alice/sessions", gk, `{"device":""}`); r.status != 400 {
			t.Fatalf("issue without a device: %d %s", r.status, r.body)
		}
		if r := a.do("POST", "/v1/players/alice/sessions", gk, `{"device":"x","ttl_seconds":99999999999}`); r.status != 400 {
			t.Fatalf("issue with a huge ttl: %d %s", r.status, r.body)
		}
		tok, id := a.issue("alice", "phone", gk)

		// On node b: as itself to the open board, nothing else.
		sessionsEventually(t, "node b takes the session", func() bool {
			return b.do("POST", "/v1/boards/open/scores", tok, sessionScore("alice", 1)).status == 200
		})
		// A private board that takes no session submissions is, to a
		// session, unknown (404); the others refuse (403).
		for _, c := range []struct {
			board, body string
			status      int
		}{{"open", sessionScore("bob", 2), 403}, {"plain", sessionScore("alice", 2), 403}, {"priv", sessionScore("alice", 2), 404}} {
			if r := b.do("POST", "/v1/boards/"+c.board+"/scores", tok, c.body); r.status != c.status {
				t.Fatalf("session submits %s to %s: %d %s", c.body, c.board, r.status, r.body)
			}
		}
		batch := b.must(200, b.do("POST", "/v1/scores", tok, `{"scores":[{"board":"open","player":"alice","score":3},{"board":"open","player":"bob","score":3}]}`)).json(t)
		res := batch["results"].([]any)
		if res[0].(map[string]any)["error"] != nil || res[1].(map[string]any)["error"].(map[string]any)["code"] != "forbidden" {
			t.Fatalf("batch from a session: %v", batch)
		}
		if r := b.do("GET", "/v1/boards/priv/entries", tok, nil); r.status != 404 { // unknown to it (docs/API.md, "Private ids")
			t.Fatalf("session reads a private board: %d %s", r.status, r.body)
		}
		if r := b.do("GET", "/v1/keys", tok, nil); r.status != 403 {
			t.Fatalf("session lists keys: %d %s", r.status, r.body)
		}
		// The list never shows a token; another player's session may not list.
		list := b.must(200, b.do("GET", "/v1/players/alice/sessions", tok, nil))
		if n := len(list.json(t)["sessions"].([]any)); n != 1 || bytesContain(list.body, tok) {
			t.Fatalf("list: %s", list.body)
		}
		bobTok, _ := a.issue("bob", "pc", adminKey)
		sessionsEventually(t, "node b takes bob's session", func() bool { return b.do("GET", "/v1/boards/open/entries", bobTok, nil).status == 200 })
		if r := b.do("GET", "/v1/players/alice/sessions", bobTok, nil); r.status != 403 {
			t.Fatalf("bob lists alice's sessions: %d %s", r.status, r.body)
		}

		// Refresh on b (by the session itself): the old token dies at once on both nodes.
		m := b.must(200, b.do("POST", "/v1/players/alice/sessions/"+id+"/refresh", tok, nil)).json(t)
		tok2 := m["token"].(string)
		if m["id"] != id || tok2 == tok {
			t.Fatalf("refresh: %v", m)
		}
		if r := b.do("POST", "/v1/boards/open/scores", tok, sessionScore("alice", 4)); r.status != 401 {
			t.Fatalf("old token on the refreshing node: %d %s", r.status, r.body)
		}
		sessionsEventually(t, "node a forgets the old token", func() bool {
			return a.do("POST", "/v1/boards/open/scores", tok, sessionScore("alice", 4)).status == 401
		})
		sessionsEventually(t, "node a takes the new token", func() bool {
			return a.do("POST", "/v1/boards/open/scores", tok2, sessionScore("alice", 5)).status == 200
		})

		// Revoke on a: the stream opened on b ends, and b refuses the token.
		sse := b.openSSE("/v1/boards/open/stream", "", tok2)
		if ev := sse.next(2 * time.Second); ev.Type != "snapshot" {
			t.Fatalf("first event %+v", ev)
		}
		a.must(204, a.do("DELETE", "/v1/players/alice/sessions/"+id, gk, nil))
		evs, ended := sse.rest(5 * time.Second)
		if !ended || len(evs) == 0 || evs[len(evs)-1].Type != "error" || evs[len(evs)-1].Data["code"] != "unauthenticated" {
			t.Fatalf("stream after revocation: %+v ended %v", evs, ended)
		}
		if r := b.do("POST", "/v1/boards/open/scores", tok2, sessionScore("alice", 6)); r.status != 401 {
			t.Fatalf("revoked token on node b: %d %s", r.status, r.body)
		}
		if r := a.do("DELETE", "/v1/players/alice/sessions/"+id, gk, nil); r.status != 404 {
			t.Fatalf("revoke twice: %d %s", r.status, r.body)
		}

		// The cap (10): the eleventh device evicts the first.
		var toks []string
		for i := range 11 {
			tk, _ := a.issue("carol", fmt.Sprint("dev", i), gk)
			toks = append(toks, tk)
			a.clock.Add(time.Millisecond) // the oldest is by creation time
		}
		if r := a.do("GET", "/v1/boards/open/entries", toks[0], nil); r.status != 401 {
			t.Fatalf("evicted session: %d %s", r.status, r.body)
		}
		sessionsEventually(t, "node b knows the newest", func() bool { return b.do("GET", "/v1/boards/open/entries", toks[10], nil).status == 200 })
		if r := b.do("GET", "/v1/boards/open/entries", toks[0], nil); r.status != 401 {
			t.Fatalf("evicted session on node b: %d %s", r.status, r.body)
		}
		// The same device replaces its session.
		again, _ := a.issue("carol", "dev10", gk)
		if r := a.do("GET", "/v1/boards/open/entries", toks[10], nil); r.status != 401 {
			t.Fatalf("replaced session: %d %s", r.status, r.body)
		}
		if n := len(a.must(200, a.do("GET", "/v1/players/carol/sessions", again, nil)).json(t)["sessions"].([]any)); n != 10 {
			t.Fatalf("carol has %d sessions, want 10", n)
		}
		// Log out everywhere.
		if m := b.must(200, b.do("DELETE", "/v1/players/carol/sessions", gk, nil)).json(t); m["revoked"] != float64(10) {
			t.Fatalf("log out everywhere: %v", m)
		}
		sessionsEventually(t, "node a refuses carol's sessions", func() bool {
			return a.do("GET", "/v1/boards/open/entries", again, nil).status == 401
		})

		// Idempotency: a retry cannot get the token again.
		a.issue("dave", "phone", gk, "Idempotency-Key", "k1")
		if r := a.do("POST", "/v1/players/dave/sessions", gk, `{"device":"phone"}`, "Idempotency-Key", "k1"); r.status != 409 || r.errCode(t) != "conflict" {
			t.Fatalf("retry of an issue: %d %s", r.status, r.body)
		}

		// Expiry by the clock: refused at once on both nodes, its stream ended.
		m = a.must(201, a.do("POST", "/v1/players/erin/sessions", gk, `{"device":"phone","ttl_seconds":120}`)).json(t)
		etok := m["token"].(string)
		sessionsEventually(t, "node b takes erin's session", func() bool { return b.do("GET", "/v1/boards/open/entries", etok, nil).status == 200 })
		esse := b.openSSE("/v1/boards/open/stream", "", etok)
		if ev := esse.next(2 * time.Second); ev.Type != "snapshot" {
			t.Fatalf("first event %+v", ev)
		}
		a.clock.Add(121 * time.Second) // one clock for both nodes
		for _, n := range []*server{a, b} {
			if r := n.do("GET", "/v1/boards/open/entries", etok, nil); r.status != 401 {
				t.Fatalf("expired session: %d %s", r.status, r.body)
			}
		}
		if evs, ended := esse.rest(5 * time.Second); !ended || len(evs) == 0 || evs[len(evs)-1].Data["code"] != "unauthenticated" {
			t.Fatalf("stream of an expired session: %+v ended %v", evs, ended)
		}
		if n := len(a.must(200, a.do("GET", "/v1/players/erin/sessions", gk, nil)).json(t)["sessions"].([]any)); n != 0 {
			t.Fatalf("erin lists %d sessions after expiry", n)
		}
	})
}

func bytesContain(b []byte, s string) bool { return strings.Contains(string(b), s) }

// TestPlayerSubmitSetting: player_submit is off by default, turned on and
// off by a PUT, kept by a PUT that leaves it out, and shown only when on.
func TestPlayerSubmitSetting(t *testing.T) {
	s := newServer(t)
	s.mkBoard("b", plainBoard)
	tok, _ := s.issue("alice", "phone", adminKey)
	if r := s.do("POST", "/v1/boards/b/scores", tok, sessionScore("alice", 1)); r.status != 403 {
		t.Fatalf("default: %d %s", r.status, r.body)
	}
	s.must(200, s.do("PUT", "/v1/boards/b", adminKey, `{"player_submit":true}`))
	s.must(200, s.do("PUT", "/v1/boards/b", adminKey, `{"title":"renamed"}`))
	if m := s.must(200, s.do("GET", "/v1/boards/b", "", nil)).json(t); m["player_submit"] != true || m["title"] != "renamed" {
		t.Fatalf("board after the updates: %v", m)
	}
	s.must(200, s.do("POST", "/v1/boards/b/scores", tok, sessionScore("alice", 1)))
	s.must(200, s.do("PUT", "/v1/boards/b", adminKey, `{"player_submit":false}`))
	if m := s.must(200, s.do("GET", "/v1/boards/b", "", nil)).json(t); m["player_submit"] != nil {
		t.Fatalf("board shows player_submit when off: %v", m)
	}
	if r := s.do("POST", "/v1/boards/b/scores", tok, sessionScore("alice", 2)); r.status != 403 {
		t.Fatalf("after turning it off: %d %s", r.status, r.body)
	}
}

// TestIssueSessionKeyRevokedMidRequest (issue 17 item 17): the key that
// issues a session is revoked just after the request was authorised. The
// request goes on with the key it was authorised under (201); it used to
// authenticate a second time, find no key and panic on it.
func TestIssueSessionKeyRevokedMidRequest(t *testing.T) {
	s := newServer(t)
	m := s.must(201, s.do("POST", "/v1/keys", adminKey, `{"name":"game","scopes":["sessions"]}`)).json(t)
	gk, id := m["key"].(string), m["id"].(string)
	// The key is checked on the headers (api: a request with a body needs
	// credentials), then by sessionAccess; it is revoked after the second.
	var calls atomic.Int32
	s.srv.SetAfterAuth(func(r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+gk && calls.Add(1) == 2 {
			if err := s.eng.Keys().Delete(context.Background(), id); err != nil {
				t.Error(err)
			}
		}
	})
	r := s.do("POST", "/v1/players/alice/sessions", gk, `{"device":"phone"}`, "Idempotency-Key", "k1")
	if r.status != 201 {
		t.Fatalf("issue with a key revoked after its check: %d %s", r.status, r.body)
	}
	if r := s.do("POST", "/v1/players/alice/sessions", gk, `{"device":"phone"}`, "Idempotency-Key", "k2"); r.status != 401 {
		t.Fatalf("issue with the revoked key: %d %s", r.status, r.body)
	}
}

// TestRoutesWithoutModules: a server given no sessions or evidence module
// answers their routes 503 unavailable, as on a store that keeps neither,
// and the rest of the API works.
func TestRoutesWithoutModules(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := engine.New(engine.Config{Store: st, Logger: log}) // no module
	eng.Keys().SetAdminSecret(adminKey)
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := podiumhttp.New(podiumhttp.Config{Engine: eng, Store: st, Logger: log})
	ts := serveTest(srv)
	t.Cleanup(func() {
		ts.Close()
		eng.Close()
		st.Close()
	})
	s := &server{t: t, url: ts.URL, eng: eng, srv: srv}
	s.mkBoard("open", sessionBoard)
	s.must(200, s.do("POST", "/v1/boards/open/scores", adminKey, sessionScore("alice", 1)))
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/v1/players/alice/sessions", `{"device":"phone"}`},
		{"GET", "/v1/players/alice/sessions", ""},
		{"DELETE", "/v1/players/alice/sessions", ""},
		{"GET", "/v1/boards/open/entries/alice/evidence?seq=1", ""},
	} {
		var body any
		if r.body != "" {
			body = r.body
		}
		if got := s.do(r.method, r.path, adminKey, body); got.status != 503 || got.errCode(t) != "unavailable" || !bytesContain(got.body, "keeps no") {
			t.Errorf("%s %s without its module: %d %s", r.method, r.path, got.status, got.body)
		}
	}
}
