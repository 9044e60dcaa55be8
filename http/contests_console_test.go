package http_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// What a CTF organiser does from the console (issue 18, items 13 to 15):
// reveal and re-freeze, change a challenge field by field, see what a
// scoring change does before it applies, hide a challenge, read the
// attempt log filtered and the solve grid. The server's clock starts at
// 2026-11-30T10:00Z.

const consoleContest = `{"title":"CTF","start":"2026-11-30T09:00:00Z","end":"2026-11-30T12:00:00Z","freeze":"2026-11-30T11:00:00Z","public":true}`

func contestState(t *testing.T, s *server) (state string, revealed bool) {
	t.Helper()
	c := s.must(200, s.do("GET", "/v1/contests/ctf", adminKey, nil)).json(t)
	return c["state"].(string), c["revealed"].(bool)
}

// An unfreeze before the end is refused unless forced; a re-freeze undoes
// a reveal before the end and is refused after it.
func TestContestUnfreezeBeforeEnd(t *testing.T) {
	s, _ := newContestServer(t)
	judge := s.key(`{"name":"judge","scopes":["submit"],"boards":["ctf"]}`)
	s.must(201, s.do("PUT", "/v1/contests/ctf", adminKey, consoleContest))
	s.must(201, s.do("PUT", "/v1/contests/ctf/challenges/web", adminKey, `{"scoring":{"value":100}}`))
	solve := func(team string) {
		s.must(200, s.do("POST", "/v1/contests/ctf/attempts", judge, fmt.Sprintf(`{"team":%q,"challenge":"web","correct":true}`, team)))
	}
	public := func() string {
		return lines(s.must(200, s.do("GET", "/v1/contests/ctf/standings", "", nil)).json(t))
	}
	solve("alice")

	// Running, the freeze ahead: a plain unfreeze would make the freeze
	// never apply.
	r := s.must(409, s.do("POST", "/v1/contests/ctf/unfreeze", adminKey, nil))
	if r.errCode(t) != "conflict" || !strings.Contains(string(r.body), "force") {
		t.Fatalf("unfreeze before the end: %s", r.body)
	}
	if st, rev := contestState(t, s); st != "running" || rev {
		t.Fatalf("a refused unfreeze changed the contest: %s revealed=%v", st, rev)
	}
	s.clock.Add(90 * time.Minute) // 11:30, frozen
	solve("bob")
	if got := public(); got != "[1:alice:100]" {
		t.Fatalf("public while frozen: %s", got)
	}
	s.must(409, s.do("POST", "/v1/contests/ctf/unfreeze", adminKey, `{}`))
	s.must(409, s.do("POST", "/v1/contests/ctf/unfreeze", adminKey, `{"force":false}`))
	s.must(400, s.do("POST", "/v1/contests/ctf/unfreeze", adminKey, `{"force":"yes"}`))
	s.must(400, s.do("POST", "/v1/contests/ctf/unfreeze", adminKey, `{"revealed":true}`))
	s.must(403, s.do("POST", "/v1/contests/ctf/unfreeze", judge, `{"force":true}`))
	if got := public(); got != "[1:alice:100]" {
		t.Fatalf("public after refused unfreezes: %s", got)
	}
	// Forced: revealed mid-contest.
	if c := s.must(200, s.do("POST", "/v1/contests/ctf/unfreeze", adminKey, `{"force":true}`)).json(t); c["revealed"] != true || c["state"] != "running" {
		t.Fatalf("forced unfreeze: %v", c)
	}
	if got := public(); got != "[1:alice:100 2:bob:100]" {
		t.Fatalf("public after the forced reveal: %s", got)
	}
	// A re-PUT keeps it revealed; a re-freeze freezes the public view again.
	s.must(200, s.do("PUT", "/v1/contests/ctf", adminKey, consoleContest))
	if _, rev := contestState(t, s); !rev {
		t.Fatal("a re-PUT hid the reveal")
	}
	s.must(403, s.do("POST", "/v1/contests/ctf/refreeze", judge, nil))
	s.must(400, s.do("POST", "/v1/contests/ctf/refreeze", adminKey, `{"force":true}`))
	s.must(404, s.do("POST", "/v1/contests/nope/refreeze", adminKey, nil))
	if c := s.must(200, s.do("POST", "/v1/contests/ctf/refreeze", adminKey, nil)).json(t); c["revealed"] != false || c["state"] != "frozen" {
		t.Fatalf("refreeze: %v", c)
	}
	if got := public(); got != "[1:alice:100]" {
		t.Fatalf("public after the re-freeze: %s", got)
	}
	s.must(200, s.do("POST", "/v1/contests/ctf/refreeze", adminKey, nil)) // not revealed: nothing changes

	// From the end on, a plain unfreeze reveals, and there is no going back.
	s.clock.Add(time.Hour) // 12:30
	if st, rev := contestState(t, s); st != "ended" || rev {
		t.Fatalf("after the end: %s revealed=%v", st, rev)
	}
	if c := s.must(200, s.do("POST", "/v1/contests/ctf/unfreeze", adminKey, nil)).json(t); c["state"] != "final" {
		t.Fatalf("unfreeze after the end: %v", c)
	}
	if r := s.must(409, s.do("POST", "/v1/contests/ctf/refreeze", adminKey, nil)); r.errCode(t) != "conflict" {
		t.Fatalf("refreeze after the end: %s", r.body)
	}
	if st, rev := contestState(t, s); st != "final" || !rev {
		t.Fatalf("a refused refreeze changed the contest: %s revealed=%v", st, rev)
	}
	s.must(200, s.do("POST", "/v1/contests/ctf/unfreeze", adminKey, nil))
}

