package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/evidence"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/stream"
)

const adminKey = "test-admin-key"

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type server struct {
	t     *testing.T
	url   string
	clock *fakeClock
	eng   *engine.Engine
	hub   *stream.Hub
	srv   *podiumhttp.Server
	ev    *evidence.Module // set by evNode (evidence_test.go)
	// client sends do's requests: through a specChecker when
	// PODIUM_OPENAPI_CHECK is set (openapi_check_test.go); set once, on
	// first use (httpClient).
	clientOnce sync.Once
	client     *http.Client
}

func (s *server) httpClient() *http.Client {
	s.clientOnce.Do(func() { s.client = checkedClient(s.t) })
	return s.client
}

// streamStall shortens how long a stalled stream write may take.
func (s *server) streamStall(d time.Duration) { s.srv.SetStallTimeout(d) }

func newServer(t *testing.T) *server {
	t.Helper()
	return newServerWith(t, stream.Config{}, false)
}

// newServerWith starts a server whose stream hub uses cfg, on real time
// unless fakeHubClock puts it on the server's fake clock.
func newServerWith(t *testing.T, cfg stream.Config, fakeHubClock bool) *server {
	t.Helper()
	return newServerOpts(t, cfg, fakeHubClock, nil)
}

// newServerOpts is newServerWith with a hook that changes the server's
// configuration before it starts.
func newServerOpts(t *testing.T, cfg stream.Config, fakeHubClock bool, opts func(*podiumhttp.Config)) *server {
	t.Helper()
	return newServerStore(t, cfg, fakeHubClock, opts, sqlite.Options{Sync: "normal"})
}

// newServerStore is newServerOpts on a store opened with so.
func newServerStore(t *testing.T, cfg stream.Config, fakeHubClock bool, opts func(*podiumhttp.Config), so sqlite.Options) *server {
	t.Helper()
	return newServerAt(t, cfg, fakeHubClock, opts, so, nil)
}

// newServerAt is newServerStore, calling before with the database's path
// before the database is opened (nil: not).
func newServerAt(t *testing.T, cfg stream.Config, fakeHubClock bool, opts func(*podiumhttp.Config), so sqlite.Options, before func(path string)) *server {
	t.Helper()
	return newServerServed(t, cfg, fakeHubClock, opts, so, before, nil)
}

// newServerServed is newServerAt with serve, when not nil, applied to the
// http.Server before it starts (h2c_test.go).
func newServerServed(t *testing.T, cfg stream.Config, fakeHubClock bool, opts func(*podiumhttp.Config), so sqlite.Options, before func(path string),
	serve func(*http.Server)) *server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "podium.db")
	if before != nil {
		before(path)
	}
	st, err := sqlite.Open(path, so)
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := modules.Engine(engine.Config{Store: st, Now: clk.Now, Logger: log})
	eng.Keys().SetAdminSecret(adminKey)
	if fakeHubClock {
		cfg.Now = clk.Now
	}
	cfg.Logger = log
	hub := stream.New(podiumhttp.StreamSource(eng), cfg)
	eng.SetListener(hub)
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	hc := podiumhttp.Config{Engine: eng, Store: st, Logger: log, Hub: hub}
	if opts != nil {
		opts(&hc)
	}
	srv := podiumhttp.New(hc)
	ts := serveTestWith(srv, serve)
	t.Cleanup(func() {
		hub.Close()
		if ch := srv.ContestHub(); ch != nil {
			ch.Close()
		}
		ts.Close()
		eng.Close()
		st.Close()
	})
	return &server{t: t, url: ts.URL, clock: clk, eng: eng, hub: hub, srv: srv}
}

// serveTest serves srv as podium serve does: its Handler on its Listener,
// with its ConnContext (conn.go).
type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer is not JSON (%d): %q", r.status, r.body)
	}
	return m
}

// errCode returns error.code of an error answer.
func (r resp) errCode(t *testing.T) string {
	t.Helper()
	m := r.json(t)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error envelope in %d %s", r.status, r.body)
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Fatalf("error without message: %s", r.body)
	}
	return e["code"].(string)
}

