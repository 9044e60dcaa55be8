package http_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/stream"
)

// Board quotas and key bounds through the HTTP API (issue 9, sections 2
// and 3), on SQLite and on two PostgreSQL nodes.

func TestQuotaAndBoundsSQLite(t *testing.T) {
	s := newServer(t)
	quotaScenario(t, s, s)
}

func TestQuotaAndBoundsPostgres(t *testing.T) {
	dsn, schema := pgtest.Schema(t)
	clk := &fakeClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	quotaScenario(t, startQuotaNode(t, dsn, schema, clk, "a"), startQuotaNode(t, dsn, schema, clk, "b"))
}

// startQuotaNode starts an engine and HTTP server on PostgreSQL, a node of
// a cluster whose nodes hear of each other through a LISTEN/NOTIFY broker.
func startQuotaNode(t *testing.T, dsn, schema string, clk *fakeClock, name string) *server {
	t.Helper()
	st, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	br, err := postgres.NewBroker(dsn, postgres.BrokerOptions{Env: schema, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	eng := modules.Engine(engine.Config{Store: st, Broker: br, Now: clk.Now, Logger: log, Node: name, PollEvery: 50 * time.Millisecond})
	eng.Keys().SetAdminSecret(adminKey)
	hub := stream.New(podiumhttp.StreamSource(eng), stream.Config{Logger: log})
	eng.SetListener(hub)
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := podiumhttp.New(podiumhttp.Config{Engine: eng, Store: st, Logger: log, Hub: hub})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hub.Close()
		ts.Close()
		eng.Close()
		br.Close()
		st.Close()
	})
	return &server{t: t, url: ts.URL, clock: clk, eng: eng, hub: hub, srv: srv}
}

