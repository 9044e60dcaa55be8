package http_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/pgtest"

	modsqlite "modernc.org/sqlite"
)

// sqliteFaults makes the SQLite connections of a database fail every
// statement (SQLite's authorizer refuses to compile them, as it refuses
// BEGIN and COMMIT), for the tests that fail a store: every module's
// store is then failing at once, reads and writes.
var sqliteFaults struct {
	once sync.Once
	mu   sync.Mutex
	// failing holds the database paths whose connections fail now.
	failing map[string]*atomic.Bool
}

// failSQLite returns a switch that fails every statement on the SQLite
// database at path; it must be called before the database is opened.
func failSQLite(path string) *atomic.Bool {
	sqliteFaults.once.Do(func() {
		sqliteFaults.failing = map[string]*atomic.Bool{}
		modsqlite.RegisterConnectionHook(func(conn modsqlite.ExecQuerierContext, dsn string) error {
			file, _, _ := strings.Cut(dsn, "?")
			sqliteFaults.mu.Lock()
			on := sqliteFaults.failing[file]
			sqliteFaults.mu.Unlock()
			if on == nil {
				return nil
			}
			ar, ok := conn.(modsqlite.AuthorizerRegisterer)
			if !ok {
				return fmt.Errorf("the SQLite driver has no authorizer")
			}
			return ar.RegisterAuthorizer(func(modsqlite.AuthorizerActionCode, string, string, string, string) modsqlite.AuthorizerReturnCode {
				if on.Load() {
					return modsqlite.AuthorizerDeny
				}
				return modsqlite.AuthorizerOK
			})
		})
	})
	on := new(atomic.Bool)
	sqliteFaults.mu.Lock()
	sqliteFaults.failing[path] = on
	sqliteFaults.mu.Unlock()
	return on
}

// failRequest is one request of the storage failure table.
type failRequest struct {
	method, path, key, body string
	ctype                   string
}

// storageFailState is what setUpFailState made: ids to name in the
// requests.
type storageFailState struct {
	mods, modsID, login, session, sessionID, heldA, heldB string
	webhook                                               string
	seq                                                   int64
}