// A challenge PUT keeps the fields it leaves out; a scoring change on a
// solved challenge says what it does and needs ?confirm=true.
func TestChallengePutKeepsFields(t *testing.T) {
	s, _ := newContestServer(t)
	judge := s.key(`{"name":"judge","scopes":["submit"],"boards":["ctf"]}`)
	s.must(201, s.do("PUT", "/v1/contests/ctf", adminKey, consoleContest))
	s.must(201, s.do("PUT", "/v1/contests/ctf/challenges/web", adminKey,
		`{"name":"Web 1","category":"web","order":2,"scoring":{"function":"ctfd_linear","value":500,"minimum":100,"decay":100}}`))
	s.must(201, s.do("PUT", "/v1/contests/ctf/challenges/pwn", adminKey, `{"scoring":{"value":150}}`))
	get := func() string {
		t.Helper()
		for _, c := range s.must(200, s.do("GET", "/v1/contests/ctf/challenges", adminKey, nil)).json(t)["challenges"].([]any) {
			m := c.(map[string]any)
			if m["id"] == "web" {
				sc := m["scoring"].(map[string]any)
				return fmt.Sprintf("%v/%v/%v/%v %v-%v-%v-%v value %v", m["name"], m["category"], m["order"], m["hidden"],
					sc["function"], sc["value"], sc["minimum"], sc["decay"], m["value"])
			}
		}
		return "none"
	}
	if r := s.must(200, s.do("PUT", "/v1/contests/ctf/challenges/web", adminKey, `{"category":"misc"}`)).json(t); r["name"] != "Web 1" {
		t.Fatalf("answer of a partial PUT: %v", r)
	}
	if got, want := get(), "Web 1/misc/2/false ctfd_linear-500-100-100 value 500"; got != want {
		t.Fatalf("after {category}: %s, want %s", got, want)
	}
	// Without a function, the parameters given change the stored scoring.
	s.must(200, s.do("PUT", "/v1/contests/ctf/challenges/web", adminKey, `{"scoring":{"value":400}}`))
	if got, want := get(), "Web 1/misc/2/false ctfd_linear-400-100-100 value 400"; got != want {
		t.Fatalf("after {scoring:{value}}: %s, want %s", got, want)
	}
	// A patch that leaves an invalid challenge changes nothing.
	s.must(400, s.do("PUT", "/v1/contests/ctf/challenges/web", adminKey, `{"scoring":{"minimum":900}}`))
	s.must(400, s.do("PUT", "/v1/contests/ctf/challenges/web", adminKey, `{"scoring":{"function":"static","value":50,"decay":3}}`))
	s.must(400, s.do("PUT", "/v1/contests/ctf/challenges/web", adminKey, `{"name":7}`))

	for _, team := range []string{"alice", "bob"} {
		s.must(200, s.do("POST", "/v1/contests/ctf/attempts", judge, fmt.Sprintf(`{"team":%q,"challenge":"web","correct":true}`, team)))
	}
	s.must(200, s.do("POST", "/v1/contests/ctf/attempts", judge, `{"team":"bob","challenge":"pwn","correct":true}`))
	standings := func() string {
		return lines(s.must(200, s.do("GET", "/v1/contests/ctf/standings", adminKey, nil)).json(t))
	}
	const before = "[1:bob:450 2:alice:300]" // web 300 after 2 solves (400 - 100)
	if got := standings(); got != before {
		t.Fatalf("standings: %s, want %s", got, before)
	}
	// Names and order move no score: no confirmation.
	s.must(200, s.do("PUT", "/v1/contests/ctf/challenges/web", adminKey, `{"name":"Web one","order":1}`))
	// A scoring change does: refused, with what it would do.
	r := s.must(409, s.do("PUT", "/v1/contests/ctf/challenges/web", adminKey, `{"scoring":{"value":700}}`))
	if msg := string(r.body); r.errCode(t) != "conflict" || !strings.Contains(msg, "from 300 to 600") || !strings.Contains(msg, "bob 450 \u2192 750") ||
		!strings.Contains(msg, "confirm=true") {
		t.Fatalf("unconfirmed scoring change: %s", r.body)
	}
	p := s.must(200, s.do("PUT", "/v1/contests/ctf/challenges/web?preview=true", adminKey, `{"scoring":{"value":700}}`)).json(t)
	if v := p["value"].(map[string]any); v["old"] != 300.0 || v["new"] != 600.0 || p["solves"] != 2.0 || p["moves_standings"] != true ||
		p["new"].(map[string]any)["scoring"].(map[string]any)["value"] != 700.0 || p["old"].(map[string]any)["name"] != "Web one" {
		t.Fatalf("preview: %v", p)
	}
	var teams []string
	for _, tc := range p["teams"].([]any) {
		m := tc.(map[string]any)
		teams = append(teams, fmt.Sprintf("%v:%v>%v:%v>%v", m["team"], m["old_score"], m["new_score"], m["old_rank"], m["new_rank"]))
	}
	if got := strings.Join(teams, " "); got != "bob:450>750:1>1 alice:300>600:2>2" {
		t.Fatalf("preview teams: %s", got)
	}
	if got := standings(); got != before {
		t.Fatalf("a refused or previewed change moved the standings: %s", got)
	}
	s.must(400, s.do("PUT", "/v1/contests/ctf/challenges/web?preview=true&confirm=true", adminKey, `{"scoring":{"value":700}}`))
	s.must(400, s.do("PUT", "/v1/contests/ctf/challenges/web?confirm=maybe", adminKey, `{"scoring":{"value":700}}`))
	s.must(200, s.do("PUT", "/v1/contests/ctf/challenges/web?confirm=true", adminKey, `{"scoring":{"value":700}}`))
	if got := standings(); got != "[1:bob:750 2:alice:600]" {
		t.Fatalf("after the confirmed change: %s", got)
	}
	// A function replaces the whole scoring.
	s.must(200, s.do("PUT", "/v1/contests/ctf/challenges/web?confirm=true", adminKey, `{"scoring":{"function":"static","value":50}}`))
	if got, want := get(), "Web one/misc/1/false static-50-<nil>-<nil> value 50"; got != want {
		t.Fatalf("after a new function: %s, want %s", got, want)
	}
	// The bug of issue 18: {"category"} on a solved challenge kept scores.
	s.must(200, s.do("PUT", "/v1/contests/ctf/challenges/web", adminKey, `{"category":"web"}`))
	if got := standings(); got != "[1:bob:200 2:alice:50]" {
		t.Fatalf("after a category change: %s", got)
	}
}

