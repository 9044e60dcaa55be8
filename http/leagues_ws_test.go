package http_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/stream"
)

// xpLeague is a public weekly league of cohorts of 3.
const xpLeague = `{"title": "XP league", "public": %t, "keys": [{"name": "xp", "order": "desc"}], "mode": "sum",
	"reset": {"every": "week", "tz": "UTC"},
	"league": {"cohort_size": 3, "tiers": [{"name": "bronze", "promote": 1}, {"name": "silver", "relegate": 1}]}}`

// newCohortWSServer is a league server on SQLite with the hub configured
// by cfg, league xp (amy, bob, cid in cohort 0, dan in cohort 1) and the
// plain board "plain".
func newCohortWSServer(t *testing.T, cfg stream.Config) *server {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := newLeagueServerHub(t, st, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), cfg)
	s.must(201, s.do("PUT", "/v1/boards/xp", adminKey, fmt.Sprintf(xpLeague, true)))
	s.must(201, s.do("PUT", "/v1/boards/plain", adminKey, oneKey))
	for i, p := range []string{"amy", "bob", "cid", "dan"} {
		s.score2("xp", p, 10*(i+1))
	}
	return s
}

// expect reads the next message and fails unless it has every field of
// want (compared as printed).
func (w *wsClient) expect(what string, want map[string]any) map[string]any {
	w.t.Helper()
	m, b, err := w.recv(10 * time.Second)
	if err != nil {
		w.t.Fatalf("%s: %v", what, err)
	}
	for k, v := range want {
		if fmt.Sprint(m[k]) != fmt.Sprint(v) {
			w.t.Fatalf("%s: got %s, want %s = %v", what, b, k, v)
		}
	}
	return m
}

// nextCohort waits for a cohort snapshot of player whose order is want;
// the messages on the way must be snapshots of that player (intermediate
// states of a burst, each differing from the one before it).
func (w *wsClient) nextCohort(player, want string) map[string]any {
	w.t.Helper()
	var last map[string]any
	for range 1000 {
		m, b, err := w.recv(10 * time.Second)
		if err != nil {
			w.t.Fatalf("waiting for %s's cohort %q: %v", player, want, err)
		}
		if m["type"] != "snapshot" || m["player"] != player {
			w.t.Fatalf("got %s, want %s's cohort snapshot %q", b, player, want)
		}
		if last != nil && fmt.Sprint(last) == fmt.Sprint(m) {
			w.t.Fatalf("a snapshot repeated the one before it: %s", b)
		}
		if got := cohortOrder(sseEvent{Data: m}); got == want {
			return m
		}
		last = m
	}
	w.t.Fatalf("never saw %q", want)
	return nil
}

// pong sends a ping and fails unless the next message is its pong:
// nothing else was on the way.
func (w *wsClient) pong(what string) {
	w.t.Helper()
	w.send(`{"op":"ping","id":"p"}`)
	w.expect(what+": the next message is the pong", map[string]any{"type": "pong", "id": "p"})
}

