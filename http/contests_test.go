package http_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/stream"
)

// newContestServer is a server with contests, and the contest service.
func newContestServer(t *testing.T) (*server, *ctf.Service) {
	s, svc, _ := newContestServerStore(t)
	return s, svc
}

func newContestServerStore(t *testing.T) (*server, *ctf.Service, contest.Store) {
	t.Helper()
	var (
		svc *ctf.Service
		cs  contest.Store
	)
	s := newServerOpts(t, stream.Config{}, false, func(hc *podiumhttp.Config) {
		cs = hc.Store.(contest.Store)
		svc = contestService(t, hc.Engine)
	})
	return s, svc, cs
}

// contestService is the service of e's contests module (package ctf),
// which the server serves.
func contestService(t *testing.T, e *engine.Engine) *ctf.Service {
	t.Helper()
	for _, m := range e.Modules() {
		if c, ok := m.(*ctf.Module); ok && c.Service() != nil {
			return c.Service()
		}
	}
	t.Fatal("the engine has no contests module")
	return nil
}

func (s *server) key(body string) string {
	s.t.Helper()
	return s.must(201, s.do("POST", "/v1/keys", adminKey, body)).json(s.t)["key"].(string)
}

// line renders a standings line as rank:team:score.
func line(v any) string {
	m := v.(map[string]any)
	rank := "-"
	if r, ok := m["rank"].(float64); ok {
		rank = fmt.Sprint(r)
	}
	return fmt.Sprintf("%s:%s:%v", rank, m["team"], m["score"])
}

func lines(m map[string]any) string {
	var out []string
	for _, v := range m["standings"].([]any) {
		out = append(out, line(v))
	}
	return fmt.Sprint(out)
}

// stat renders a CTFtime task stat as points@time.
func stat(v any) string {
	m, _ := v.(map[string]any)
	p, _ := m["points"].(float64)
	t, _ := m["time"].(float64)
	return fmt.Sprintf("%d@%d", int64(p), int64(t))
}

