package http_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/getkin/kin-openapi/openapi3"
)

// specClient makes requests through a specChecker.
type specClient struct {
	t   *testing.T
	s   *server
	chk *specChecker
	c   *http.Client
}

func (c *specClient) do(method, path, key, body string, hdr ...string) resp {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, c.s.url+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.c.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// must is do, failing unless the status is want.
func (c *specClient) must(want int, method, path, key, body string, hdr ...string) map[string]any {
	c.t.Helper()
	r := c.do(method, path, key, body, hdr...)
	if r.status != want {
		c.t.Fatalf("%s %s: %d, want %d: %s", method, path, r.status, want, r.body)
	}
	if len(r.body) == 0 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		return nil
	}
	return r.json(c.t)
}

// fails is do, failing unless the answer is the error status/code.
func (c *specClient) fails(status int, code, method, path, key, body string, hdr ...string) {
	c.t.Helper()
	r := c.do(method, path, key, body, hdr...)
	if r.status != status || r.errCode(c.t) != code {
		c.t.Fatalf("%s %s: %d %s, want %d %s", method, path, r.status, r.body, status, code)
	}
}

// sse opens a stream, reads its first event, runs then (which should
// cause more), reads until it has n events, and closes it (which checks
// them all); it returns the events' names.
func (c *specClient) sse(path, key string, n int, then func()) []string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", c.s.url+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := c.c.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		c.t.Fatalf("%s: %d", path, res.StatusCode)
	}
	var names []string
	sc := bufio.NewScanner(res.Body)
	for len(names) < n && sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			names = append(names, name)
			if len(names) == 1 && then != nil {
				then()
			}
		}
	}
	// read the rest of the last event, up to its blank line
	for sc.Scan() && sc.Text() != "" {
	}
	if len(names) < n {
		c.t.Fatalf("%s: events %v, want %d", path, names, n)
	}
	return names
}