// setUpFailState makes, while the store works, one of everything the
// routes name: boards of every kind, a player, keys, a session, held
// submissions, a tournament, a contest with a challenge and an attempt,
// and an evidence file.
func setUpFailState(t *testing.T, s *server) storageFailState {
	t.Helper()
	A := adminKey
	var st storageFailState
	s.mkBoard("b", `{"keys":[{"name":"points","order":"desc"}],"public":true}`)
	s.mkBoard("gone", `{"keys":[{"name":"points","order":"desc"}],"public":true}`)
	s.mkBoard("mod", `{"keys":[{"name":"points","order":"desc"}],"public":true,"review":{"hold":"all"}}`)
	s.mkBoard("ev", `{"keys":[{"name":"time_ms","order":"asc"}],"public":true,"evidence":{"public":true,"max_events":100}}`)
	s.mkBoard("secret", `{"keys":[{"name":"points","order":"desc"}],"public":false,"player_submit":true}`)
	s.mkBoard("weekly", `{"public":true,"keys":[{"name":"time_ms","order":"asc"}],"tournament":{"start":"2026-11-30T09:00:00Z","end":"2026-12-01T00:00:00Z","join_required":true}}`)
	s.must(200, s.do("POST", "/v1/boards/b/scores", A, `{"player":"alice","score":5}`))
	s.must(200, s.do("POST", "/v1/boards/b/scores", A, `{"player":"bob","score":7}`))
	s.must(200, s.do("PUT", "/v1/players/alice", A, `{"name":"Alice"}`))
	mods := s.must(201, s.do("POST", "/v1/keys", A, `{"name":"mods","scopes":["review"],"boards":["mod"]}`)).json(t)
	st.mods, st.modsID = mods["key"].(string), mods["id"].(string)
	st.heldA = s.must(202, s.do("POST", "/v1/boards/mod/scores", A, `{"player":"alice","score":10}`)).json(t)["id"].(string)
	st.heldB = s.must(202, s.do("POST", "/v1/boards/mod/scores", A, `{"player":"bob","score":11}`)).json(t)["id"].(string)
	st.login = s.must(201, s.do("POST", "/v1/keys", A, `{"name":"login","scopes":["sessions"]}`)).json(t)["key"].(string)
	st.webhook = s.must(201, s.do("POST", "/v1/webhooks", A, `{"url":"https://hooks.example.com/x","types":["tournament.settled"]}`)).json(t)["id"].(string)
	ses := s.must(201, s.do("POST", "/v1/players/alice/sessions", st.login, `{"device":"phone"}`)).json(t)
	st.session, st.sessionID = ses["token"].(string), ses["id"].(string)
	s.must(201, s.do("POST", "/v1/tournaments/weekly/join", A, `{"player":"amy"}`))
	s.mkBoard("clans", `{"keys":[{"name":"members","order":"desc"}],"public":true,"group_set":{}}`)
	s.mkBoard("clan-b", `{"keys":[{"name":"points","order":"desc"}],"public":true,"group_board":{"set":"clans","source":"b","rule":"sum"}}`)
	s.must(201, s.do("PUT", "/v1/groups/clans/red/members/alice", A, nil))
	s.mkBoard("xp", `{"public":true,"mode":"sum","keys":[{"name":"xp","order":"desc"}],"reset":{"every":"week","tz":"UTC"},"league":{"cohort_size":2,"tiers":[{"name":"bronze","promote":1},{"name":"silver"}]}}`)
	s.must(200, s.do("POST", "/v1/boards/xp/scores", A, `{"player":"amy","score":5}`))
	s.must(200, s.do("POST", "/v1/boards/weekly/scores", A, `{"player":"amy","score":1000}`))
	s.must(200, s.do("POST", "/v1/players/carol/freeze", A, `{"reason":"macro"}`))
	s.must(201, s.do("PUT", "/v1/contests/c", A, `{"title":"Finals","start":"2026-11-30T09:00:00Z","end":"2026-11-30T13:00:00Z","public":true}`))
	s.must(201, s.do("PUT", "/v1/contests/c/challenges/web", A, `{"scoring":{"function":"ctfd_logarithmic","value":500,"minimum":100,"decay":10}}`))
	s.must(201, s.do("PUT", "/v1/contests/c/challenges/misc", A, `{"scoring":{"value":100}}`))
	s.must(200, s.do("POST", "/v1/contests/c/attempts", A, `{"team":"alice","challenge":"web","correct":true}`))
	st.seq = int64(s.must(200, s.do("POST", "/v1/boards/ev/scores", A, `{"player":"alice","score":41234}`)).json(t)["seq"].(float64))
	r := uploadEvidence(t, s, st.seq, "alice")
	s.must(201, r)
	return st
}

// evidenceFile is a small replay, gzipped.
func evidenceFile() (content, gz []byte) {
	content = []byte("{\"t\":0,\"op\":\"start\"}\n{\"t\":41234,\"op\":\"win\"}\n")
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(content)
	zw.Close()
	return content, b.Bytes()
}

func evidencePath(seq int64, player string) string {
	content, gz := evidenceFile()
	sum := func(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }
	return fmt.Sprintf("/v1/boards/ev/entries/%s/evidence?seq=%d&content_sha256=%s&compressed_sha256=%s", player, seq, sum(content), sum(gz))
}

func uploadEvidence(t *testing.T, s *server, seq int64, player string) resp {
	t.Helper()
	_, gz := evidenceFile()
	return s.do("PUT", evidencePath(seq, player), adminKey, gz, "Content-Type", "application/gzip")
}