// TestLeagueCohortWebSocket: subscribe_cohort answers subscribed, then the
// SSE stream's snapshot document; a change of the cohort sends a new one
// and another cohort's change none; a second subscribe is answered
// without a second subscription; unsubscribe_cohort stops it; the board
// made private, deleted, or the key revoked end it with an error.
func TestLeagueCohortWebSocket(t *testing.T) {
	s := newCohortWSServer(t, stream.Config{})
	ws := s.dialWS("")
	ws.send(`{"op":"subscribe_cohort","board":"xp","player":"amy","id":"a"}`)
	ws.expect("subscribe", map[string]any{"type": "subscribed", "cohort": true, "board": "xp", "player": "amy", "id": "a"})
	first := ws.expect("first snapshot", map[string]any{"type": "snapshot", "player": "amy", "board": "xp", "total": 3})
	read := s.must(200, s.do("GET", "/v1/leagues/xp/players/amy/cohort", "", nil)).json(t)
	for k, v := range read {
		if fmt.Sprint(first[k]) != fmt.Sprint(v) {
			t.Fatalf("snapshot's %s = %v, the cohort read's %v", k, first[k], v)
		}
	}
	sse := s.openSSE("/v1/leagues/xp/players/amy/cohort/stream", "")
	if ev := sse.next(10 * time.Second); fmt.Sprint(ev.Data) != fmt.Sprint(first) {
		t.Fatalf("the WebSocket's snapshot %v, the SSE stream's %v", first, ev.Data)
	}
	ws.send(`{"op":"subscribe_cohort","board":"xp","player":"amy","id":"again"}`)
	ws.expect("subscribe twice", map[string]any{"type": "subscribed", "cohort": true, "id": "again"})
	ws.pong("after subscribing twice")

	s.score2("xp", "dan", 500) // cohort 1: nothing for amy
	s.score2("xp", "amy", 100)
	ws.nextCohort("amy", "amy:promotion cid:safe bob:safe ")
	ws.pong("after the change") // one subscription, though subscribed twice

	// bob is in amy's cohort: after amy's unsubscribe, a change reaches
	// bob's subscription only.
	ws.send(`{"op":"subscribe_cohort","board":"xp","player":"bob"}`)
	ws.expect("subscribe bob", map[string]any{"type": "subscribed", "player": "bob"})
	ws.nextCohort("bob", "amy:promotion cid:safe bob:safe ")
	ws.send(`{"op":"unsubscribe_cohort","board":"xp","player":"amy","id":"u"}`)
	ws.expect("unsubscribe", map[string]any{"type": "unsubscribed", "cohort": true, "board": "xp", "player": "amy", "id": "u"})
	s.score2("xp", "bob", 200)
	ws.nextCohort("bob", "bob:promotion amy:safe cid:safe ")
	ws.pong("after unsubscribing amy")
	ws.send(`{"op":"unsubscribe_cohort","board":"xp","player":"amy"}`)
	ws.expect("unsubscribe twice", map[string]any{"type": "error", "code": podium.ECodeNotFound, "board": "xp"})

	// Made private: the anonymous subscription ends with the read's
	// refusal, the connection goes on; a keyed one goes on until the
	// board is deleted.
	keyed := s.dialWS("?key=" + adminKey)
	keyed.send(`{"op":"subscribe_cohort","board":"xp","player":"cid"}`)
	keyed.expect("keyed subscribe", map[string]any{"type": "subscribed", "player": "cid"})
	keyed.nextCohort("cid", "bob:promotion amy:safe cid:safe ")
	s.must(200, s.do("PUT", "/v1/boards/xp", adminKey, fmt.Sprintf(xpLeague, false)))
	refused := s.do("GET", "/v1/leagues/xp/players/bob/cohort", "", nil).errCode(t)
	ws.expect("after private", map[string]any{"type": "error", "cohort": true, "board": "xp", "player": "bob", "code": refused})
	ws.pong("after its cohort ended")
	s.must(204, s.do("DELETE", "/v1/boards/xp", adminKey, nil))
	keyed.expect("after delete", map[string]any{"type": "error", "cohort": true, "board": "xp", "player": "cid", "code": podium.ECodeBoardNotFound})
	keyed.pong("after its cohort ended")
	// A subscribe to the deleted league is refused.
	keyed.send(`{"op":"subscribe_cohort","board":"xp","player":"cid","id":"gone"}`)
	keyed.expect("subscribe to a deleted board", map[string]any{"type": "error", "code": podium.ECodeBoardNotFound, "id": "gone"})
}

// TestLeagueCohortWebSocketRevokedKey: a key's revocation ends the
// WebSocket that follows a private league's cohort with it: the error
// every subscription of the connection gets, then close 1008.
func TestLeagueCohortWebSocketRevokedKey(t *testing.T) {
	s := newCohortWSServer(t, stream.Config{})
	s.must(200, s.do("PUT", "/v1/boards/xp", adminKey, fmt.Sprintf(xpLeague, false)))
	k := s.must(201, s.do("POST", "/v1/keys", adminKey, `{"name":"reader","scopes":["read"]}`)).json(t)
	anon := s.dialWS("")
	anon.send(`{"op":"subscribe_cohort","board":"xp","player":"amy"}`)
	anon.expect("anonymous, private league", map[string]any{"type": "error", "code": podium.ECodeBoardNotFound, "board": "xp"})
	ws := s.dialWS("?key=" + k["key"].(string))
	ws.send(`{"op":"subscribe_cohort","board":"xp","player":"amy"}`)
	ws.expect("subscribe", map[string]any{"type": "subscribed", "player": "amy"})
	ws.expect("snapshot", map[string]any{"type": "snapshot", "player": "amy"})
	s.must(204, s.do("DELETE", "/v1/keys/"+k["id"].(string), adminKey, nil))
	s.score2("xp", "amy", 100)
	ws.expect("after the revocation", map[string]any{"type": "error", "code": podium.ECodeUnauthenticated})
	if _, b, err := ws.recv(10 * time.Second); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("after the error: %s %v, want close 1008", b, err)
	}
}

