package http_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Deleting a challenge (only an unsolved one) and a contest: its streams
// end, its reads are 404, and a contest made again under its id starts
// empty, its stream on a new chain that an old event id does not resume.
func TestContestDelete(t *testing.T) {
	s, _ := newContestServer(t)
	t.Cleanup(s.srv.ContestHub().Close)
	judge := s.key(`{"name":"judge","scopes":["submit"],"boards":["ctf"]}`)
	mk := func() {
		s.must(201, s.do("PUT", "/v1/contests/ctf", adminKey, `{"title":"CTF","start":"2026-11-30T09:00:00Z","end":"2026-11-30T12:00:00Z","public":true}`))
		s.must(201, s.do("PUT", "/v1/contests/ctf/challenges/web", adminKey, `{"scoring":{"value":100}}`))
		s.must(201, s.do("PUT", "/v1/contests/ctf/challenges/pwn", adminKey, `{"scoring":{"value":300}}`))
	}
	attempt := func(team, ch string) resp {
		return s.do("POST", "/v1/contests/ctf/attempts", judge, fmt.Sprintf(`{"team":%q,"challenge":%q,"correct":true}`, team, ch))
	}
	mk()
	s.must(200, attempt("alice", "web"))
	s.must(200, attempt("bob", "web"))

	// A solved challenge stays; an unsolved one goes, and attempts on it
	// are refused (and logged) as on any unknown challenge.
	if r := s.must(409, s.do("DELETE", "/v1/contests/ctf/challenges/web", adminKey, nil)); r.errCode(t) != "conflict" {
		t.Fatalf("delete a solved challenge: %s", r.body)
	}
	s.must(403, s.do("DELETE", "/v1/contests/ctf/challenges/pwn", judge, nil))
	s.must(400, s.do("DELETE", "/v1/contests/ctf/challenges/pwn", adminKey, `{"x":1}`))
	s.must(204, s.do("DELETE", "/v1/contests/ctf/challenges/pwn", adminKey, nil))
	s.must(404, s.do("DELETE", "/v1/contests/ctf/challenges/pwn", adminKey, nil))
	s.must(404, s.do("DELETE", "/v1/contests/nope/challenges/pwn", adminKey, nil))
	s.must(400, s.do("DELETE", "/v1/contests/ctf/challenges/BAD", adminKey, nil))
	chals := s.must(200, s.do("GET", "/v1/contests/ctf/challenges", "", nil)).json(t)["challenges"].([]any)
	if len(chals) != 1 || chals[0].(map[string]any)["id"] != "web" {
		t.Fatalf("challenges after the delete: %v", chals)
	}
	s.must(404, attempt("alice", "pwn"))
	log := s.must(200, s.do("GET", "/v1/contests/ctf/attempts", adminKey, nil)).json(t)
	if got := attemptLines(log); got != "[alice/web/solved/true bob/web/solved/true alice/pwn/unknown_challenge/true]" {
		t.Fatalf("log %s", got)
	}

	pub := s.openSSE("/v1/contests/ctf/stream", "")
	first := pub.next(2 * time.Second)
	live := s.openSSE("/v1/contests/ctf/stream?view=live", "", adminKey)
	if ev := live.next(2 * time.Second); ev.Type != "snapshot" {
		t.Fatalf("live stream: %+v", ev)
	}
	s.must(403, s.do("DELETE", "/v1/contests/ctf", judge, nil))
	s.must(204, s.do("DELETE", "/v1/contests/ctf", adminKey, nil))
	for i, c := range []*sseClient{pub, live} {
		evs, ended := c.rest(2 * time.Second)
		if !ended || len(evs) != 1 || evs[0].Type != "error" || evs[0].Data["code"] != "board_not_found" {
			t.Fatalf("stream %d after the delete: %+v (ended %v)", i, evs, ended)
		}
	}
	s.must(404, s.do("GET", "/v1/contests/ctf", "", nil))
	s.must(404, s.do("GET", "/v1/contests/ctf/standings", "", nil))
	s.must(404, s.do("GET", "/v1/contests/ctf/attempts", adminKey, nil))
	s.must(404, s.do("DELETE", "/v1/contests/ctf", adminKey, nil))
	s.must(404, attempt("alice", "web"))
	if cs := s.must(200, s.do("GET", "/v1/contests", "", nil)).json(t)["contests"].([]any); len(cs) != 0 {
		t.Fatalf("contests after the delete: %v", cs)
	}

	// Made again: empty, and at seq 2 again after two solves, but on
	// another chain: a resume from the old contest's event gets a
	// snapshot of the new one.
	mk()
	if r := s.must(200, s.do("GET", "/v1/contests/ctf/attempts", adminKey, nil)).json(t); len(r["attempts"].([]any)) != 0 {
		t.Fatalf("log of the new contest %v", r)
	}
	s.must(200, attempt("carol", "pwn"))
	s.must(200, attempt("dave", "pwn"))
	c := s.openSSE("/v1/contests/ctf/stream", first.ID)
	ev := c.next(2 * time.Second)
	if ev.Type != "snapshot" || ev.Data["snapshot_id"] == first.Data["snapshot_id"] || !strings.Contains(fmt.Sprint(ev.Data["entries"]), "carol") ||
		strings.Contains(fmt.Sprint(ev.Data["entries"]), "alice") {
		t.Fatalf("resume across the delete: %+v (old snapshot %v)", ev, first.Data["snapshot_id"])
	}
}