// failRequests is one request per route, each of which the store serves
// when it works (given setUpFailState's state).
func failRequests(st storageFailState) map[string]failRequest {
	A := adminKey
	_, gz := evidenceFile()
	return map[string]failRequest{
		"DELETE /v1/boards/{board}":                            {method: "DELETE", path: "/v1/boards/gone", key: A},
		"DELETE /v1/boards/{board}/entries/{player}":           {method: "DELETE", path: "/v1/boards/b/entries/bob", key: A},
		"DELETE /v1/contests/{contest}":                        {method: "DELETE", path: "/v1/contests/c", key: A},
		"DELETE /v1/contests/{contest}/challenges/{challenge}": {method: "DELETE", path: "/v1/contests/c/challenges/misc", key: A},
		"DELETE /v1/keys/{id}":                                 {method: "DELETE", path: "/v1/keys/" + st.modsID, key: A},
		"DELETE /v1/players/{player}/sessions":                 {method: "DELETE", path: "/v1/players/alice/sessions", key: st.login},
		"DELETE /v1/players/{player}/sessions/{id}":            {method: "DELETE", path: "/v1/players/alice/sessions/" + st.sessionID, key: st.login},
		"GET /admin":                              {method: "GET", path: "/admin"},
		"GET /assets/":                            {method: "GET", path: "/assets/app.css"},
		"GET /boards/{board}":                     {method: "GET", path: "/boards/b"},
		"GET /contests/{contest}":                 {method: "GET", path: "/contests/c"},
		"GET /healthz":                            {method: "GET", path: "/healthz"},
		"GET /metrics":                            {method: "GET", path: "/metrics"},
		"GET /openapi.json":                       {method: "GET", path: "/openapi.json"},
		"GET /readyz":                             {method: "GET", path: "/readyz"},
		"GET /v1/boards":                          {method: "GET", path: "/v1/boards"},
		"GET /v1/boards/{board}":                  {method: "GET", path: "/v1/boards/b"},
		"GET /v1/boards/{board}/entries":          {method: "GET", path: "/v1/boards/b/entries"},
		"GET /v1/boards/{board}/entries/{player}": {method: "GET", path: "/v1/boards/b/entries/alice"},
		"GET /v1/boards/{board}/entries/{player}/around":         {method: "GET", path: "/v1/boards/b/entries/alice/around"},
		"GET /v1/boards/{board}/entries/{player}/evidence":       {method: "GET", path: fmt.Sprintf("/v1/boards/ev/entries/alice/evidence?seq=%d", st.seq)},
		"GET /v1/boards/{board}/entries/{player}/history":        {method: "GET", path: "/v1/boards/b/entries/alice/history", key: A},
		"GET /v1/boards/{board}/export":                          {method: "GET", path: "/v1/boards/b/export?format=jsonl"},
		"GET /v1/boards/{board}/periods":                         {method: "GET", path: "/v1/boards/b/periods"},
		"GET /v1/boards/{board}/stream":                          {method: "GET", path: "/v1/boards/b/stream"},
		"GET /v1/client.js":                                      {method: "GET", path: "/v1/client.js"},
		"GET /v1/contests":                                       {method: "GET", path: "/v1/contests"},
		"GET /v1/contests/{contest}":                             {method: "GET", path: "/v1/contests/c"},
		"GET /v1/contests/{contest}/attempts":                    {method: "GET", path: "/v1/contests/c/attempts", key: A},
		"GET /v1/contests/{contest}/challenges":                  {method: "GET", path: "/v1/contests/c/challenges"},
		"GET /v1/contests/{contest}/chart":                       {method: "GET", path: "/v1/contests/c/chart"},
		"GET /v1/contests/{contest}/ctftime":                     {method: "GET", path: "/v1/contests/c/ctftime"},
		"GET /v1/contests/{contest}/export":                      {method: "GET", path: "/v1/contests/c/export?format=jsonl"},
		"GET /v1/contests/{contest}/first-bloods":                {method: "GET", path: "/v1/contests/c/first-bloods"},
		"GET /v1/contests/{contest}/snapshots":                   {method: "GET", path: "/v1/contests/c/snapshots"},
		"GET /v1/contests/{contest}/standings":                   {method: "GET", path: "/v1/contests/c/standings"},
		"GET /v1/contests/{contest}/standings/{team}":            {method: "GET", path: "/v1/contests/c/standings/alice"},
		"GET /v1/contests/{contest}/stream":                      {method: "GET", path: "/v1/contests/c/stream"},
		"GET /v1/feed":                                           {method: "GET", path: "/v1/feed"},
		"GET /v1/feed/stream":                                    {method: "GET", path: "/v1/feed/stream"},
		"GET /v1/keys":                                           {method: "GET", path: "/v1/keys", key: A},
		"GET /v1/webhooks":                                       {method: "GET", path: "/v1/webhooks", key: A},
		"GET /v1/webhooks/{id}":                                  {method: "GET", path: "/v1/webhooks/" + st.webhook, key: A},
		"GET /v1/webhooks/{id}/deliveries":                       {method: "GET", path: "/v1/webhooks/" + st.webhook + "/deliveries", key: A},
		"POST /v1/webhooks":                                      {method: "POST", path: "/v1/webhooks", key: A, body: `{"url":"https://hooks.example.com/y","types":["board.created"]}`},
		"PATCH /v1/webhooks/{id}":                                {method: "PATCH", path: "/v1/webhooks/" + st.webhook, key: A, body: `{"disabled":true}`},
		"DELETE /v1/webhooks/{id}":                               {method: "DELETE", path: "/v1/webhooks/" + st.webhook, key: A},
		"POST /v1/webhooks/{id}/rotate":                          {method: "POST", path: "/v1/webhooks/" + st.webhook + "/rotate", key: A},
		"POST /v1/webhooks/{id}/redeliver":                       {method: "POST", path: "/v1/webhooks/" + st.webhook + "/redeliver", key: A, body: `{"event":"evt_0"}`},
		"GET /v1/openapi.json":                                   {method: "GET", path: "/v1/openapi.json"},
		"GET /v1/players/{player}":                               {method: "GET", path: "/v1/players/alice", key: A},
		"GET /v1/players/{player}/freeze":                        {method: "GET", path: "/v1/players/carol/freeze", key: A},
		"GET /v1/players/{player}/sessions":                      {method: "GET", path: "/v1/players/alice/sessions", key: st.session},
		"GET /v1/review":                                         {method: "GET", path: "/v1/review?board=mod", key: st.mods},
		"GET /v1/review/{id}":                                    {method: "GET", path: "/v1/review/" + st.heldA, key: st.mods},
		"GET /v1/stream":                                         {method: "GET", path: "/v1/stream"},
		"GET /v1/tournaments":                                    {method: "GET", path: "/v1/tournaments"},
		"GET /leagues/{board}":                                   {method: "GET", path: "/leagues/xp?player=amy"},
		"GET /v1/leagues":                                        {method: "GET", path: "/v1/leagues"},
		"GET /v1/leagues/{board}":                                {method: "GET", path: "/v1/leagues/xp"},
		"GET /v1/leagues/{board}/players/{player}":               {method: "GET", path: "/v1/leagues/xp/players/amy"},
		"GET /v1/leagues/{board}/players/{player}/cohort":        {method: "GET", path: "/v1/leagues/xp/players/amy/cohort"},
		"GET /v1/leagues/{board}/players/{player}/cohort/stream": {method: "GET", path: "/v1/leagues/xp/players/amy/cohort/stream"},
		"GET /v1/leagues/{board}/players/{player}/history":       {method: "GET", path: "/v1/leagues/xp/players/amy/history"},
		"GET /v1/leagues/{board}/tiers/{tier}/cohorts":           {method: "GET", path: "/v1/leagues/xp/tiers/bronze/cohorts"},
		"GET /v1/leagues/{board}/tiers/{tier}/cohorts/{cohort}":  {method: "GET", path: "/v1/leagues/xp/tiers/bronze/cohorts/0"},
		"POST /v1/leagues/{board}/settle":                        {method: "POST", path: "/v1/leagues/xp/settle", key: A},
		"GET /v1/leagues/{board}/export":                         {method: "GET", path: "/v1/leagues/xp/export?part=tiers", key: A},
		"POST /v1/leagues/{board}/restore":                       {method: "POST", path: "/v1/leagues/xp/restore", key: A, body: `{"tiers":[{"player":"amy","tier":"silver"}],"periods":[]}`},
		"PUT /v1/groups/{set}/{group}/members/{player}":          {method: "PUT", path: "/v1/groups/clans/red/members/bob", key: A},
		"DELETE /v1/groups/{set}/{group}/members/{player}":       {method: "DELETE", path: "/v1/groups/clans/red/members/alice", key: A},
		"GET /v1/groups/{set}/{group}/members":                   {method: "GET", path: "/v1/groups/clans/red/members"},
		"GET /v1/players/{player}/groups":                        {method: "GET", path: "/v1/players/alice/groups?set=clans"},
		"GET /v1/tournaments/{board}":                            {method: "GET", path: "/v1/tournaments/weekly"},
		"GET /v1/tournaments/{board}/participants":               {method: "GET", path: "/v1/tournaments/weekly/participants"},
		"GET /v1/tournaments/{board}/payouts":                    {method: "GET", path: "/v1/tournaments/weekly/payouts"},
		"GET /{$}":                                               {method: "GET", path: "/"},
		"POST /v1/admin/check":                                   {method: "POST", path: "/v1/admin/check", key: A},
		"POST /v1/admin/reload":                                  {method: "POST", path: "/v1/admin/reload", key: A},
		"POST /v1/boards/{board}/restore":                        {method: "POST", path: "/v1/boards/b/restore", key: A, body: `{"entries":[{"period":"all","player":"erin","keys":[3],"at":"2026-11-29T18:02:11Z"}]}`},
		"POST /v1/boards/{board}/scores":                         {method: "POST", path: "/v1/boards/b/scores", key: A, body: `{"player":"carl","score":9}`},
		"POST /v1/contests/{contest}/attempts":                   {method: "POST", path: "/v1/contests/c/attempts", key: A, body: `{"team":"bob","challenge":"web","correct":true}`},
		"POST /v1/contests/{contest}/refreeze":                   {method: "POST", path: "/v1/contests/c/refreeze", key: A},
		"POST /v1/contests/{contest}/unfreeze":                   {method: "POST", path: "/v1/contests/c/unfreeze", key: A, body: `{"force":true}`},
		"POST /v1/keys":                                          {method: "POST", path: "/v1/keys", key: A, body: `{"name":"more","scopes":["read"]}`},
		"POST /v1/players/{player}/freeze":                       {method: "POST", path: "/v1/players/dan/freeze", key: A, body: `{"reason":"macro"}`},
		"POST /v1/players/{player}/sessions":                     {method: "POST", path: "/v1/players/alice/sessions", key: st.login, body: `{"device":"tablet"}`},
		"POST /v1/players/{player}/sessions/{id}/refresh":        {method: "POST", path: "/v1/players/alice/sessions/" + st.sessionID + "/refresh", key: st.session},
		"POST /v1/players/{player}/unfreeze":                     {method: "POST", path: "/v1/players/carol/unfreeze", key: A},
		"POST /v1/review/{id}/approve":                           {method: "POST", path: "/v1/review/" + st.heldA + "/approve", key: st.mods, body: `{"reason":"checked"}`},
		"POST /v1/review/{id}/reject":                            {method: "POST", path: "/v1/review/" + st.heldB + "/reject", key: st.mods, body: `{"reason":"spliced"}`},
		"POST /v1/scores":                                        {method: "POST", path: "/v1/scores", key: A, body: `{"scores":[{"board":"b","player":"dora","score":3}]}`},
		"POST /v1/tournaments/{board}/join":                      {method: "POST", path: "/v1/tournaments/weekly/join", key: A, body: `{"player":"ben"}`},
		"POST /v1/tournaments/{board}/settle":                    {method: "POST", path: "/v1/tournaments/weekly/settle", key: A},
		"PUT /v1/boards/{board}":                                 {method: "PUT", path: "/v1/boards/new", key: A, body: `{"keys":[{"name":"points","order":"desc"}],"public":true}`},
		"PUT /v1/boards/{board}/entries/{player}/evidence":       {method: "PUT", path: evidencePath(st.seq, "alice"), key: A, body: string(gz), ctype: "application/gzip"},
		"PUT /v1/contests/{contest}":                             {method: "PUT", path: "/v1/contests/d", key: A, body: `{"title":"Other","start":"2026-11-30T09:00:00Z","end":"2026-11-30T13:00:00Z"}`},
		"PUT /v1/contests/{contest}/challenges/{challenge}":      {method: "PUT", path: "/v1/contests/c/challenges/pwn", key: A, body: `{"scoring":{"value":300}}`},
		"PUT /v1/players/{player}":                               {method: "PUT", path: "/v1/players/bob", key: A, body: `{"name":"Bob"}`},
	}
}