// TestOpenAPIScenario runs a realistic session over every endpoint, the
// error answers included, through a specChecker: every request the server
// accepts and every answer must match openapi.yaml, and so must every
// stream event and WebSocket message.
func TestOpenAPIScenario(t *testing.T) {
	s := newSpecServer(t)
	chk := newSpecChecker(t)
	c := &specClient{t: t, s: s, chk: chk, c: chk.client()}
	A := adminKey

	// Service, pages, the spec itself.
	c.must(200, "GET", "/healthz", "", "")
	c.must(200, "GET", "/readyz", "", "")
	c.must(200, "GET", "/metrics", "", "")
	c.must(200, "GET", "/v1/openapi.json", "", "")
	c.must(200, "GET", "/openapi.json", "", "")
	c.must(200, "GET", "/", "", "")
	c.must(200, "GET", "/v1/client.js", "", "")
	c.must(200, "GET", "/admin", "", "")
	c.must(200, "GET", "/assets/app.css", "", "")
	c.must(404, "GET", "/boards/nope", "", "")

	// Boards, scores, reads.
	c.must(201, "PUT", "/v1/boards/ms:expert", A, msBoard)
	c.must(200, "PUT", "/v1/boards/ms:expert", A, `{"title":"Expert (standard)","meta":{"level":3}}`)
	c.must(201, "PUT", "/v1/boards/ms:labelled", A, `{"keys":[{"name":"time_ms","order":"asc","label":"Time","format":"duration_ms","min":1000,"max":3600000}],"public":true,"evidence":{"public":true,"max_events":100},"quota":{"max":2}}`)
	c.must(201, "PUT", "/v1/boards/ms:daily", A, `{"keys":[{"name":"points","order":"desc"}],"mode":"sum","reset":{"every":"day","tz":"Europe/Paris"},"public":true}`)
	c.must(201, "PUT", "/v1/boards/t:beg", A, `{"keys":[{"name":"time_ms","order":"asc"}],"mode":"best_k","keep":3,"public":true}`)
	c.must(201, "PUT", "/v1/boards/t:sum", A, `{"keys":[{"name":"time_ms","order":"asc"}],"public":true,"aggregate":{"kind":"best_k_sum","require_all":false,"sources":[{"board":"t:beg","k":2,"fill":[10000]}]}}`)
	c.must(201, "PUT", "/v1/boards/secret", A, `{"keys":[{"name":"points","order":"desc"}],"public":false,"player_submit":true}`)
	c.must(201, "PUT", "/v1/boards/tight", A, `{"keys":[{"name":"points","order":"desc"}],"public":true}`)
	c.must(200, "GET", "/boards/ms:expert", "", "")
	c.must(200, "GET", "/v1/boards", "", "")
	c.must(200, "GET", "/v1/boards/ms:daily", "", "")
	c.must(200, "POST", "/v1/boards/ms:expert/scores", A, `{"player":"alice","keys":[41234,150],"meta":{"replay":"r-9f2"}}`)
	c.must(200, "POST", "/v1/boards/ms:expert/scores", A, `{"player":"bob","keys":[40000,100]}`, "Idempotency-Key", "bob-1")
	c.must(200, "POST", "/v1/boards/ms:expert/scores", A, `{"player":"bob","keys":[40000,100]}`, "Idempotency-Key", "bob-1")
	c.fails(409, "conflict", "POST", "/v1/boards/ms:expert/scores", A, `{"player":"bob","keys":[1,1]}`, "Idempotency-Key", "bob-1")
	c.must(200, "POST", "/v1/boards/ms:expert/scores", A, `{"player":"alice","keys":[39000,90]}`)
	c.must(200, "POST", "/v1/boards/ms:daily/scores", A, `{"player":"carol","score":5}`)
	for i, v := range []int{5000, 4000, 3000, 6000} {
		c.must(200, "POST", "/v1/boards/t:beg/scores", A, fmt.Sprintf(`{"player":"p%d","score":%d}`, i%2, v))
	}
	c.must(200, "POST", "/v1/scores", A, `{"scores":[{"board":"ms:expert","player":"dave","keys":[50000,10]},{"board":"nope","player":"x","score":1},{"board":"ms:daily","player":"carol","score":9223372036854775807}]}`)
	c.fails(422, "unprocessable", "POST", "/v1/boards/ms:daily/scores", A, `{"player":"carol","score":9223372036854775807}`)
	c.must(200, "PUT", "/v1/players/bob", A, `{"name":"Bob B.","meta":{"country":"fr"}}`)
	c.must(200, "GET", "/v1/players/bob", A, "")
	c.must(200, "GET", "/v1/boards/ms:expert/entries?limit=10&offset=0", "", "")
	c.must(200, "GET", "/v1/boards/ms:expert/entries?players=alice,bob", "", "")
	c.must(200, "GET", "/v1/boards/t:beg/entries", "", "")
	c.must(200, "GET", "/v1/boards/t:sum/entries", "", "")
	c.must(200, "GET", "/v1/boards/ms:expert/entries/alice", "", "")
	c.must(200, "GET", "/v1/boards/t:beg/entries/p0?period=current", "", "")
	c.must(200, "GET", "/v1/boards/ms:expert/entries/bob/around?radius=1", "", "")
	c.must(200, "GET", "/v1/boards/ms:daily/periods", "", "")
	c.must(200, "GET", "/v1/boards/ms:daily/entries?period=previous", "", "")
	c.must(200, "PUT", "/v1/players/dave", A, `{"hidden":true}`)
	if e := c.must(200, "GET", "/v1/boards/ms:expert/entries?include_hidden=true", A, "")["entries"].([]any); len(e) != 3 || e[2].(map[string]any)["hidden"] != true {
		t.Fatalf("entries with hidden players: %v", e)
	}
	c.must(200, "PUT", "/v1/players/dave", A, `{"hidden":false}`)

	// Moderation: held submissions, decisions, freezes, history.
	c.must(201, "PUT", "/v1/boards/mod", A, `{"keys":[{"name":"points","order":"desc"}],"public":true,"review":{"hold":"all"}}`)
	mods := c.must(201, "POST", "/v1/keys", A, `{"name":"mods","scopes":["review"],"boards":["mod"]}`)["key"].(string)
	held := c.must(202, "POST", "/v1/boards/mod/scores", A, `{"player":"alice","score":10}`, "Idempotency-Key", "mod-1")["id"].(string)
	c.must(202, "POST", "/v1/boards/mod/scores", A, `{"player":"alice","score":10}`, "Idempotency-Key", "mod-1")
	c.must(200, "POST", "/v1/scores", A, `{"scores":[{"board":"mod","player":"bob","score":20}]}`)
	items := c.must(200, "GET", "/v1/review?board=mod&status=pending&limit=10", mods, "")["items"].([]any)
	if len(items) != 2 {
		t.Fatalf("review queue: %v", items)
	}
	other := items[0].(map[string]any)["id"].(string)
	if other == held {
		other = items[1].(map[string]any)["id"].(string)
	}
	c.must(200, "GET", "/v1/review/"+held, mods, "")
	c.must(200, "POST", "/v1/review/"+held+"/approve", mods, `{"reason":"replay checked"}`)
	c.fails(400, "invalid_argument", "POST", "/v1/review/"+other+"/reject", mods, `{}`)
	c.must(200, "POST", "/v1/review/"+other+"/reject", mods, `{"reason":"spliced replay"}`)
	c.fails(409, "conflict", "POST", "/v1/review/"+other+"/reject", mods, `{"reason":"again"}`)
	c.must(200, "GET", "/v1/review?board=mod&status=all", mods, "")
	c.must(200, "POST", "/v1/players/carol/freeze", A, `{"reason":"reports of a macro"}`)
	c.must(200, "GET", "/v1/players/carol/freeze", mods, "") // a moderator of some boards reads a freeze of every board
	c.must(200, "GET", "/v1/players/carol/freeze", A, "")
	c.must(202, "POST", "/v1/boards/ms:daily/scores", A, `{"player":"carol","score":1}`)
	c.must(200, "POST", "/v1/players/carol/unfreeze", A, "")
	c.fails(404, "not_found", "POST", "/v1/players/carol/unfreeze", A, "")
	c.must(200, "GET", "/v1/players/carol/freeze", A, "")
	c.must(200, "GET", "/v1/boards/mod/entries/alice/history?limit=5", A, "")
	c.must(200, "GET", "/v1/boards/ms:expert/entries/alice/history", "", "")

	// Exports, and evidence.
	c.export("/v1/boards/ms:expert/export?format=jsonl", "", "ExportHead", "Entry", "ExportEnd")
	c.export("/v1/boards/t:beg/export?format=csv&period=all", "", "", "", "")
	restore := `{"entries":[{"period":"all","player":"erin","keys":[45000,120],"at":"2026-11-29T18:02:11.5Z","meta":{"replay":"r-1"}},{"period":"all","player":"erin","keys":[1],"at":"2026-11-29T18:02:11Z"}]}`
	c.must(200, "POST", "/v1/boards/ms:expert/restore", A, restore)
	if r := c.must(200, "POST", "/v1/boards/ms:expert/restore", A, restore); r["unchanged"] != 1.0 || r["refused"] != 1.0 {
		t.Fatalf("a repeated restore: %v", r)
	}
	if items := c.must(200, "GET", "/v1/boards/ms:expert/entries/erin/history", A, "")["items"].([]any); len(items) != 1 || items[0].(map[string]any)["kind"] != "restore" {
		t.Fatalf("history of a restored entry: %v", items)
	}
	c.fails(409, "conflict", "POST", "/v1/boards/t:sum/restore", A, `{"entries":[{"period":"all","player":"erin","keys":[1],"at":"2026-11-29T18:02:11Z"}]}`)
	c.evidence(A)
	c.fails(422, "unprocessable", "POST", "/v1/boards/ms:labelled/scores", A, `{"player":"bob","score":999}`)
	c.must(200, "POST", "/v1/boards/ms:labelled/scores", A, `{"player":"alice","score":40000}`)
	c.fails(429, "quota_exceeded", "POST", "/v1/boards/ms:labelled/scores", A, `{"player":"alice","score":39000}`)

	// Errors.
	c.fails(400, "invalid_argument", "GET", "/v1/boards/ms:expert/entries?limt=3", "", "")
	c.fails(400, "invalid_json", "POST", "/v1/boards/ms:expert/scores", A, `{"player":`)
	c.fails(401, "unauthenticated", "GET", "/v1/keys", "nope", "")
	c.fails(401, "unauthenticated", "GET", "/v1/boards/secret/entries", "nope", "")
	c.fails(404, "board_not_found", "GET", "/v1/boards/secret/entries", "", "")
	c.fails(404, "board_not_found", "GET", "/v1/boards/nope", "", "")
	c.fails(404, "entry_not_found", "GET", "/v1/boards/ms:expert/entries/zed", "", "")
	c.fails(404, "not_found", "GET", "/v1/nothing", "", "")
	c.fails(405, "method_not_allowed", "PATCH", "/v1/boards/ms:expert", A, "")
	c.fails(409, "conflict", "PUT", "/v1/boards/ms:expert", A, `{"mode":"latest"}`)
	c.fails(415, "unsupported_media_type", "POST", "/v1/boards/ms:expert/scores", A, `{}`, "Content-Type", "text/plain")
	// With Expect: 100-continue, as a client sending a large body should:
	// the server refuses on the declared length before any body, and the
	// client never writes into a closed connection (a broken pipe instead
	// of the 413, seen once in CI).
	c.fails(413, "too_large", "POST", "/v1/boards/ms:expert/scores", A, `{"player":"x","meta":{"pad":"`+strings.Repeat("x", 1<<20)+`"}}`, "Expect", "100-continue")
	c.fails(400, "invalid_argument", "GET", "/v1/boards/ms:expert/stream?limit=0", "", "")
	if r := c.do("GET", "/v1/stream", "", ""); r.status != http.StatusUpgradeRequired {
		t.Fatalf("GET /v1/stream without a handshake: %d %s", r.status, r.body)
	}
	c.must(200, "POST", "/v1/boards/tight/scores", A, `{"player":"a","score":1}`)
	c.fails(429, "rate_limited", "POST", "/v1/boards/tight/scores", A, `{"player":"a","score":2}`)

	// Keys.
	read := c.must(201, "POST", "/v1/keys", A, `{"name":"page","scopes":["read"],"boards":["ms:"]}`)["key"].(string)
	k := c.must(201, "POST", "/v1/keys", A, `{"name":"spare","scopes":["submit"]}`)
	c.must(200, "GET", "/v1/keys", A, "")
	c.fails(403, "forbidden", "POST", "/v1/boards/ms:expert/scores", read, `{"player":"x","score":1}`)
	c.fails(404, "board_not_found", "GET", "/v1/boards/secret/entries", read, "") // another prefix: as unknown
	c.must(204, "DELETE", "/v1/keys/"+k["id"].(string), A, "")
	c.fails(404, "not_found", "DELETE", "/v1/keys/"+k["id"].(string), A, "")

	// Webhooks (webhooks.go): an endpoint that nothing here triggers, so
	// no delivery leaves the test.
	wh := c.must(201, "POST", "/v1/webhooks", A, `{"url":"https://hooks.example.com/podium","types":["tournament.settled"],"prefix":"ms:"}`)
	whID := wh["id"].(string)
	c.fails(400, "invalid_argument", "POST", "/v1/webhooks", A, `{"url":"http://127.0.0.1:8080/","types":["tournament.settled"]}`)
	c.fails(400, "invalid_argument", "POST", "/v1/webhooks", A, `{"url":"https://hooks.example.com/","types":["nope"]}`)
	c.fails(403, "forbidden", "GET", "/v1/webhooks", read, "")
	c.must(200, "GET", "/v1/webhooks", A, "")
	c.must(200, "GET", "/v1/webhooks/"+whID, A, "")
	c.must(200, "PATCH", "/v1/webhooks/"+whID, A, `{"types":["tournament.settled","board.deleted"],"disabled":true}`)
	c.must(200, "POST", "/v1/webhooks/"+whID+"/rotate", A, "")
	c.must(200, "GET", "/v1/webhooks/"+whID+"/deliveries?status=failed&limit=10", A, "")
	c.fails(400, "invalid_argument", "GET", "/v1/webhooks/"+whID+"/deliveries?limit=0", A, "")
	c.must(202, "POST", "/v1/webhooks/"+whID+"/redeliver", A, `{"from":"2026-11-01T00:00:00Z","to":"2026-12-01T00:00:00Z"}`)
	c.fails(404, "not_found", "POST", "/v1/webhooks/"+whID+"/redeliver", A, `{"event":"evt_00000000000000000000000000000000"}`)
	c.fails(400, "invalid_argument", "POST", "/v1/webhooks/"+whID+"/redeliver", A, `{}`)
	c.must(204, "DELETE", "/v1/webhooks/"+whID, A, "")
	c.fails(404, "not_found", "GET", "/v1/webhooks/"+whID, A, "")

	// Sessions.
	login := c.must(201, "POST", "/v1/keys", A, `{"name":"login","scopes":["sessions"]}`)["key"].(string)
	ses := c.must(201, "POST", "/v1/players/alice/sessions", login, `{"device":"phone","ttl_seconds":3600}`, "Idempotency-Key", "login-1")
	c.fails(409, "conflict", "POST", "/v1/players/alice/sessions", login, `{"device":"phone","ttl_seconds":3600}`, "Idempotency-Key", "login-1")
	c.must(201, "POST", "/v1/players/alice/sessions", login, `{"device":"tablet"}`)
	tok, sid := ses["token"].(string), ses["id"].(string)
	c.must(200, "GET", "/v1/players/alice/sessions", tok, "")
	c.must(200, "POST", "/v1/boards/secret/scores", tok, `{"player":"alice","score":3}`)
	ref := c.must(200, "POST", "/v1/players/alice/sessions/"+sid+"/refresh", tok, "")
	tok = ref["token"].(string)
	c.must(204, "DELETE", "/v1/players/alice/sessions/"+sid, login, "")
	c.fails(401, "unauthenticated", "GET", "/v1/players/alice/sessions", tok, "")
	c.must(200, "DELETE", "/v1/players/alice/sessions", login, "")

	// Groups: a set, a group board over a board with entries, joins, the
	// members view.
	c.must(201, "PUT", "/v1/boards/clans", A, `{"public":true,"keys":[{"name":"members","order":"desc"}],"group_set":{"max_members":2}}`)
	c.must(201, "PUT", "/v1/boards/gsrc", A, `{"public":true,"keys":[{"name":"points","order":"desc"}]}`)
	c.must(201, "PUT", "/v1/boards/clan-total", A, `{"public":true,"keys":[{"name":"points","order":"desc"}],"group_board":{"set":"clans","source":"gsrc","rule":"sum"}}`)
	c.must(201, "PUT", "/v1/groups/clans/red/members/amy", A, "")
	c.must(200, "PUT", "/v1/groups/clans/red/members/amy", A, "")
	c.must(201, "PUT", "/v1/groups/clans/red/members/ben", A, "")
	c.fails(409, "conflict", "PUT", "/v1/groups/clans/red/members/cid", A, "")
	c.must(200, "POST", "/v1/boards/gsrc/scores", A, `{"player":"amy","score":5}`)
	c.must(200, "GET", "/v1/groups/clans/red/members?limit=10", "", "")
	c.must(200, "GET", "/v1/players/amy/groups?set=clans", "", "")
	c.must(200, "GET", "/v1/boards/gsrc/entries?group=clans/red", "", "")
	c.must(200, "GET", "/v1/boards/clan-total/entries", "", "")
	c.must(200, "DELETE", "/v1/groups/clans/red/members/ben", A, "")

	// Tournaments.
	c.must(201, "PUT", "/v1/boards/pts:current", A, `{"public":true,"mode":"sum","keys":[{"name":"era","order":"desc"},{"name":"points","order":"desc"}],"points":{"ladder":"pts","kind":"current","half_life_days":730}}`)
	c.must(201, "PUT", "/v1/boards/pts:best", A, `{"public":true,"mode":"best","keys":[{"name":"rank","order":"asc"}],"points":{"ladder":"pts","kind":"best","series":"weekly-expert","by":"rank"}}`)
	c.must(201, "PUT", "/v1/boards/pts:weekly", A, `{"public":true,"mode":"sum","keys":[{"name":"points","order":"desc"}],"points":{"ladder":"pts","kind":"category","category":"weekly"}}`)
	c.must(201, "PUT", "/v1/boards/pts:total", A, `{"public":true,"mode":"sum","keys":[{"name":"points","order":"desc"}],"points":{"ladder":"pts","kind":"total"}}`)
	c.must(201, "PUT", "/v1/boards/weekly:49", A, `{"title":"Weekly","public":true,"keys":[{"name":"time_ms","order":"asc"}],
		"tournament":{"start":"2026-11-30T09:00:00Z","end":"2026-12-01T00:00:00Z","join_required":true,"max_participants":2,"weight":50,"category":"weekly","series":"weekly-expert","ladder":"pts"}}`)
	c.must(201, "POST", "/v1/tournaments/weekly:49/join", A, `{"player":"amy"}`)
	c.must(200, "POST", "/v1/tournaments/weekly:49/join", A, `{"player":"amy"}`)
	c.must(201, "POST", "/v1/tournaments/weekly:49/join", A, `{"player":"ben"}`)
	c.fails(409, "tournament_full", "POST", "/v1/tournaments/weekly:49/join", A, `{"player":"cid"}`)
	c.fails(403, "not_joined", "POST", "/v1/boards/weekly:49/scores", A, `{"player":"cid","score":1}`)
	c.must(200, "POST", "/v1/boards/weekly:49/scores", A, `{"player":"amy","score":1000}`)
	c.must(200, "GET", "/v1/tournaments", "", "")
	c.must(200, "GET", "/v1/tournaments/weekly:49", "", "")
	c.must(200, "GET", "/v1/tournaments/weekly:49/participants?limit=10", "", "")
	c.must(200, "POST", "/v1/tournaments/weekly:49/settle", A, "")
	c.must(200, "GET", "/v1/tournaments/weekly:49/payouts?offset=0", "", "")
	if st := c.must(200, "GET", "/v1/tournaments/weekly:49", "", ""); st["settlement"] == nil {
		t.Fatalf("a settled tournament without settlement: %v", st)
	}
	if e := c.must(200, "GET", "/v1/boards/pts:current/entries", "", "")["entries"].([]any); len(e) != 1 || e[0].(map[string]any)["value"] == nil {
		t.Fatalf("current points board: %v", e)
	}
	c.sse("/v1/boards/pts:current/stream", "", 1, nil)
	c.must(200, "GET", "/v1/boards/pts:best", "", "")
	c.fails(404, "not_found", "GET", "/v1/tournaments/ms:expert", "", "")

	// Leagues.
	c.must(201, "PUT", "/v1/boards/xp", A, `{"title":"XP","public":true,"mode":"sum","keys":[{"name":"xp","order":"desc"}],"reset":{"every":"week","tz":"UTC"},
		"league":{"cohort_size":2,"absent":"drop","tiers":[{"name":"bronze","promote":1},{"name":"silver","relegate_pct":50}]}}`)
	c.must(200, "POST", "/v1/boards/xp/scores", A, `{"player":"amy","keys":[5]}`)
	c.must(200, "POST", "/v1/boards/xp/scores", A, `{"player":"ben","keys":[7]}`)
	c.must(200, "GET", "/v1/leagues", "", "")
	c.must(200, "GET", "/v1/leagues/xp", "", "")
	c.must(200, "GET", "/v1/leagues/xp/players/amy", "", "")
	c.must(200, "GET", "/v1/leagues/xp/players/cid?period=current", "", "")
	c.must(200, "GET", "/v1/leagues/xp/players/amy/cohort", "", "")
	if got := c.sse("/v1/leagues/xp/players/amy/cohort/stream", "", 2, func() {
		c.must(200, "POST", "/v1/boards/xp/scores", A, `{"player":"amy","keys":[6]}`)
	}); got[1] != "snapshot" {
		t.Fatalf("cohort stream events %v", got)
	}
	c.fails(404, "not_found", "GET", "/v1/leagues/xp/players/nobody/cohort/stream", "", "")
	c.must(200, "GET", "/v1/leagues/xp/players/amy/history", "", "")
	c.must(200, "GET", "/v1/leagues/xp/tiers/bronze/cohorts?limit=10", "", "")
	c.must(200, "GET", "/v1/leagues/xp/tiers/bronze/cohorts/0", "", "")
	c.fails(404, "not_found", "GET", "/v1/leagues/xp/tiers/gold/cohorts", "", "")
	c.fails(404, "not_found", "GET", "/v1/leagues/ms:expert", "", "")
	c.must(200, "POST", "/v1/leagues/xp/settle", A, "")
	c.must(200, "POST", "/v1/leagues/xp/restore", A, `{"tiers":[{"player":"zed","tier":"bronze"}],"periods":[{"period":"2026-W48","start":"2026-11-23T00:00:00Z",
		"settled_at":"2026-11-30T00:00:01Z","players":2,"promoted":0,"relegated":0,"results":[{"player":"zed","tier":"bronze","cohort":0,"rank":1,"outcome":"stayed","new_tier":"bronze"},
		{"player":"yan","tier":"silver","cohort":null,"rank":null,"outcome":"absent","new_tier":"bronze"}]}]}`)
	c.export("/v1/leagues/xp/export", A, "LeagueExportLine", "LeagueExportLine", "LeagueExportLine")
	c.must(200, "GET", "/v1/leagues/xp/export?part=periods", A, "")
	c.must(200, "GET", "/v1/leagues/xp/export?part=results&period=2026-W48&limit=1", A, "")
	c.must(200, "GET", "/v1/leagues/xp/export?part=tiers&after=amy", A, "")
	c.fails(400, "invalid_argument", "GET", "/v1/leagues/xp/export?part=tiers&limit=0", A, "")
	c.fails(400, "invalid_argument", "POST", "/v1/leagues/xp/restore", A, `{"tiers":[{"player":"zed","tier":"gold"}]}`)
	c.must(200, "GET", "/leagues/xp", "", "")
	c.must(404, "GET", "/leagues/nope", "", "")

	// Contests.
	c.must(201, "PUT", "/v1/contests/ctf:finals", A, `{"title":"Finals","start":"2026-11-30T09:00:00Z","end":"2026-11-30T13:00:00Z","freeze":"2026-11-30T12:30:00Z","first_blood":[10,5,3],"public":true}`)
	c.must(200, "GET", "/contests/ctf:finals", "", "")
	c.must(201, "PUT", "/v1/contests/ctf:finals/challenges/web", A, `{"name":"Web 1","category":"web","order":1,"scoring":{"function":"ctfd_logarithmic","value":500,"minimum":100,"decay":10}}`)
	c.must(201, "PUT", "/v1/contests/ctf:finals/challenges/misc", A, `{"scoring":{"value":100}}`)
	c.must(200, "POST", "/v1/contests/ctf:finals/attempts", A, `{"team":"alice","challenge":"web","correct":true}`, "Idempotency-Key", "a-1")
	c.must(200, "POST", "/v1/contests/ctf:finals/attempts", A, `{"team":"bob","challenge":"web","correct":false}`)
	c.fails(409, "conflict", "POST", "/v1/contests/ctf:finals/attempts", A, `{"team":"alice","challenge":"web","correct":true}`)
	c.must(200, "GET", "/v1/contests", "", "")
	c.must(200, "GET", "/v1/contests/ctf:finals", "", "")
	c.must(200, "GET", "/v1/contests/ctf:finals/challenges", "", "")
	c.must(200, "GET", "/v1/contests/ctf:finals/standings?limit=10", "", "")
	c.must(200, "GET", "/v1/contests/ctf:finals/standings?view=live&include_hidden=true", A, "")
	c.must(200, "GET", "/v1/contests/ctf:finals/standings/alice", "", "")
	c.must(200, "GET", "/v1/contests/ctf:finals/first-bloods", "", "")
	c.must(200, "GET", "/v1/contests/ctf:finals/snapshots", "", "")
	c.must(200, "GET", "/v1/contests/ctf:finals/chart?top=5", "", "")
	c.must(200, "GET", "/v1/contests/ctf:finals/ctftime", "", "")
	c.must(200, "GET", "/v1/contests/ctf:finals/attempts?after=0&limit=10", A, "")
	c.fails(401, "unauthenticated", "GET", "/v1/contests/ctf:finals/standings?view=live", "", "")
	c.fails(404, "not_found", "GET", "/v1/contests/ctf:finals/standings?at=2026-11-30T08:00:00Z", "", "")
	c.fails(404, "not_found", "GET", "/v1/contests/nope", "", "")
	c.export("/v1/contests/ctf:finals/export?format=jsonl", "", "", "", "")
	c.export("/v1/contests/ctf:finals/export?format=csv&view=live", A, "", "", "")
	c.fails(409, "conflict", "POST", "/v1/contests/ctf:finals/unfreeze", A, "")
	c.must(200, "POST", "/v1/contests/ctf:finals/unfreeze", A, `{"force":true}`)
	c.must(200, "POST", "/v1/contests/ctf:finals/refreeze", A, "")
	c.must(200, "PUT", "/v1/contests/ctf:finals/challenges/web?preview=true", A, `{"scoring":{"value":400}}`)
	c.fails(409, "conflict", "PUT", "/v1/contests/ctf:finals/challenges/web", A, `{"scoring":{"value":400}}`)
	c.must(200, "PUT", "/v1/contests/ctf:finals/challenges/web?confirm=true", A, `{"scoring":{"value":400}}`)
	c.must(200, "GET", "/v1/contests/ctf:finals/attempts?team=alice&challenge=web&correct=true", A, "")
	c.must(200, "GET", "/v1/contests/ctf:finals/standings?solves=true", A, "")
	c.must(204, "DELETE", "/v1/contests/ctf:finals/challenges/misc", A, "")

	// Live: SSE streams and the WebSocket.
	score := func(board, body string) func() {
		return func() { c.must(200, "POST", "/v1/boards/"+board+"/scores", A, body) }
	}
	if got := c.sse("/v1/boards/ms:expert/stream?limit=5", "", 2, score("ms:expert", `{"player":"erin","keys":[38000,80]}`)); got[1] != "delta" {
		t.Fatalf("board stream: %v, want a snapshot then a delta", got)
	}
	if got := c.sse("/v1/boards/t:beg/stream?limit=5", "", 2, score("t:beg", `{"player":"p1","score":100}`)); got[1] != "delta" {
		t.Fatalf("best_k board stream: %v", got)
	}
	// The feed orders by time: on the fake clock, new events are at the
	// head (a delta) only once the clock moved.
	s.clock.Add(time.Second)
	if got := c.sse("/v1/feed/stream?limit=5", "", 2, score("ms:expert", `{"player":"fay","keys":[1000,1]}`)); got[1] != "delta" {
		t.Fatalf("feed stream: %v", got)
	}
	c.sse("/v1/feed/stream?board=ms:expert", "", 1, nil)
	if got := c.sse("/v1/contests/ctf:finals/stream?limit=5", "", 2, func() {
		c.must(200, "POST", "/v1/contests/ctf:finals/attempts", A, `{"team":"bob","challenge":"web","correct":true}`)
	}); got[1] != "delta" && got[1] != "snapshot" {
		t.Fatalf("contest stream: %v", got)
	}
	c.sse("/v1/contests/ctf:finals/stream?view=live", A, 1, nil)
	doomed := c.must(201, "POST", "/v1/keys", A, `{"name":"doomed","scopes":["read"]}`)
	if got := c.sse("/v1/boards/secret/stream", doomed["key"].(string), 2, func() {
		c.must(204, "DELETE", "/v1/keys/"+doomed["id"].(string), A, "")
	}); got[1] != "error" {
		t.Fatalf("stream of a revoked key: %v, want an error event", got)
	}
	c.websocket()
	c.must(200, "GET", "/v1/feed", "", "")
	c.must(200, "GET", "/v1/feed?board=ms:expert&limit=5", "", "")

	// Admin, and the deletes.
	c.must(200, "POST", "/v1/admin/check", A, "")
	c.must(200, "POST", "/v1/admin/reload", A, "")
	c.must(204, "DELETE", "/v1/boards/ms:expert/entries/dave", A, "")
	c.must(204, "DELETE", "/v1/contests/ctf:finals", A, "")
	c.must(204, "DELETE", "/v1/boards/tight", A, "")

	// What was checked: every operation of the spec, and the error
	// statuses the issue names.
	seen := map[string]bool{}
	statuses := map[string]bool{}
	for _, k := range chk.statuses() {
		f := strings.Fields(k)
		if f[0] != "event" {
			seen[f[0]+" "+f[1]] = true
			statuses[f[2]] = true
		}
	}
	for path, item := range chk.doc.Paths.Map() {
		for method := range item.Operations() {
			if !seen[method+" "+path] {
				t.Errorf("the scenario does not exercise %s %s", method, path)
			}
		}
	}
	for _, st := range []string{"400", "401", "403", "404", "405", "409", "415", "422", "429"} {
		if !statuses[st] {
			t.Errorf("the scenario has no %s answer", st)
		}
	}
	if testing.Verbose() {
		t.Logf("checked: %s", strings.Join(chk.statuses(), "\n"))
	}
}