func (s *server) do(method, path, key string, body any, hdr ...string) resp {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, s.url+path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.ContentLength > 64<<10 {
		// As a client sending a large body should: the server may refuse
		// it on its headers (413, 401), and the body must not race that
		// answer into a broken pipe (TestBadInput failed so in CI).
		req.Header.Set("Expect", "100-continue")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := s.httpClient().Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

func (s *server) must(status int, r resp) resp {
	s.t.Helper()
	if r.status != status {
		s.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	return r
}

func (s *server) mkBoard(id string, body string) {
	s.t.Helper()
	s.must(201, s.do("PUT", "/v1/boards/"+id, adminKey, body))
}

const msBoard = `{"title":"Expert","keys":[{"name":"time_ms","order":"asc"},{"name":"bbbv","order":"desc"}],"mode":"best","public":true}`

func TestWalkthrough(t *testing.T) {
	s := newServer(t)
	r := s.must(201, s.do("PUT", "/v1/boards/ms:expert", adminKey, msBoard)).json(t)
	if r["period"] != "all" || r["next_reset"] != nil || r["mode"] != "best" {
		t.Fatalf("board answer: %v", r)
	}
	s.must(200, s.do("PUT", "/v1/boards/ms:expert", adminKey, msBoard))

	r = s.must(200, s.do("POST", "/v1/boards/ms:expert/scores", adminKey, `{"player":"alice","keys":[41234,150],"meta":{"replay":"r-9f2"}}`)).json(t)
	if r["improved"] != true || r["previous"] != nil || r["entry"].(map[string]any)["rank"].(float64) != 1 {
		t.Fatalf("first submit: %v", r)
	}
	s.must(200, s.do("POST", "/v1/boards/ms:expert/scores", adminKey, `{"player":"bob","keys":[40000,100]}`))
	r = s.must(200, s.do("POST", "/v1/boards/ms:expert/scores", adminKey, `{"player":"alice","keys":[39000,90]}`)).json(t)
	if r["previous"].(map[string]any)["rank"].(float64) != 2 || r["entry"].(map[string]any)["rank"].(float64) != 1 {
		t.Fatalf("improving submit: %v", r)
	}
	s.must(200, s.do("PUT", "/v1/players/bob", adminKey, `{"name":"Bob B."}`))

	top := s.must(200, s.do("GET", "/v1/boards/ms:expert/entries?limit=10", "", nil)).json(t)
	es := top["entries"].([]any)
	if top["total"].(float64) != 2 || len(es) != 2 || top["seq"].(float64) != 3 {
		t.Fatalf("top: %v", top)
	}
	second := es[1].(map[string]any)
	if second["player"] != "bob" || second["name"] != "Bob B." || second["rank"].(float64) != 2 {
		t.Fatalf("second entry: %v", second)
	}
	first := es[0].(map[string]any)
	if first["meta"].(map[string]any)["replay"] != nil {
		t.Fatalf("meta of a later, meta-less best submission should replace: %v", first)
	}

	one := s.must(200, s.do("GET", "/v1/boards/ms:expert/entries/bob", "", nil)).json(t)
	if one["rank"].(float64) != 2 || one["entry"].(map[string]any)["rank"].(float64) != 2 {
		t.Fatalf("one entry: %v", one)
	}
	if c := s.must(404, s.do("GET", "/v1/boards/ms:expert/entries/nobody", "", nil)).errCode(t); c != "entry_not_found" {
		t.Fatal(c)
	}
	around := s.must(200, s.do("GET", "/v1/boards/ms:expert/entries/bob/around?radius=5", "", nil)).json(t)
	if len(around["entries"].([]any)) != 2 {
		t.Fatalf("around: %v", around)
	}
	friends := s.must(200, s.do("GET", "/v1/boards/ms:expert/entries?players=bob,ghost,alice", "", nil)).json(t)
	fe := friends["entries"].([]any)
	if len(fe) != 2 || fe[0].(map[string]any)["player"] != "alice" {
		t.Fatalf("players=: %v", friends)
	}
	per := s.must(200, s.do("GET", "/v1/boards/ms:expert/periods", "", nil)).json(t)
	if fmt.Sprint(per["periods"]) != "[map[entries:2 id:all]]" {
		t.Fatalf("periods: %v", per)
	}
	s.must(204, s.do("DELETE", "/v1/boards/ms:expert/entries/alice", adminKey, nil))
	s.must(404, s.do("GET", "/v1/boards/ms:expert/entries/alice", "", nil))
	s.must(204, s.do("DELETE", "/v1/boards/ms:expert", adminKey, nil))
	s.must(404, s.do("GET", "/v1/boards/ms:expert/entries", "", nil))
}

// TestNoContentTypeIsJSON: a JSON body sent without a Content-Type is read.
func TestNoContentTypeIsJSON(t *testing.T) {
	s := newServer(t)
	s.mkBoard("nc", `{"keys":[{"name":"n","order":"desc"}]}`)
	s.must(200, s.do("POST", "/v1/boards/nc/scores", adminKey, `{"player":"p","score":3}`, "Content-Type", ""))
}

func TestScoreShorthandAndBatch(t *testing.T) {
	s := newServer(t)
	s.mkBoard("one", `{"keys":[{"name":"points","order":"desc"}],"mode":"sum"}`)
	s.mkBoard("two", msBoard)
	r := s.must(200, s.do("POST", "/v1/boards/one/scores", adminKey, `{"player":"p","score":7}`)).json(t)
	if fmt.Sprint(r["entry"].(map[string]any)["keys"]) != "[7]" {
		t.Fatalf("score shorthand: %v", r)
	}
	batch := `{"scores":[
		{"board":"one","player":"p","keys":[3]},
		{"board":"nope","player":"p","keys":[3]},
		{"board":"two","player":"q","keys":[1]},
		{"board":"two","player":"q","keys":[100,5]},
		{"board":"one","player":"p","keys":"bad"},
		{"board":"one","player":"","keys":[1]}]}`
	res := s.must(200, s.do("POST", "/v1/scores", adminKey, batch)).json(t)["results"].([]any)
	want := []string{"", "board_not_found", "invalid_argument", "", "invalid_argument", "invalid_argument"}
	if len(res) != len(want) {
		t.Fatalf("results: %v", res)
	}
	for i, w := range want {
		m := res[i].(map[string]any)
		if w == "" {
			if m["error"] != nil || m["entry"] == nil {
				t.Fatalf("item %d: %v", i, m)
			}
			continue
		}
		if m["error"] == nil || m["error"].(map[string]any)["code"] != w {
			t.Fatalf("item %d: want %s, got %v", i, w, m)
		}
	}
	got := s.must(200, s.do("GET", "/v1/boards/one/entries", adminKey, nil)).json(t)
	if fmt.Sprint(got["entries"].([]any)[0].(map[string]any)["keys"]) != "[10]" {
		t.Fatalf("sum after batch: %v", got)
	}
}

// TestBadInput: every bad request is a clear 4xx JSON error and changes
// nothing.
func TestBadInput(t *testing.T) {
	s := newServer(t)
	s.mkBoard("b", `{"keys":[{"name":"score","order":"desc"}],"mode":"sum","public":true}`)
	s.must(200, s.do("POST", "/v1/boards/b/scores", adminKey, `{"player":"p","score":1}`))
	big := `{"player":"p","score":1,"meta":{"x":"` + strings.Repeat("a", 1<<20) + `"}}`
	many := `{"scores":[` + strings.Repeat(`{"board":"b","player":"p","score":1},`, 10000) + `{"board":"b","player":"p","score":1}]}`
	tests := []struct {
		name, method, path, key, body string
		hdr                           []string
		status                        int
		code                          string
	}{
		{"malformed", "POST", "/v1/boards/b/scores", adminKey, `{"player":`, nil, 400, "invalid_json"},
		{"not an object", "POST", "/v1/boards/b/scores", adminKey, `[1,2]`, nil, 400, "invalid_argument"},
		{"trailing data", "POST", "/v1/boards/b/scores", adminKey, `{"player":"p","score":1} {}`, nil, 400, "invalid_json"},
		{"empty", "POST", "/v1/boards/b/scores", adminKey, ``, nil, 400, "invalid_json"},
		{"unknown field", "POST", "/v1/boards/b/scores", adminKey, `{"player":"p","scroe":1}`, nil, 400, "invalid_argument"},
		{"float key", "POST", "/v1/boards/b/scores", adminKey, `{"player":"p","keys":[1.5]}`, nil, 400, "invalid_argument"},
		{"above int64", "POST", "/v1/boards/b/scores", adminKey, `{"player":"p","keys":[9223372036854775808]}`, nil, 400, "invalid_argument"},
		{"string key", "POST", "/v1/boards/b/scores", adminKey, `{"player":"p","keys":["1"]}`, nil, 400, "invalid_argument"},
		{"too many keys", "POST", "/v1/boards/b/scores", adminKey, `{"player":"p","keys":[1,2]}`, nil, 400, "invalid_argument"},
		{"keys and score", "POST", "/v1/boards/b/scores", adminKey, `{"player":"p","keys":[1],"score":1}`, nil, 400, "invalid_argument"},
		{"no player", "POST", "/v1/boards/b/scores", adminKey, `{"score":1}`, nil, 400, "invalid_argument"},
		{"control char player", "POST", "/v1/boards/b/scores", adminKey, `{"player":"a\u0007b","score":1}`, nil, 400, "invalid_argument"},
		{"long player", "POST", "/v1/boards/b/scores", adminKey, `{"player":"` + strings.Repeat("x", 129) + `","score":1}`, nil, 400, "invalid_argument"},
		{"meta not object", "POST", "/v1/boards/b/scores", adminKey, `{"player":"p","score":1,"meta":[1]}`, nil, 400, "invalid_argument"},
		{"body too large", "POST", "/v1/boards/b/scores", adminKey, big, nil, 413, "too_large"},
		{"batch too many", "POST", "/v1/scores", adminKey, many, nil, 413, "too_large"},
		{"wrong content type", "POST", "/v1/boards/b/scores", adminKey, `{"player":"p","score":1}`, []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type"},
		{"form content type", "POST", "/v1/boards/b/scores", adminKey, `player=p&score=1`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "unsupported_media_type"},
		{"unknown board", "POST", "/v1/boards/zz/scores", adminKey, `{"player":"p","score":1}`, nil, 404, "board_not_found"},
		{"no key", "POST", "/v1/boards/b/scores", "", `{"player":"p","score":1}`, nil, 401, "unauthenticated"},
		{"bad key", "POST", "/v1/boards/b/scores", "nope", `{"player":"p","score":1}`, nil, 401, "unauthenticated"},
		{"bad key on public read", "GET", "/v1/boards/b/entries", "nope", ``, nil, 401, "unauthenticated"},
		{"limit 0", "GET", "/v1/boards/b/entries?limit=0", "", ``, nil, 400, "invalid_argument"},
		{"limit 1001", "GET", "/v1/boards/b/entries?limit=1001", "", ``, nil, 400, "invalid_argument"},
		{"offset -1", "GET", "/v1/boards/b/entries?offset=-1", "", ``, nil, 400, "invalid_argument"},
		{"bad period", "GET", "/v1/boards/b/entries?period=2026-11-30", "", ``, nil, 400, "invalid_argument"},
		{"previous of never", "GET", "/v1/boards/b/entries?period=previous", "", ``, nil, 400, "invalid_argument"},
		{"hidden needs a key", "GET", "/v1/boards/b/entries?include_hidden=true", "", ``, nil, 401, "unauthenticated"},
		{"bad board id", "PUT", "/v1/boards/Bad!", adminKey, msBoard, nil, 400, "invalid_argument"},
		{"five keys", "PUT", "/v1/boards/x", adminKey, `{"keys":[{"name":"a","order":"asc"},{"name":"b","order":"asc"},{"name":"c","order":"asc"},{"name":"d","order":"asc"},{"name":"e","order":"asc"}]}`, nil, 400, "invalid_argument"},
		{"no keys", "PUT", "/v1/boards/x", adminKey, `{"keys":[]}`, nil, 400, "invalid_argument"},
		{"bad order", "PUT", "/v1/boards/x", adminKey, `{"keys":[{"name":"a","order":"up"}]}`, nil, 400, "invalid_argument"},
		{"bad mode", "PUT", "/v1/boards/x", adminKey, `{"keys":[{"name":"a","order":"asc"}],"mode":"max"}`, nil, 400, "invalid_argument"},
		{"bad tz", "PUT", "/v1/boards/x", adminKey, `{"keys":[{"name":"a","order":"asc"}],"reset":{"every":"day","tz":"Mars/Olympus"}}`, nil, 400, "invalid_argument"},
		{"bad every", "PUT", "/v1/boards/x", adminKey, `{"keys":[{"name":"a","order":"asc"}],"reset":{"every":"hour"}}`, nil, 400, "invalid_argument"},
		{"change keys with entries", "PUT", "/v1/boards/b", adminKey, `{"keys":[{"name":"score","order":"asc"}],"mode":"sum"}`, nil, 409, "conflict"},
		{"method not allowed", "PATCH", "/v1/boards/b", adminKey, `{}`, nil, 405, "method_not_allowed"},
		{"unknown route", "GET", "/v1/nothing", "", ``, nil, 404, "not_found"},
		{"bad scope", "POST", "/v1/keys", adminKey, `{"name":"k","scopes":["root"]}`, nil, 400, "invalid_argument"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(tc.method, tc.path, tc.key, tc.body, tc.hdr...)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if c := r.errCode(t); c != tc.code {
				t.Fatalf("code %s, want %s", c, tc.code)
			}
		})
	}
	// Nothing changed: still one entry with score 1, and no board x.
	got := s.must(200, s.do("GET", "/v1/boards/b/entries", "", nil)).json(t)
	if got["total"].(float64) != 1 || fmt.Sprint(got["entries"].([]any)[0].(map[string]any)["keys"]) != "[1]" || got["seq"].(float64) != 1 {
		t.Fatalf("state changed by bad requests: %v", got)
	}
	s.must(404, s.do("GET", "/v1/boards/x", adminKey, nil))
}

func TestKeysAndScopes(t *testing.T) {
	s := newServer(t)
	s.mkBoard("ms:expert", `{"keys":[{"name":"t","order":"asc"}]}`) // private
	s.mkBoard("other", `{"keys":[{"name":"t","order":"asc"}]}`)
	k := s.must(201, s.do("POST", "/v1/keys", adminKey, `{"name":"game-server","scopes":["submit","read"],"boards":["ms:"]}`)).json(t)
	secret := k["key"].(string)
	id := k["id"].(string)
	s.must(200, s.do("POST", "/v1/boards/ms:expert/scores", secret, `{"player":"p","score":5}`))
	s.must(200, s.do("GET", "/v1/boards/ms:expert/entries", secret, nil))
	if c := s.must(403, s.do("POST", "/v1/boards/other/scores", secret, `{"player":"p","score":5}`)).errCode(t); c != "forbidden" {
		t.Fatal(c)
	}
	s.must(403, s.do("PUT", "/v1/boards/ms:new", secret, msBoard))
	s.must(403, s.do("POST", "/v1/keys", secret, `{"name":"x","scopes":["read"]}`))
	s.must(404, s.do("GET", "/v1/boards/ms:expert/entries", "", nil)) // private: unknown to who may not read it
	list := s.must(200, s.do("GET", "/v1/keys", adminKey, nil))
	if bytes.Contains(list.body, []byte(secret)) || !bytes.Contains(list.body, []byte(id)) {
		t.Fatalf("key list: %s", list.body)
	}
	boards := s.must(200, s.do("GET", "/v1/boards", secret, nil)).json(t)["boards"].([]any)
	if len(boards) != 1 {
		t.Fatalf("a key limited to ms: sees %d boards", len(boards))
	}
	s.must(204, s.do("DELETE", "/v1/keys/"+id, adminKey, nil))
	s.must(401, s.do("GET", "/v1/boards/ms:expert/entries", secret, nil))
	s.must(404, s.do("DELETE", "/v1/keys/"+id, adminKey, nil))
}

func TestIdempotencyKey(t *testing.T) {
	s := newServer(t)
	s.mkBoard("c", `{"keys":[{"name":"n","order":"desc"}],"mode":"sum"}`)
	a := s.must(200, s.do("POST", "/v1/boards/c/scores", adminKey, `{"player":"p","score":5}`, "Idempotency-Key", "k-1"))
	b := s.must(200, s.do("POST", "/v1/boards/c/scores", adminKey, `{"player":"p","score":5}`, "Idempotency-Key", "k-1"))
	if !bytes.Equal(a.body, b.body) || b.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry answered differently:\n%s\n%s", a.body, b.body)
	}
	if c := s.must(409, s.do("POST", "/v1/boards/c/scores", adminKey, `{"player":"p","score":6}`, "Idempotency-Key", "k-1")).errCode(t); c != "conflict" {
		t.Fatal(c)
	}
	// Concurrent duplicates apply once.
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.do("POST", "/v1/boards/c/scores", adminKey, `{"player":"p","score":100}`, "Idempotency-Key", "k-2")
		}()
	}
	wg.Wait()
	got := s.must(200, s.do("GET", "/v1/boards/c/entries/p", adminKey, nil)).json(t)
	if fmt.Sprint(got["keys"]) != "[105]" {
		t.Fatalf("sum after idempotent retries: %v", got["keys"])
	}
	// A bad request does not use up the key.
	s.must(400, s.do("POST", "/v1/boards/c/scores", adminKey, `{"player":"p","score":"x"}`, "Idempotency-Key", "k-3"))
	s.must(200, s.do("POST", "/v1/boards/c/scores", adminKey, `{"player":"p","score":1}`, "Idempotency-Key", "k-3"))
}