// TestLeagueCohortWebSocketRefusals: bad cohort messages get a clear
// error naming the message's board and id, and the connection goes on.
func TestLeagueCohortWebSocketRefusals(t *testing.T) {
	s := newCohortWSServer(t, stream.Config{})
	ws := s.dialWS("")
	for _, c := range []struct{ msg, code, says string }{
		{`{"op":"subscribe_cohort","board":"nope","player":"amy","id":"1"}`, podium.ECodeBoardNotFound, "nope"},
		{`{"op":"subscribe_cohort","board":"plain","player":"amy","id":"1"}`, podium.ECodeNotFound, "not a league"},
		{`{"op":"subscribe_cohort","board":"xp","id":"1"}`, podium.ECodeInvalid, "player"},
		{`{"op":"subscribe_cohort","board":"xp","player":"eve","id":"1"}`, podium.ECodeNotFound, "has not played"},
		{`{"op":"subscribe_cohort","board":"xp","player":"amy","tier":"bronze","id":"1"}`, podium.ECodeInvalid, "tier"},
		{`{"op":"subscribe_cohort","board":"xp","player":"amy","limit":5,"id":"1"}`, podium.ECodeInvalid, "no limit"},
		{`{"op":"subscribe_cohort","player":"amy","id":"1"}`, podium.ECodeInvalid, "board"},
		{`{"op":"subscribe","board":"xp","player":"amy","id":"1"}`, podium.ECodeInvalid, "subscribe_cohort"},
		{`{"op":"unsubscribe_cohort","board":"xp","player":"amy","id":"1"}`, podium.ECodeNotFound, "not subscribed"},
	} {
		ws.send(c.msg)
		m, b, err := ws.recv(10 * time.Second)
		if err != nil {
			t.Fatalf("%s: %v", c.msg, err)
		}
		if m["type"] != "error" || m["code"] != c.code || !strings.Contains(fmt.Sprint(m["message"]), c.says) {
			t.Fatalf("%s: got %s, want %s saying %q", c.msg, b, c.code, c.says)
		}
		if strings.Contains(c.msg, `"id":"1"`) && !strings.Contains(c.msg, `"tier"`) && m["id"] != "1" {
			t.Fatalf("%s: got %s, want the id echoed", c.msg, b)
		}
	}
	ws.pong("after the refusals")
}