// post sends a submission without failing the test from a goroutine: it
// returns the status, 0 if the request failed.
func post(url, path, body string) int {
	req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+adminKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// quotaScenario runs on nodes a and b (the same server on SQLite); the
// clock is at 10:00 UTC on 2026-11-30.
func quotaScenario(t *testing.T, a, b *server) {
	const board = `{"title": "Daily puzzle", "keys": [{"name": "time_ms", "order": "asc", "min": 1000, "max": 3600000}],
		"reset": {"every": "day"}, "quota": {"max": 3}, "public": true}`
	r := a.must(201, a.do("PUT", "/v1/boards/daily", adminKey, board))
	const keys = `"keys":[{"name":"time_ms","order":"asc","min":1000,"max":3600000}]`
	if !bytes.Contains(r.body, []byte(keys)) || !bytes.Contains(r.body, []byte(`"quota":{"max":3}`)) {
		t.Fatalf("board answer without its bounds and quota: %s", r.body)
	}
	// Bad limits are refused and change nothing.
	for _, c := range []struct {
		body, code string
		status     int
	}{
		{`{"keys": [{"name": "time_ms", "order": "asc", "min": 10, "max": 9}]}`, "invalid_argument", 400},
		{`{"quota": {"max": -1}}`, "invalid_argument", 400},
		{`{"quota": {"max": 3, "per": "hour"}}`, "invalid_argument", 400},
		{`{"keys": [{"name": "time_ms", "order": "asc", "min": "1"}]}`, "invalid_argument", 400},
	} {
		if code := a.must(c.status, a.do("PUT", "/v1/boards/daily", adminKey, c.body)).errCode(t); code != c.code {
			t.Fatalf("PUT %s: %s, want %s", c.body, code, c.code)
		}
	}
	a.must(201, a.do("PUT", "/v1/boards/sources", adminKey, `{"keys": [{"name": "p", "order": "desc"}]}`))
	if code := a.must(422, a.do("PUT", "/v1/boards/agg", adminKey, `{"keys": [{"name": "p", "order": "desc", "min": 0}],
		"aggregate": {"kind": "sum_of_bests", "sources": [{"board": "sources"}]}}`)).errCode(t); code != "unprocessable" {
		t.Fatalf("bounds on an aggregate board: %s", code)
	}
	// A PUT that leaves keys and quota out keeps them, on both nodes.
	a.must(200, a.do("PUT", "/v1/boards/daily", adminKey, `{"title": "Today's puzzle"}`))
	for _, n := range []*server{a, b} {
		quotaWait(t, func() bool {
			got := n.do("GET", "/v1/boards/daily", "", nil).body
			return bytes.Contains(got, []byte(keys)) && bytes.Contains(got, []byte(`"quota":{"max":3}`)) && bytes.Contains(got, []byte("Today's puzzle"))
		}, "the board with its limits after a PUT without them")
	}

	// Bounds: 422 naming the key and the bound; nothing is stored, and
	// nothing counts against the quota.
	for v, want := range map[int64]string{999: `key "time_ms" must be >= 1000; 999 given`, 3600001: `key "time_ms" must be <= 3600000; 3600001 given`} {
		r := b.must(422, b.do("POST", "/v1/boards/daily/scores", adminKey, fmt.Sprintf(`{"player": "alice", "score": %d}`, v)))
		if msg := r.json(t)["error"].(map[string]any)["message"]; r.errCode(t) != "unprocessable" || msg != want {
			t.Fatalf("score %d: %s; want the message %s", v, r.body, want)
		}
	}
	r = a.must(200, a.do("POST", "/v1/scores", adminKey, `{"scores": [{"board": "daily", "player": "alice", "keys": [5]},
		{"board": "daily", "player": "carol", "keys": [2000]}]}`))
	items := r.json(t)["results"].([]any)
	if e, _ := items[0].(map[string]any)["error"].(map[string]any); e == nil || e["code"] != "unprocessable" ||
		e["message"] != `key "time_ms" must be >= 1000; 5 given` || items[1].(map[string]any)["player"] != "carol" {
		t.Fatalf("batch with a value out of bounds: %s", r.body)
	}
	// Only carol's entry; seq 1 says that nothing else was logged.
	for _, n := range []*server{a, b} {
		quotaWait(t, func() bool {
			got := n.do("GET", "/v1/boards/daily/entries", "", nil).json(t)
			return got["total"] == 1.0 && got["seq"] == 1.0
		}, "carol's entry alone")
	}

	// An Idempotency-Key retry returns the first answer and is not
	// counted: alice's 3 are the first and two more, on either node.
	first := a.must(200, a.do("POST", "/v1/boards/daily/scores", adminKey, `{"player": "alice", "score": 5000}`, "Idempotency-Key", "alice-1"))
	for _, n := range []*server{a, b} {
		again := n.must(200, n.do("POST", "/v1/boards/daily/scores", adminKey, `{"player": "alice", "score": 5000}`, "Idempotency-Key", "alice-1"))
		if !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry answered\n%s\nnot\n%s", again.body, first.body)
		}
	}
	b.must(200, b.do("POST", "/v1/boards/daily/scores", adminKey, `{"player": "alice", "score": 4000}`))
	a.must(200, a.do("POST", "/v1/boards/daily/scores", adminKey, `{"player": "alice", "score": 4500}`))
	// The 4th: 429 with Retry-After (14 hours to midnight) and resets_at.
	for _, n := range []*server{a, b} {
		r := n.must(429, n.do("POST", "/v1/boards/daily/scores", adminKey, `{"player": "alice", "score": 3000}`))
		if r.errCode(t) != "quota_exceeded" || r.header.Get("Retry-After") != "50400" ||
			r.json(t)["error"].(map[string]any)["resets_at"] != "2026-12-01T00:00:00.000Z" {
			t.Fatalf("over the quota: Retry-After %q, %s", r.header.Get("Retry-After"), r.body)
		}
	}
	// Still replayed, not refused, once the quota is used up.
	a.must(200, a.do("POST", "/v1/boards/daily/scores", adminKey, `{"player": "alice", "score": 5000}`, "Idempotency-Key", "alice-1"))
	// Over the quota in a batch: that item's error, with resets_at.
	r = b.must(200, b.do("POST", "/v1/scores", adminKey, `{"scores": [{"board": "daily", "player": "alice", "keys": [2500]}]}`))
	if !bytes.Contains(r.body, []byte(`"code":"quota_exceeded"`)) || !bytes.Contains(r.body, []byte(`"resets_at":"2026-12-01T00:00:00.000Z"`)) {
		t.Fatalf("batch over the quota: %s", r.body)
	}

	// 32 concurrent attempts of one player, split across the nodes, admit
	// exactly 3.
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := a
			if i%2 == 1 {
				n = b
			}
			st := post(n.url, "/v1/boards/daily/scores", fmt.Sprintf(`{"player": "dave", "score": %d}`, 10000+i))
			mu.Lock()
			counts[st]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if counts[200] != 3 || counts[429] != 29 {
		t.Fatalf("32 concurrent attempts answered %v; want 3 × 200 and 29 × 429", counts)
	}
	for _, n := range []*server{a, b} {
		quotaWait(t, func() bool {
			got := n.do("GET", "/v1/boards/daily/entries", "", nil).json(t)
			return got["total"] == 3.0 && fmt.Sprint(got["seq"]) == "7" // carol 1, alice 3, dave 3
		}, "the entries of the day")
	}

	// Bounds may change on a board with entries (they do not change the
	// ranking); the entries stay, on both nodes, and the new bounds hold.
	r = b.must(200, b.do("PUT", "/v1/boards/daily", adminKey, `{"keys": [{"name": "time_ms", "order": "asc", "min": 2000}]}`))
	if !bytes.Contains(r.body, []byte(`"keys":[{"name":"time_ms","order":"asc","min":2000}]`)) {
		t.Fatalf("board after new bounds: %s", r.body)
	}
	for _, n := range []*server{a, b} {
		quotaWait(t, func() bool {
			got := n.do("GET", "/v1/boards/daily/entries", "", nil).json(t)
			return got["total"] == 3.0 && bytes.Contains(n.do("GET", "/v1/boards/daily", "", nil).body, []byte(`"min":2000}`))
		}, "the entries under the new bounds")
	}
	a.must(422, a.do("POST", "/v1/boards/daily/scores", adminKey, `{"player": "erin", "score": 1500}`))

	// The next day brings a new quota.
	a.clock.Add(14 * time.Hour)
	for _, n := range []*server{a, b} {
		n.must(200, n.do("POST", "/v1/boards/daily/scores", adminKey, `{"player": "alice", "score": 3000}`))
	}
}

// quotaWait waits up to 10 seconds for cond.
func quotaWait(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