// websocket subscribes to a board, the feed and a league cohort, pings, and checks every
// message both ways against the x-websocket schemas of GET /v1/stream.
func (c *specClient) websocket() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(c.s.url, "http")+"/v1/stream",
		&websocket.DialOptions{HTTPClient: c.c})
	if err != nil {
		c.t.Fatal(err)
	}
	defer ws.CloseNow()
	op := c.chk.doc.Paths.Value("/v1/stream").Get
	ext, _ := op.Extensions["x-websocket"].(map[string]any)
	client := c.chk.eventSchema(ext["client"], "GET /v1/stream client messages")
	srv := c.chk.eventSchema(ext["server"], "GET /v1/stream server messages")
	types := map[string]int{}
	// exchange sends msgs, then reads until done says it has enough.
	exchange := func(msgs []string, done func() bool) {
		for _, m := range msgs {
			c.chk.checkEvent("GET /v1/stream client message", client, []byte(m), "")
			if err := ws.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
				c.t.Fatal(err)
			}
		}
		for !done() {
			_, b, err := ws.Read(ctx)
			if err != nil {
				c.t.Fatalf("websocket: %v (got %v)", err, types)
			}
			var m struct{ Type string }
			json.Unmarshal(b, &m)
			types[m.Type]++
			c.chk.checkEvent("GET /v1/stream server message "+m.Type, srv, b, "")
		}
	}
	exchange([]string{
		`{"op":"subscribe","board":"ms:expert","limit":5}`,
		`{"op":"subscribe_feed","board":"ms:expert","limit":5}`,
	}, func() bool { return types["subscribed"] == 2 && types["snapshot"] == 2 })
	exchange([]string{
		`{"op":"ping","id":"7"}`,
		`{"op":"subscribe","board":"nope"}`,
		`{"op":"unsubscribe","board":"ms:expert"}`,
		`{"op":"unsubscribe_feed","board":"ms:expert"}`,
	}, func() bool { return types["unsubscribed"] == 2 && types["pong"] == 1 && types["error"] == 1 })
	exchange([]string{
		`{"op":"subscribe_cohort","board":"xp","player":"amy","id":"c"}`,
		`{"op":"unsubscribe_cohort","board":"xp","player":"amy","id":"c"}`,
		`{"op":"subscribe_cohort","board":"nope","player":"amy"}`,
	}, func() bool {
		return types["unsubscribed"] == 3 && types["subscribed"] == 3 && types["snapshot"] == 3 && types["error"] == 2
	})
}