// The live stream (?view=live) is for admin keys of the contest: it moves
// during the freeze while the public one stays still, shows no hidden
// team, and ends when its key is revoked.
func TestContestLiveStream(t *testing.T) {
	s, _ := newContestServer(t)
	t.Cleanup(s.srv.ContestHub().Close)
	s.must(201, s.do("PUT", "/v1/contests/ctf:f", adminKey, `{"start":"2026-11-30T09:00:00Z","end":"2026-11-30T12:00:00Z",
		"freeze":"2026-11-30T10:30:00Z","public":true}`))
	s.must(201, s.do("PUT", "/v1/contests/ctf:f/challenges/web", adminKey, `{"scoring":{"value":100}}`))
	s.must(200, s.do("PUT", "/v1/players/staff", adminKey, `{"hidden":true}`))
	attempt := func(team string) {
		s.must(200, s.do("POST", "/v1/contests/ctf:f/attempts", adminKey, fmt.Sprintf(`{"team":%q,"challenge":"web","correct":true}`, team)))
	}
	k := s.must(201, s.do("POST", "/v1/keys", adminKey, `{"name":"ops","scopes":["admin"],"boards":["ctf:"]}`)).json(t)
	admin, id := k["key"].(string), k["id"].(string)
	reader := s.key(`{"name":"r","scopes":["read"]}`)
	judge := s.key(`{"name":"j","scopes":["submit"]}`)
	other := s.key(`{"name":"o","scopes":["admin"],"boards":["other"]}`)
	for _, tc := range []struct {
		key  string
		code int
	}{{"", 401}, {reader, 403}, {judge, 403}, {other, 403}} {
		if r := s.do("GET", "/v1/contests/ctf:f/stream?view=live", tc.key, nil); r.status != tc.code {
			t.Fatalf("live stream with key %q: %d %s, want %d", tc.key, r.status, r.body, tc.code)
		}
	}
	s.must(400, s.do("GET", "/v1/contests/ctf:f/stream?view=nope", admin, nil))
	attempt("alice")
	s.clock.Add(45 * time.Minute) // 10:45, frozen
	pub := s.openSSE("/v1/contests/ctf:f/stream", "")
	live := s.openSSE("/v1/contests/ctf:f/stream?view=live", "", admin)
	for _, c := range []*sseClient{pub, live} {
		if ev := c.next(2 * time.Second); ev.Type != "snapshot" || ev.Data["total"] != 1.0 {
			t.Fatalf("first event %+v", ev)
		}
	}
	attempt("bob")
	attempt("staff")
	ev := live.next(2 * time.Second)
	if ev.Type != "delta" || ev.Data["board"] != "live/ctf:f" || ev.Data["total"] != 2.0 || strings.Contains(fmt.Sprint(ev.Data), "staff") {
		t.Fatalf("live stream after a solve in the freeze: %+v", ev)
	}
	if evs, _ := pub.rest(500 * time.Millisecond); len(evs) != 0 {
		t.Fatalf("the frozen public stream moved: %+v", evs)
	}
	// Revoked: the engine tells the contest hub (cmd/podium's listeners;
	// the test server's engine only tells the board hub, so the test does).
	s.must(204, s.do("DELETE", "/v1/keys/"+id, adminKey, nil))
	s.srv.ContestHub().KeyRevoked(id)
	attempt("carol")
	evs, ended := live.rest(2 * time.Second)
	if !ended || len(evs) != 1 || evs[0].Type != "error" || evs[0].Data["code"] != "unauthenticated" {
		t.Fatalf("live stream after its key was revoked: %+v (ended %v)", evs, ended)
	}
	s.must(401, s.do("GET", "/v1/contests/ctf:f/stream?view=live", admin, nil))
}