// A hidden challenge is out of the public listing and the standings, and
// attempts on it are refused; hiding a solved one needs a confirmation.
func TestChallengeHidden(t *testing.T) {
	s, _ := newContestServer(t)
	judge := s.key(`{"name":"judge","scopes":["submit"],"boards":["ctf"]}`)
	s.must(201, s.do("PUT", "/v1/contests/ctf", adminKey, consoleContest))
	s.must(201, s.do("PUT", "/v1/contests/ctf/challenges/web", adminKey, `{"scoring":{"value":100}}`))
	if c := s.must(201, s.do("PUT", "/v1/contests/ctf/challenges/draft", adminKey, `{"hidden":true,"scoring":{"value":500}}`)).json(t); c["hidden"] != true {
		t.Fatalf("hidden challenge: %v", c)
	}
	ids := func(key string) string {
		var out []string
		for _, c := range s.must(200, s.do("GET", "/v1/contests/ctf/challenges", key, nil)).json(t)["challenges"].([]any) {
			m := c.(map[string]any)
			out = append(out, fmt.Sprintf("%v:%v:%v", m["id"], m["hidden"], m["value"]))
		}
		return strings.Join(out, " ")
	}
	if got := ids(""); got != "web:false:100" {
		t.Fatalf("public challenges: %s", got)
	}
	if got := ids(adminKey); got != "draft:true:500 web:false:100" {
		t.Fatalf("admin challenges: %s", got)
	}
	attempt := func(team, ch string) resp {
		return s.do("POST", "/v1/contests/ctf/attempts", judge, fmt.Sprintf(`{"team":%q,"challenge":%q,"correct":true}`, team, ch))
	}
	s.must(404, attempt("alice", "draft"))
	s.must(200, attempt("alice", "web"))
	// Shown (no solves: no confirmation), solved, then hidden again.
	s.must(200, s.do("PUT", "/v1/contests/ctf/challenges/draft", adminKey, `{"hidden":false}`))
	s.must(200, attempt("bob", "draft"))
	standings := func() string {
		return lines(s.must(200, s.do("GET", "/v1/contests/ctf/standings", "", nil)).json(t))
	}
	if got := standings(); got != "[1:bob:500 2:alice:100]" {
		t.Fatalf("standings: %s", got)
	}
	r := s.must(409, s.do("PUT", "/v1/contests/ctf/challenges/draft", adminKey, `{"hidden":true}`))
	if !strings.Contains(string(r.body), "hiding it takes its points") {
		t.Fatalf("hiding a solved challenge: %s", r.body)
	}
	s.must(200, s.do("PUT", "/v1/contests/ctf/challenges/draft?confirm=true", adminKey, `{"hidden":true}`))
	if got := standings(); got != "[1:alice:100]" { // bob has no counted solve
		t.Fatalf("standings with draft hidden: %s", got)
	}
	s.must(404, attempt("carol", "draft"))
	s.must(200, s.do("PUT", "/v1/contests/ctf/challenges/draft?confirm=true", adminKey, `{"hidden":false}`))
	if got := standings(); got != "[1:bob:500 2:alice:100]" {
		t.Fatalf("standings with draft shown again: %s", got)
	}
}