// TestContestScenario runs a contest through the API: dynamic challenges
// (CTFd parabolic, static, rCTF), first bloods, a hidden team, a freeze,
// the reveal at the end, snapshots and the CTFtime export.
func TestContestScenario(t *testing.T) {
	s, svc, store := newContestServerStore(t)
	at := func(hhmm string) time.Time {
		t, _ := time.Parse("15:04", hhmm)
		return time.Date(2026, 11, 30, t.Hour(), t.Minute(), 0, 0, time.UTC)
	}
	setClock := func(hhmm string) { s.clock.Add(at(hhmm).Sub(s.clock.Now())) }
	judge := s.key(`{"name":"judge","scopes":["submit"],"boards":["ctf:"]}`)
	reader := s.key(`{"name":"reader","scopes":["read"]}`)

	const body = `{"title":"Finals","start":"2026-11-30T11:00:00Z","end":"2026-11-30T13:00:00Z",
		"freeze":"2026-11-30T12:30:00Z","first_blood":[10,5,3],"public":true}`
	c := s.must(201, s.do("PUT", "/v1/contests/ctf:finals", adminKey, body)).json(t)
	if c["state"] != "upcoming" || c["freeze"] != "2026-11-30T12:30:00.000Z" || c["revealed"] != false || c["blood_rule"] != "auto" {
		t.Fatalf("contest %v", c)
	}
	s.must(200, s.do("PUT", "/v1/contests/ctf:finals", adminKey, body))
	// Bad requests change nothing.
	for _, b := range []struct{ body, code string }{
		{`{"title":"x","start":"2026-11-30T11:00:00Z","end":"2026-11-30T13:00:00Z","colour":"red"}`, "invalid_argument"},
		{`{"start":"2026-11-30T11:00:00Z","end":"2026-11-30T10:00:00Z"}`, "invalid_argument"},
		{`{"start":"2026-11-30T11:00:00Z","end":"2026-11-30T13:00:00Z","freeze":"2026-11-30T14:00:00Z"}`, "invalid_argument"},
		{`{"start":"2026-11-30T11:00:00Z","end":"2026-11-30T13:00:00Z","first_blood":[10,5]}`, "invalid_argument"},
		{`{"start":"yesterday","end":"2026-11-30T13:00:00Z"}`, "invalid_argument"},
		{`{"start":"2026-11-30T11:00:00Z","end":"2026-11-30T13:00:00Z","blood_rule":"ctfd"}`, "invalid_argument"},
		{`{"start":"2026-11-30T11:00:00Z",`, "invalid_json"},
	} {
		if code := s.must(400, s.do("PUT", "/v1/contests/ctf:finals", adminKey, b.body)).errCode(t); code != b.code {
			t.Errorf("%s: %s, want %s", b.body, code, b.code)
		}
	}
	s.must(403, s.do("PUT", "/v1/contests/ctf:finals", judge, body))
	s.must(401, s.do("PUT", "/v1/contests/ctf:finals", "", body))
	if c := s.must(200, s.do("GET", "/v1/contests/ctf:finals", "", nil)).json(t); c["title"] != "Finals" || c["end"] != "2026-11-30T13:00:00.000Z" {
		t.Fatalf("a bad request changed the contest: %v", c)
	}

	for id, ch := range map[string]string{
		"web":    `{"name":"Web 1","category":"web","order":1,"scoring":{"function":"ctfd_logarithmic","value":500,"minimum":100,"decay":10}}`,
		"pwn":    `{"category":"pwn","order":2,"scoring":{"value":300}}`,
		"crypto": `{"category":"crypto","order":3,"scoring":{"function":"rctf","value":500,"minimum":100}}`,
	} {
		s.must(201, s.do("PUT", "/v1/contests/ctf:finals/challenges/"+id, adminKey, ch))
	}
	if code := s.must(400, s.do("PUT", "/v1/contests/ctf:finals/challenges/misc", adminKey,
		`{"scoring":{"function":"gzctf","value":1000,"min_rate":"0.25","difficulty":5}}`)).errCode(t); code != "invalid_argument" {
		t.Fatalf("a string min_rate: %s", code)
	}
	s.must(201, s.do("PUT", "/v1/contests/ctf:finals/challenges/misc", adminKey,
		`{"order":4,"scoring":{"function":"gzctf","value":1000,"min_rate":0.25,"difficulty":5}}`))
	s.must(404, s.do("PUT", "/v1/contests/nope/challenges/misc", adminKey, `{"scoring":{"value":1}}`))
	s.must(200, s.do("PUT", "/v1/players/staff", adminKey, `{"name":"Organisers","hidden":true}`))
	s.must(200, s.do("PUT", "/v1/players/alice", adminKey, `{"name":"Team Alice"}`))

	attempt := func(team, ch string, correct bool) resp {
		return s.do("POST", "/v1/contests/ctf:finals/attempts", judge, fmt.Sprintf(`{"team":%q,"challenge":%q,"correct":%v}`, team, ch, correct))
	}
	if code := s.must(422, attempt("alice", "web", true)).errCode(t); code != "unprocessable" {
		t.Fatalf("before the start: %s", code)
	}
	setClock("11:05")
	s.must(200, attempt("staff", "web", true))
	setClock("11:10")
	r := s.must(200, attempt("alice", "web", true)).json(t)
	if st := r["standing"].(map[string]any); line(st) != "1:alice:550" || st["name"] != "Team Alice" {
		t.Fatalf("first blood answer %v", r)
	}
	if code := s.must(409, attempt("alice", "web", true)).errCode(t); code != "conflict" {
		t.Fatalf("duplicate: %s", code)
	}
	s.must(404, attempt("alice", "nope", true))
	s.must(400, s.do("POST", "/v1/contests/ctf:finals/attempts", judge, `{"team":"alice","challenge":"web"}`))
	s.must(400, s.do("POST", "/v1/contests/ctf:finals/attempts", judge, `{"team":"","challenge":"web","correct":true}`))
	s.must(403, s.do("POST", "/v1/contests/ctf:finals/attempts", reader, `{"team":"x","challenge":"web","correct":true}`))
	setClock("11:20")
	if r := s.must(200, attempt("bob", "pwn", false)).json(t); r["standing"] != nil || r["attempt"].(map[string]any)["result"] != "wrong" {
		t.Fatalf("wrong attempt: %v", r)
	}
	s.must(200, attempt("bob", "web", true))
	setClock("11:30")
	s.must(200, attempt("bob", "pwn", true))
	setClock("12:00")
	s.must(200, attempt("carol", "crypto", true))
	setClock("12:40") // frozen
	s.must(200, attempt("carol", "web", true))
	setClock("12:45")
	s.must(200, attempt("alice", "pwn", true))

	// At the freeze: web 2 visible solves (496), crypto 1 of maxSolves 2
	// (213), pwn 1. Live: web 484, crypto 1 of 3 (314), pwn 300.
	const frozen, final = "[1:bob:851 2:alice:546 3:carol:234]", "[1:alice:847 2:carol:844 3:bob:838]"
	pub := s.must(200, s.do("GET", "/v1/contests/ctf:finals/standings", "", nil)).json(t)
	if got := lines(pub); got != frozen || pub["frozen"] != true || pub["view"] != "public" || pub["cutoff"] != "2026-11-30T12:30:00.000Z" {
		t.Fatalf("public standings %s %v, want %s", got, pub, frozen)
	}
	live := s.must(200, s.do("GET", "/v1/contests/ctf:finals/standings", adminKey, nil)).json(t)
	if got := lines(live); got != final || live["frozen"] != false {
		t.Fatalf("admin standings %s, want %s", got, final)
	}
	hidden := s.must(200, s.do("GET", "/v1/contests/ctf:finals/standings?include_hidden=true", adminKey, nil)).json(t)
	if got := lines(hidden); got != "[1:alice:847 2:carol:844 3:bob:838 -:staff:484]" {
		t.Fatalf("with hidden teams %s", got)
	}
	s.must(401, s.do("GET", "/v1/contests/ctf:finals/standings?view=live", "", nil))
	s.must(403, s.do("GET", "/v1/contests/ctf:finals/standings?view=live", judge, nil))
	s.must(403, s.do("GET", "/v1/contests/ctf:finals/standings?include_hidden=true", "", nil))
	s.must(400, s.do("GET", "/v1/contests/ctf:finals/standings?view=all", "", nil))
	s.must(400, s.do("GET", "/v1/contests/ctf:finals/standings?colour=red", "", nil))
	// A team sees its own live standing through the judge's key; the
	// public sees it frozen.
	own := s.must(200, s.do("GET", "/v1/contests/ctf:finals/standings/carol", judge, nil)).json(t)
	if st := own["standing"].(map[string]any); own["view"] != "live" || line(st) != "2:carol:844" || len(st["solves"].([]any)) != 2 {
		t.Fatalf("carol's own standing %v", own)
	}
	if st := s.must(200, s.do("GET", "/v1/contests/ctf:finals/standings/carol", "", nil)).json(t)["standing"].(map[string]any); line(st) != "3:carol:234" {
		t.Fatalf("carol's public standing %v", st)
	}
	if st := s.must(200, s.do("GET", "/v1/contests/ctf:finals/standings/staff", "", nil)).json(t)["standing"].(map[string]any); st["score"] != 0.0 {
		t.Fatalf("a hidden team's public standing %v", st)
	}
	chals := s.must(200, s.do("GET", "/v1/contests/ctf:finals/challenges", "", nil)).json(t)["challenges"].([]any)
	var got []string
	for _, c := range chals {
		m := c.(map[string]any)
		var fb []string
		for _, b := range m["first_bloods"].([]any) {
			fb = append(fb, b.(map[string]any)["team"].(string))
		}
		got = append(got, fmt.Sprintf("%s:%v:%v:%v", m["id"], m["value"], m["solves"], fb))
	}
	if fmt.Sprint(got) != "[web:496:2:[alice bob] pwn:300:1:[bob] crypto:213:1:[carol] misc:1000:0:[]]" {
		t.Fatalf("public challenges %v", got)
	}
	fbs := s.must(200, s.do("GET", "/v1/contests/ctf:finals/first-bloods", adminKey, nil)).json(t)["first_bloods"].([]any)
	if len(fbs) != 6 {
		t.Fatalf("live first bloods %v", fbs)
	}

	setClock("13:00")
	s.must(422, attempt("dave", "web", true))
	s.clock.Add(time.Minute)
	if err := svc.TakeSnapshots(context.Background()); err != nil {
		t.Fatal(err)
	}
	snaps := s.must(200, s.do("GET", "/v1/contests/ctf:finals/snapshots", "", nil)).json(t)["snapshots"].([]any)
	if len(snaps) != 18 || snaps[0] != "2026-11-30T11:05:00.000Z" || snaps[17] != "2026-11-30T12:30:00.000Z" {
		t.Fatalf("public snapshots (up to the freeze) %v", snaps)
	}
	snap := s.must(200, s.do("GET", "/v1/contests/ctf:finals/standings?at=2026-11-30T11:17:00Z", "", nil)).json(t)
	if got := lines(snap); got != "[1:alice:550]" || snap["at"] != "2026-11-30T11:15:00.000Z" {
		t.Fatalf("snapshot at 11:17: %s %v", got, snap)
	}
	s.must(403, s.do("GET", "/v1/contests/ctf:finals/standings?at=2026-11-30T13:00:00Z", "", nil))
	if c := s.must(200, s.do("GET", "/v1/contests/ctf:finals", "", nil)).json(t); c["state"] != "ended" {
		t.Fatalf("state after the end, not revealed: %v", c["state"])
	}
	if got := lines(s.must(200, s.do("GET", "/v1/contests/ctf:finals/standings", "", nil)).json(t)); got != frozen {
		t.Fatalf("public standings after the end, before the reveal: %s", got)
	}
	s.must(403, s.do("POST", "/v1/contests/ctf:finals/unfreeze", judge, nil))
	if c := s.must(200, s.do("POST", "/v1/contests/ctf:finals/unfreeze", adminKey, nil)).json(t); c["state"] != "final" || c["revealed"] != true {
		t.Fatalf("unfreeze: %v", c)
	}
	if got := lines(s.must(200, s.do("GET", "/v1/contests/ctf:finals/standings", "", nil)).json(t)); got != final {
		t.Fatalf("revealed standings %s, want %s", got, final)
	}
	end := s.must(200, s.do("GET", "/v1/contests/ctf:finals/standings?at=2026-11-30T13:00:00Z", "", nil)).json(t)
	if got := lines(end); got != final {
		t.Fatalf("final snapshot %s, want %s", got, final)
	}

	ct := s.must(200, s.do("GET", "/v1/contests/ctf:finals/ctftime", "", nil)).json(t)
	if fmt.Sprint(ct["tasks"]) != "[Web 1 pwn crypto misc]" {
		t.Fatalf("ctftime tasks %v", ct["tasks"])
	}
	first := ct["standings"].([]any)[0].(map[string]any)
	stats := first["taskStats"].(map[string]any)
	if first["pos"] != 1.0 || first["team"] != "Team Alice" || first["score"] != 847.0 || len(ct["standings"].([]any)) != 3 ||
		stat(stats["Web 1"]) != fmt.Sprintf("532@%d", at("11:10").Unix()) ||
		stat(stats["pwn"]) != fmt.Sprintf("315@%d", at("12:45").Unix()) ||
		first["lastAccept"] != float64(at("12:45").Unix()) {
		t.Fatalf("ctftime first line %v", first)
	}

	// Every attempt is logged, the refused ones too (malformed or
	// unauthorised requests are not attempts).
	log := s.must(200, s.do("GET", "/v1/contests/ctf:finals/attempts?limit=3", adminKey, nil)).json(t)
	if got := attemptLines(log); got != "[alice/web/closed/true staff/web/solved/true alice/web/solved/true]" {
		t.Fatalf("audit log %s", got)
	}
	rest := s.must(200, s.do("GET", fmt.Sprintf("/v1/contests/ctf:finals/attempts?after=%v", log["next_after"]), adminKey, nil)).json(t)
	if got := attemptLines(rest); got != "[alice/web/duplicate/true alice/nope/unknown_challenge/true bob/pwn/wrong/false bob/web/solved/true "+
		"bob/pwn/solved/true carol/crypto/solved/true carol/web/solved/true alice/pwn/solved/true dave/web/closed/true]" {
		t.Fatalf("rest of the audit log %s", got)
	}
	s.must(403, s.do("GET", "/v1/contests/ctf:finals/attempts", judge, nil))

	chart := s.must(200, s.do("GET", "/v1/contests/ctf:finals/chart?top=2", "", nil)).json(t)
	if series := chart["series"].([]any); len(series) != 2 || series[0].(map[string]any)["team"] != "alice" ||
		fmt.Sprint(series[0].(map[string]any)["points"]) != "[[2026-11-30T11:10:00.000Z 532] [2026-11-30T12:45:00.000Z 847]]" {
		t.Fatalf("chart %v", chart)
	}
	list := s.must(200, s.do("GET", "/v1/contests", "", nil)).json(t)["contests"].([]any)
	if len(list) != 1 {
		t.Fatalf("contests %v", list)
	}

	// The admin check recomputes every snapshot from the solves, and
	// reports one that does not match.
	if c := s.must(200, s.do("POST", "/v1/admin/check", adminKey, nil)).json(t); c["ok"] != true || len(c["contest_differences"].([]any)) != 0 {
		t.Fatalf("check: %v", c)
	}
	bad := `{"at":"2026-11-30T11:01:00Z","seq":0,"first_blood":[10,5,3],"hidden":[],"standings":[{"rank":1,"team":"mallory","score":9999,"solved":1,"last_solve_at":null}],"challenges":[]}`
	if _, err := store.PutSnapshot(context.Background(), "ctf:finals", at("11:01"), 0, []byte(bad)); err != nil {
		t.Fatal(err)
	}
	c = s.must(200, s.do("POST", "/v1/admin/check", adminKey, nil)).json(t)
	if diffs := c["contest_differences"].([]any); c["ok"] != false || len(diffs) != 1 {
		t.Fatalf("check after corrupting a snapshot: %v", c)
	}
}