// TestLeagueCohortWebSocketBound: cohorts count against the connection's
// subscriptions (MaxSubs) with boards and feeds; one unsubscribed, or
// ended by an error, frees its place. A snapshot that finds no room in
// the address's memory share is refused with rate_limited.
func TestLeagueCohortWebSocketBound(t *testing.T) {
	s := newCohortWSServer(t, stream.Config{MaxSubs: 3})
	ws := s.dialWS("")
	ws.subscribe("plain")
	for _, p := range []string{"amy", "bob"} {
		ws.send(fmt.Sprintf(`{"op":"subscribe_cohort","board":"xp","player":%q}`, p))
		ws.expect("subscribe "+p, map[string]any{"type": "subscribed", "player": p})
		ws.expect("snapshot "+p, map[string]any{"type": "snapshot", "player": p})
	}
	ws.send(`{"op":"subscribe_cohort","board":"xp","player":"cid","id":"4"}`)
	ws.expect("a fourth subscription", map[string]any{"type": "error", "code": podium.ECodeInvalid, "id": "4", "board": "xp"})
	ws.send(`{"op":"subscribe","board":"xp","limit":10,"id":"4b"}`)
	ws.expect("a fourth, a board", map[string]any{"type": "error", "code": podium.ECodeInvalid, "id": "4b"})
	ws.send(`{"op":"unsubscribe_cohort","board":"xp","player":"amy"}`)
	ws.expect("unsubscribe amy", map[string]any{"type": "unsubscribed", "player": "amy"})
	ws.send(`{"op":"subscribe_cohort","board":"xp","player":"cid"}`)
	ws.expect("cid in amy's place", map[string]any{"type": "subscribed", "player": "cid"})
	ws.expect("cid's snapshot", map[string]any{"type": "snapshot", "player": "cid"})
	// Deleted: both cohorts end, and their places are free again.
	s.must(204, s.do("DELETE", "/v1/boards/xp", adminKey, nil))
	ended := map[any]bool{}
	for len(ended) < 2 {
		m, b, err := ws.recv(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if m["type"] == "error" && m["cohort"] == true {
			ended[m["player"]] = true
		} else if m["board"] != "plain" {
			t.Fatalf("after the delete: %s", b)
		}
	}
	s.must(201, s.do("PUT", "/v1/boards/xp", adminKey, fmt.Sprintf(xpLeague, true)))
	for _, p := range []string{"amy", "bob"} {
		s.score2("xp", p, 1)
		ws.send(fmt.Sprintf(`{"op":"subscribe_cohort","board":"xp","player":%q}`, p))
		for {
			m, b, err := ws.recv(10 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if m["type"] == "error" {
				t.Fatalf("subscribe %s after the others ended: %s", p, b)
			}
			if m["type"] == "subscribed" {
				break
			}
		}
	}

	tight := newCohortWSServer(t, stream.Config{MemoryBudget: 1 << 20, MemoryPerAddress: 200})
	tw := tight.dialWS("")
	tw.send(`{"op":"subscribe_cohort","board":"xp","player":"amy","id":"m"}`)
	tw.expect("past the memory share", map[string]any{"type": "error", "code": podium.ECodeRateLimited, "id": "m", "board": "xp"})
	tw.pong("after the refusal")
}

// TestLeagueCohortWebSocketGivesBackMemory: the snapshots a WebSocket's
// cohorts hold are given back when it closes, whether it closes idle or
// while a subscribe is being answered.
func TestLeagueCohortWebSocketGivesBackMemory(t *testing.T) {
	s := newCohortWSServer(t, stream.Config{})
	for round := range 10 {
		ws := s.dialWS("")
		for _, p := range []string{"amy", "bob"} {
			ws.send(fmt.Sprintf(`{"op":"subscribe_cohort","board":"xp","player":%q}`, p))
		}
		if round%2 == 0 {
			// Both answered: the follows are running.
			for n := 0; n < 4; n++ {
				if _, b, err := ws.recv(10 * time.Second); err != nil || !strings.Contains(string(b), `"player"`) {
					t.Fatalf("round %d: %s %v", round, b, err)
				}
			}
		}
		s.score2("xp", "cid", 1)
		ws.c.Close(websocket.StatusNormalClosure, "")
		waitCond(t, "the connection to end", func() bool { return s.hub.Stats().Connections == 0 })
		if st := s.hub.Stats(); st.MemoryBytes != 0 {
			t.Fatalf("round %d: %d bytes still held after the WebSocket closed: %+v", round, st.MemoryBytes, st)
		}
	}
}

// TestLeagueCohortWebSocketStoreFailure: a subscribe while the store
// fails is answered unavailable (never internal); once following, a
// re-read that fails sends nothing and keeps the last snapshot, and the
// next change reads again.
func TestLeagueCohortWebSocketStoreFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "podium.db")
	failing := failSQLite(path)
	st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := newLeagueServerHub(t, st, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), stream.Config{})
	s.must(201, s.do("PUT", "/v1/boards/xp", adminKey, fmt.Sprintf(xpLeague, true)))
	for i, p := range []string{"amy", "bob", "cid"} {
		s.score2("xp", p, 10*(i+1))
	}
	var calls atomic.Int32
	failed := make(chan struct{})
	s.srv.SetCohortRereadError(func(err error) error {
		if calls.Add(1) == 1 {
			close(failed)
			return podium.Errorf(podium.ECodeUnavailable, "the store failed (the test's)")
		}
		return err
	})
	ws := s.dialWS("")
	failing.Store(true)
	ws.send(`{"op":"subscribe_cohort","board":"xp","player":"amy","id":"f"}`)
	ws.expect("subscribe while the store fails", map[string]any{"type": "error", "code": podium.ECodeUnavailable, "id": "f", "board": "xp"})
	failing.Store(false)
	ws.send(`{"op":"subscribe_cohort","board":"xp","player":"amy"}`)
	ws.expect("subscribe", map[string]any{"type": "subscribed", "player": "amy"})
	ws.nextCohort("amy", "cid:promotion bob:safe amy:safe ")
	s.score2("xp", "amy", 100)
	select {
	case <-failed:
	case <-time.After(10 * time.Second):
		t.Fatal("the follow never re-read after a change")
	}
	ws.pong("after a failed re-read") // nothing sent for it
	s.score2("xp", "bob", 1)          // bob 21 stays behind cid: only amy's 110 moves the cohort
	ws.nextCohort("amy", "amy:promotion cid:safe bob:safe ")
}