// export reads an export (checked by the specChecker); for JSON Lines with
// schemas named, its first line, middle lines and last line are checked
// against them too.
func (c *specClient) export(path, key, head, line, end string) {
	c.t.Helper()
	r := c.do("GET", path, key, "")
	if r.status != 200 || !strings.Contains(r.header.Get("Content-Disposition"), "attachment") {
		c.t.Fatalf("%s: %d %v %.300s", path, r.status, r.header, r.body)
	}
	if head == "" {
		return
	}
	lines := strings.Split(strings.TrimSuffix(string(r.body), "\n"), "\n")
	if len(lines) < 2 {
		c.t.Fatalf("%s: %d lines", path, len(lines))
	}
	schema := func(name string) *openapi3.Schema { return c.chk.doc.Components.Schemas[name].Value }
	for i, l := range lines {
		name := line
		switch i {
		case 0:
			name = head
		case len(lines) - 1:
			name = end
		}
		c.chk.checkEvent(fmt.Sprintf("%s line %d (%s)", path, i+1, name), schema(name), []byte(l), "")
	}
}

// evidence attaches a replay to a submission and reads it back.
func (c *specClient) evidence(key string) {
	c.t.Helper()
	seq := c.must(200, "POST", "/v1/boards/ms:labelled/scores", key, `{"player":"alice","score":41234}`)["seq"].(float64)
	content := []byte("{\"t\":0,\"op\":\"start\"}\n{\"t\":41234,\"op\":\"win\"}\n")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(content)
	zw.Close()
	hexsum := func(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }
	path := fmt.Sprintf("/v1/boards/ms:labelled/entries/alice/evidence?seq=%d&content_sha256=%s&compressed_sha256=%s",
		int64(seq), hexsum(content), hexsum(gz.Bytes()))
	req, _ := http.NewRequest("PUT", c.s.url+path, bytes.NewReader(gz.Bytes()))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/gzip")
	res, err := c.c.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 201 {
		c.t.Fatalf("evidence upload: %d %s", res.StatusCode, b)
	}
	r := c.do("GET", fmt.Sprintf("/v1/boards/ms:labelled/entries/alice/evidence?seq=%d", int64(seq)), "", "")
	if r.status != 200 || !bytes.Equal(r.body, gz.Bytes()) {
		c.t.Fatalf("evidence download: %d, %d bytes", r.status, len(r.body))
	}
	c.fails(404, "not_found", "GET", "/v1/boards/ms:expert/entries/alice/evidence", key, "")
}
