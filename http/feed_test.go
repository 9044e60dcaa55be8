package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/stream"
)

// startNode starts an engine, its hub and an HTTP server over st.
func startNode(t *testing.T, st podium.Store, clk *fakeClock, name string) *server {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := modules.Engine(engine.Config{Store: st, Now: clk.Now, Logger: log, Node: name, PollEvery: 50 * time.Millisecond})
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
	})
	return &server{t: t, url: ts.URL, clock: clk, eng: eng, hub: hub, srv: srv}
}

// feedBackends runs fn with two servers on one database: the same node
// twice on SQLite, two nodes on one PostgreSQL schema.
func feedBackends(t *testing.T, fn func(t *testing.T, a, b *server)) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		a := startNode(t, st, &fakeClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}, "a")
		fn(t, a, a)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn, _ := pgtest.Schema(t)
		clk := &fakeClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
		var nodes []*server
		for _, name := range []string{"a", "b"} {
			st, err := postgres.Open(context.Background(), dsn, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			nodes = append(nodes, startNode(t, st, clk, name))
		}
		fn(t, nodes[0], nodes[1])
	})
}

type feedAnswer struct {
	Board  *string          `json:"board"`
	Limit  int              `json:"limit"`
	Events []map[string]any `json:"events"`
}

func (s *server) getFeed(query, key string) feedAnswer {
	s.t.Helper()
	r := s.must(200, s.do("GET", "/v1/feed"+query, key, nil))
	var a feedAnswer
	if err := json.Unmarshal(r.body, &a); err != nil {
		s.t.Fatalf("feed answer %s: %v", r.body, err)
	}
	return a
}