// The attempt log filters by team, challenge and verdict; the standings
// carry each team's solves on request (the console's solve grid).
func TestContestAttemptFiltersAndSolves(t *testing.T) {
	s, _ := newContestServer(t)
	judge := s.key(`{"name":"judge","scopes":["submit"],"boards":["ctf"]}`)
	s.must(201, s.do("PUT", "/v1/contests/ctf", adminKey, consoleContest))
	s.must(201, s.do("PUT", "/v1/contests/ctf/challenges/web", adminKey, `{"scoring":{"value":100}}`))
	s.must(201, s.do("PUT", "/v1/contests/ctf/challenges/pwn", adminKey, `{"scoring":{"value":200}}`))
	for _, a := range []string{"alice/web/false", "alice/web/true", "bob/web/true", "bob/pwn/false", "alice/pwn/true"} {
		p := strings.Split(a, "/")
		s.must(200, s.do("POST", "/v1/contests/ctf/attempts", judge, fmt.Sprintf(`{"team":%q,"challenge":%q,"correct":%s}`, p[0], p[1], p[2])))
	}
	read := func(q string) (string, float64) {
		t.Helper()
		m := s.must(200, s.do("GET", "/v1/contests/ctf/attempts?"+q, adminKey, nil)).json(t)
		return attemptLines(m), m["next_after"].(float64)
	}
	for q, want := range map[string]string{
		"team=alice":                 "[alice/web/wrong/false alice/web/solved/true alice/pwn/solved/true]",
		"challenge=web&correct=true": "[alice/web/solved/true bob/web/solved/true]",
		"correct=false":              "[alice/web/wrong/false bob/pwn/wrong/false]",
		"team=bob&challenge=pwn":     "[bob/pwn/wrong/false]",
		"team=carol":                 "[]",
	} {
		if got, _ := read(q); got != want {
			t.Errorf("?%s: %s, want %s", q, got, want)
		}
	}
	// Pages: next_after is the last entry looked at; the end when it
	// stops moving.
	got, next := read("team=alice&limit=2")
	if got != "[alice/web/wrong/false alice/web/solved/true]" || next != 2 {
		t.Fatalf("first page: %s next %v", got, next)
	}
	got, next = read(fmt.Sprintf("team=alice&limit=2&after=%v", next))
	if got != "[alice/pwn/solved/true]" || next != 5 {
		t.Fatalf("second page: %s next %v", got, next)
	}
	if got, next = read("team=alice&after=5"); got != "[]" || next != 5 {
		t.Fatalf("past the end: %s next %v", got, next)
	}
	s.must(400, s.do("GET", "/v1/contests/ctf/attempts?correct=perhaps", adminKey, nil))

	m := s.must(200, s.do("GET", "/v1/contests/ctf/standings?solves=true", adminKey, nil)).json(t)
	var grid []string
	for _, l := range m["standings"].([]any) {
		line := l.(map[string]any)
		for _, sv := range line["solves"].([]any) {
			grid = append(grid, fmt.Sprintf("%v/%v", line["team"], sv.(map[string]any)["challenge"]))
		}
	}
	if got := strings.Join(grid, " "); got != "alice/web alice/pwn bob/web" {
		t.Fatalf("solve grid: %s", got)
	}
	if l := s.must(200, s.do("GET", "/v1/contests/ctf/standings", adminKey, nil)).json(t)["standings"].([]any)[0].(map[string]any); l["solves"] != nil {
		t.Fatalf("solves without ?solves=true: %v", l)
	}
	s.must(400, s.do("GET", "/v1/contests/ctf/standings?solves=true&at=2026-11-30T10:00:00Z", adminKey, nil))
}