// A contest that is not public is read with a read key of its prefix; to
// anyone else it is an unknown contest (404).
func TestContestPrivate(t *testing.T) {
	s, _ := newContestServer(t)
	s.must(201, s.do("PUT", "/v1/contests/quals", adminKey, `{"start":"2026-11-30T11:00:00Z","end":"2026-11-30T13:00:00Z"}`))
	other := s.key(`{"name":"other","scopes":["read"],"boards":["ctf:"]}`)
	reader := s.key(`{"name":"reader","scopes":["read"],"boards":["qu"]}`)
	s.must(404, s.do("GET", "/v1/contests/quals/standings", "", nil))
	s.must(404, s.do("GET", "/v1/contests/quals/standings", other, nil))
	s.must(200, s.do("GET", "/v1/contests/quals/standings", reader, nil))
	s.must(404, s.do("GET", "/v1/contests/nope/standings", reader, nil))
	if list := s.must(200, s.do("GET", "/v1/contests", "", nil)).json(t)["contests"].([]any); len(list) != 0 {
		t.Fatalf("anonymous list %v", list)
	}
	if list := s.must(200, s.do("GET", "/v1/contests", reader, nil)).json(t)["contests"].([]any); len(list) != 1 {
		t.Fatalf("reader's list %v", list)
	}
}