func TestPeriodsOverHTTP(t *testing.T) {
	s := newServer(t)
	s.mkBoard("d", `{"keys":[{"name":"n","order":"desc"}],"reset":{"every":"day","tz":"Asia/Shanghai"},"public":true}`)
	b := s.must(200, s.do("GET", "/v1/boards/d", "", nil)).json(t)
	// 10:00 UTC is 18:00 in Shanghai: the day ends at 16:00 UTC.
	if b["period"] != "2026-11-30" || b["next_reset"] != "2026-11-30T16:00:00.000Z" {
		t.Fatalf("board: %v", b)
	}
	s.must(200, s.do("POST", "/v1/boards/d/scores", adminKey, `{"player":"a","score":1}`))
	s.clock.Add(7 * time.Hour)
	r := s.must(200, s.do("POST", "/v1/boards/d/scores", adminKey, `{"player":"b","score":2}`)).json(t)
	if r["period"] != "2026-12-01" {
		t.Fatalf("after reset: %v", r)
	}
	prev := s.must(200, s.do("GET", "/v1/boards/d/entries?period=previous", "", nil)).json(t)
	if prev["period"] != "2026-11-30" || prev["total"].(float64) != 1 {
		t.Fatalf("previous: %v", prev)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	s := newServer(t)
	s.must(200, s.do("GET", "/healthz", "", nil))
	s.must(200, s.do("GET", "/readyz", "", nil))
	s.mkBoard("m", `{"keys":[{"name":"n","order":"desc"}]}`)
	s.must(200, s.do("POST", "/v1/boards/m/scores", adminKey, `{"player":"a","score":1}`))
	m := s.must(200, s.do("GET", "/metrics", "", nil))
	for _, want := range []string{"podium_http_requests_total", "podium_http_request_seconds"} {
		if !bytes.Contains(m.body, []byte(want)) {
			t.Fatalf("metrics lack %s", want)
		}
	}
}