// eventLine renders an event of the API for comparisons.
func eventLine(ev map[string]any) string {
	j := func(k string) string {
		v, ok := ev[k]
		if !ok {
			return "-"
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	s := fmt.Sprintf("%s %s %s %s keys=%s", ev["id"], ev["kind"], ev["player"], ev["name"], j("keys"))
	switch ev["kind"] {
	case "personal_best":
		s += " old=" + j("old")
	case "new_leader":
		s += " old=" + j("old") + " from=" + j("previous_player") + "/" + j("previous_name")
	}
	return s
}

func feedLines(a feedAnswer) []string {
	out := []string{}
	for _, ev := range a.Events {
		out = append(out, eventLine(ev))
	}
	return out
}

// A personal best with old value null then a number, a new #1, the limit,
// private boards and the all-boards feed, through the API; on PostgreSQL
// written on one node and read on the other.
func TestFeedAPI(t *testing.T) {
	feedBackends(t, func(t *testing.T, a, b *server) {
		a.mkBoard("exp", `{"title":"Expert","keys":[{"name":"time_ms","order":"asc"}],"mode":"best","public":true}`)
		a.must(200, a.do("PUT", "/v1/players/bob", adminKey, `{"name":"Bob B."}`))
		a.must(200, a.do("POST", "/v1/boards/exp/scores", adminKey, `{"player":"alice","keys":[41000]}`))
		a.must(200, a.do("POST", "/v1/boards/exp/scores", adminKey, `{"player":"bob","keys":[40000]}`))
		a.must(200, a.do("POST", "/v1/boards/exp/scores", adminKey, `{"player":"alice","keys":[39000]}`))
		want := []string{
			`exp/3/new_leader new_leader alice alice keys=[39000] old=[40000] from="bob"/"Bob B."`,
			`exp/3/personal_best personal_best alice alice keys=[39000] old=[41000]`,
			`exp/2/new_leader new_leader bob Bob B. keys=[40000] old=[41000] from="alice"/"alice"`,
			`exp/2/personal_best personal_best bob Bob B. keys=[40000] old=null`,
			`exp/1/new_leader new_leader alice alice keys=[41000] old=null from=null/null`,
			`exp/1/personal_best personal_best alice alice keys=[41000] old=null`,
		}
		// Node b follows the database: wait for the events only. Bob's
		// name, set before his score, comes no later than the score's
		// events (engine.findNews; CI once saw it lag a round).
		var got feedAnswer
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			r := b.do("GET", "/v1/feed?board=exp", "", nil)
			if r.status == 200 && len(b.getFeed("?board=exp", "").Events) == len(want) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		got = b.getFeed("?board=exp", "")
		if !slices.Equal(feedLines(got), want) {
			t.Fatalf("feed of exp:\n got %q\nwant %q", feedLines(got), want)
		}
		if got.Board == nil || *got.Board != "exp" || got.Limit != 50 {
			t.Errorf("feed answer head: board %v limit %d", got.Board, got.Limit)
		}
		ev := got.Events[0]
		if ev["title"] != "Expert" || ev["period"] != "all" || ev["seq"] != 3.0 || ev["at"] != "2026-11-30T10:00:00.000Z" {
			t.Errorf("event fields: %v", ev)
		}
		if l := feedLines(b.getFeed("?board=exp&limit=2", "")); !slices.Equal(l, want[:2]) {
			t.Errorf("limit=2: %q", l)
		}

		// A private board: only a key that reads it sees its events, in its
		// feed and in the all-boards feed.
		a.mkBoard("secret", `{"keys":[{"name":"pts","order":"desc"}],"mode":"sum","public":false}`)
		a.must(200, a.do("POST", "/v1/boards/secret/scores", adminKey, `{"player":"carol","keys":[5]}`))
		reader := a.must(201, a.do("POST", "/v1/keys", adminKey, `{"name":"r","scopes":["read"],"boards":["secret"]}`)).json(t)["key"].(string)
		other := a.must(201, a.do("POST", "/v1/keys", adminKey, `{"name":"o","scopes":["read"],"boards":["exp"]}`)).json(t)["key"].(string)
		deadline = time.Now().Add(5 * time.Second)
		for {
			r := b.do("GET", "/v1/feed?board=secret", reader, nil)
			if r.status == 200 && len(b.getFeed("?board=secret", reader).Events) == 1 || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		for b.do("GET", "/v1/feed?board=exp", other, nil).status == 401 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond) // node b learns of the key
		}
		if l := feedLines(b.getFeed("?board=secret", reader)); !slices.Equal(l, []string{`secret/1/new_leader new_leader carol carol keys=[5] old=null from=null/null`}) {
			t.Errorf("private board's feed with a reading key: %q", l)
		}
		if code := b.do("GET", "/v1/feed?board=secret", "", nil).errCode(t); code != "board_not_found" {
			t.Errorf("private board's feed without a key: %s", code)
		}
		if r := b.do("GET", "/v1/feed?board=secret", other, nil); r.status != 404 || r.errCode(t) != "board_not_found" {
			t.Errorf("private board's feed with another board's key: %d %s", r.status, r.body)
		}
		if all := b.getFeed("", ""); len(all.Events) != 6 || all.Board != nil {
			t.Errorf("all-boards feed without a key: %q", feedLines(all))
		}
		if all := b.getFeed("?limit=1", reader); len(all.Events) != 1 || all.Events[0]["board"] != "secret" {
			t.Errorf("all-boards feed with the private board's key: %q", feedLines(all))
		}
		// Made public, its events show to everyone; private again, they stop.
		a.must(200, a.do("PUT", "/v1/boards/secret", adminKey, `{"public":true}`))
		deadline = time.Now().Add(5 * time.Second)
		for len(b.getFeed("", "").Events) != 7 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := len(b.getFeed("", "").Events); n != 7 {
			t.Errorf("after the board was made public, the all-boards feed has %d events, want 7", n)
		}
		a.must(200, a.do("PUT", "/v1/boards/secret", adminKey, `{"public":false}`))
		deadline = time.Now().Add(5 * time.Second)
		for len(b.getFeed("", "").Events) != 6 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := len(b.getFeed("", "").Events); n != 6 {
			t.Errorf("after the board was made private again, the all-boards feed has %d events, want 6", n)
		}

		// Bad requests change nothing and say what is wrong.
		for _, c := range []struct {
			query, code string
			status      int
		}{
			{"?board=nope", "board_not_found", 404},
			{"?board=Bad!", "invalid_argument", 400},
			{"?board=", "invalid_argument", 400},
			{"?limit=0", "invalid_argument", 400},
			{"?limit=201", "invalid_argument", 400},
			{"?limit=x", "invalid_argument", 400},
			{"?period=all", "invalid_argument", 400},
			{"?board=exp&board=exp", "invalid_argument", 400},
		} {
			r := b.do("GET", "/v1/feed"+c.query, "", nil)
			if r.status != c.status || r.errCode(t) != c.code {
				t.Errorf("GET /v1/feed%s = %d %s, want %d %s", c.query, r.status, r.body, c.status, c.code)
			}
		}
		if r := b.do("GET", "/v1/feed", "not-a-key", nil); r.status != 401 {
			t.Errorf("a bad key: %d %s", r.status, r.body)
		}
	})
}