// Contest standings stream like a board: a snapshot, then deltas as teams
// solve; after the freeze the public stream stays still, and the reveal
// sends what happened since.
func TestContestStream(t *testing.T) {
	s, _ := newContestServer(t)
	t.Cleanup(s.srv.ContestHub().Close)
	s.must(201, s.do("PUT", "/v1/contests/live", adminKey, `{"title":"Live","start":"2026-11-30T09:00:00Z",
		"end":"2026-11-30T12:00:00Z","freeze":"2026-11-30T11:00:00Z","public":true}`))
	s.must(201, s.do("PUT", "/v1/contests/live/challenges/web", adminKey, `{"scoring":{"value":100}}`))
	s.must(200, s.do("PUT", "/v1/players/alice", adminKey, `{"name":"Team Alice"}`))
	attempt := func(team string) {
		s.must(200, s.do("POST", "/v1/contests/live/attempts", adminKey, fmt.Sprintf(`{"team":%q,"challenge":"web","correct":true}`, team)))
	}
	attempt("alice") // 10:00
	c := s.openSSE("/v1/contests/live/stream?limit=10", "")
	ev := c.next(5 * time.Second)
	entries := ev.Data["entries"].([]any)
	if ev.Type != "snapshot" || ev.Data["board"] != "live" || len(entries) != 1 ||
		entries[0].(map[string]any)["name"] != "Team Alice" || fmt.Sprint(entries[0].(map[string]any)["keys"]) != "[100]" {
		t.Fatalf("first event %+v", ev)
	}
	attempt("bob")
	ev = c.next(5 * time.Second)
	if ev.Type != "delta" || ev.Data["seq"] != 2.0 || ev.Data["total"] != 2.0 {
		t.Fatalf("after a solve: %+v", ev)
	}
	s.clock.Add(90 * time.Minute) // 11:30, frozen
	attempt("carol")
	s.must(200, s.do("GET", "/v1/contests/live/standings", "", nil)) // the public view is read and stays still
	select {
	case ev := <-c.events:
		t.Fatalf("the frozen stream moved: %+v", ev)
	case <-time.After(600 * time.Millisecond):
	}
	s.clock.Add(time.Hour)
	s.must(200, s.do("POST", "/v1/contests/live/unfreeze", adminKey, nil))
	ev = c.next(5 * time.Second)
	if ev.Type != "delta" || ev.Data["seq"] != 3.0 || ev.Data["total"] != 3.0 {
		t.Fatalf("after the reveal: %+v", ev)
	}
	// Hiding a team restates the window without it (no new solve: a
	// snapshot), within a round of the service's player watch.
	s.must(200, s.do("PUT", "/v1/players/bob", adminKey, `{"hidden":true}`))
	ev = c.next(5 * time.Second)
	if ev.Type != "snapshot" || ev.Data["total"] != 2.0 || len(ev.Data["entries"].([]any)) != 2 {
		t.Fatalf("after hiding bob: %+v", ev)
	}
	// The page is served, with its script and style.
	if r := s.must(200, s.do("GET", "/contests/live", "", nil)); !strings.Contains(string(r.body), "/assets/contest.js") {
		t.Fatalf("page %s", r.body)
	}
	s.must(404, s.do("GET", "/contests/nope", "", nil))
	s.must(200, s.do("GET", "/assets/contest.js", "", nil))
	s.must(200, s.do("GET", "/assets/contest.css", "", nil))
}