// send sends one request of the table; a stream's answer is read up to
// its headers only.
func (s *server) send(t *testing.T, r failRequest) resp {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rd io.Reader
	if r.body != "" {
		rd = strings.NewReader(r.body)
	}
	req, _ := http.NewRequestWithContext(ctx, r.method, s.url+r.path, rd)
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	if r.key != "" {
		req.Header.Set("Authorization", "Bearer "+r.key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer res.Body.Close()
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return resp{status: res.StatusCode, header: res.Header}
	}
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// checkFailAnswers sends every route's request while the store fails and
// checks that none is answered 500: a storage failure is 503 unavailable
// or outcome_unknown with Retry-After, as docs/API.md says.
func checkFailAnswers(t *testing.T, s *server, reqs map[string]failRequest) {
	t.Helper()
	for _, pattern := range s.srv.Routes() {
		if _, ok := reqs[pattern]; !ok {
			t.Errorf("route %s has no request in the storage failure table", pattern)
		}
	}
	for _, pattern := range s.srv.Routes() {
		r, ok := reqs[pattern]
		if !ok {
			continue
		}
		got := s.send(t, r)
		switch {
		case got.status >= 500 && got.status != http.StatusServiceUnavailable:
			t.Errorf("%s (%s %s) while the store fails: %d %s", pattern, r.method, r.path, got.status, got.body)
		case got.status == http.StatusServiceUnavailable:
			code := ""
			if len(got.body) > 0 && strings.HasPrefix(got.header.Get("Content-Type"), "application/json") {
				code = got.errCode(t)
			}
			if pattern == "GET /readyz" {
				continue // readiness says "not ready" with a body of its own
			}
			if code != podium.ECodeUnavailable && code != podium.ECodeOutcomeUnknown {
				t.Errorf("%s while the store fails: 503 with code %q: %s", pattern, code, got.body)
			}
			if got.header.Get("Retry-After") == "" {
				t.Errorf("%s while the store fails: 503 without Retry-After", pattern)
			}
		}
		if testing.Verbose() {
			t.Logf("%-55s %d %.120s", pattern, got.status, got.body)
		}
	}
}

// TestStorageFailureIsNever500 fails the SQLite database under every
// module's store (boards, players, keys, sessions, review, tournaments,
// evidence, feed, contests) and sends a request to every route: none may
// answer 500.
func TestStorageFailureIsNever500(t *testing.T) {
	var failing *atomic.Bool
	s := newSpecServerAt(t, func(path string) { failing = failSQLite(path) })
	st := setUpFailState(t, s)
	failing.Store(true)
	checkFailAnswers(t, s, failRequests(st))
	failing.Store(false)
}

// TestStorageFailureIsNever500Postgres is TestStorageFailureIsNever500 on
// PostgreSQL in shared mode, with the database gone (a restart): every
// connection cut and new ones refused.
func TestStorageFailureIsNever500Postgres(t *testing.T) {
	dsn, schema := pgtest.Schema(t)
	dsn, proxy := pgtest.Through(t, dsn)
	clk := &fakeClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	s := startContestNode(t, dsn, schema, clk, "a")
	st := setUpFailState(t, s)
	proxy.Down()
	checkFailAnswers(t, s, failRequests(st))
	proxy.Up()
}