// A judge that retries with the same Idempotency-Key gets the first
// answer, marked Idempotent-Replayed.
func TestContestAttemptIdempotency(t *testing.T) {
	s, _ := newContestServer(t)
	s.must(201, s.do("PUT", "/v1/contests/c", adminKey, `{"start":"2026-11-30T09:00:00Z","end":"2026-11-30T12:00:00Z"}`))
	s.must(201, s.do("PUT", "/v1/contests/c/challenges/web", adminKey, `{"scoring":{"value":100}}`))
	const body = `{"team":"alice","challenge":"web","correct":true}`
	a := s.must(200, s.do("POST", "/v1/contests/c/attempts", adminKey, body, "Idempotency-Key", "v-1"))
	b := s.must(200, s.do("POST", "/v1/contests/c/attempts", adminKey, body, "Idempotency-Key", "v-1"))
	if b.header.Get("Idempotent-Replayed") != "true" || a.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("replay headers %q %q", a.header.Get("Idempotent-Replayed"), b.header.Get("Idempotent-Replayed"))
	}
	if fmt.Sprint(a.json(t)["attempt"]) != fmt.Sprint(b.json(t)["attempt"]) {
		t.Fatalf("answers differ: %s / %s", a.body, b.body)
	}
	s.must(409, s.do("POST", "/v1/contests/c/attempts", adminKey, body))
	s.must(409, s.do("POST", "/v1/contests/c/attempts", adminKey, `{"team":"bob","challenge":"web","correct":true}`, "Idempotency-Key", "v-1"))
	s.must(400, s.do("POST", "/v1/contests/c/attempts", adminKey, body, "Idempotency-Key", strings.Repeat("x", 256)))
}

// attemptLines renders an audit log page as team/challenge/result/correct.
func attemptLines(m map[string]any) string {
	out := []string{}
	for _, a := range m["attempts"].([]any) {
		a := a.(map[string]any)
		out = append(out, fmt.Sprintf("%s/%s/%s/%v", a["team"], a["challenge"], a["result"], a["correct"]))
	}
	return fmt.Sprint(out)
}
