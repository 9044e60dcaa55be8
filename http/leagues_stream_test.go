package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/league"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/stream"
	"github.com/podiumhq/podium/tournament"
)

// cohortOrder is a cohort snapshot's players and zones, in rank order.
func cohortOrder(ev sseEvent) string {
	out := ""
	for _, e := range ev.Data["entries"].([]any) {
		m := e.(map[string]any)
		out += fmt.Sprintf("%v:%v ", m["player"], m["zone"])
	}
	return out
}

// nextCohort waits for a snapshot whose order is want; snapshots on the
// way are intermediate states of a burst (each differs from the one
// before it).
func nextCohort(t *testing.T, c *sseClient, want string) sseEvent {
	t.Helper()
	var last sseEvent
	for range 1000 {
		ev := c.next(10 * time.Second)
		if ev.Type != "snapshot" {
			t.Fatalf("event %+v, want a snapshot with %q (last %q)", ev, want, cohortOrder(last))
		}
		if last.Type != "" && fmt.Sprint(last.Data) == fmt.Sprint(ev.Data) {
			t.Fatalf("a snapshot repeated the one before it: %v", ev.Data)
		}
		if cohortOrder(ev) == want {
			return ev
		}
		last = ev
	}
	t.Fatalf("never saw %q", want)
	return sseEvent{}
}

func TestLeagueCohortStreamSQLite(t *testing.T) {
	cohortStreamScenario(t, sqliteStore(t))
}

func TestLeagueCohortStreamPostgres(t *testing.T) {
	cohortStreamScenario(t, postgresStore(t))
}

// cohortStreamScenario: a player's cohort stream starts with the cohort
// read's document, follows changes of its members and ignores other
// cohorts', moves to the player's next cohort when they play the next
// week, and ends with an error when the board is deleted. Refusals match
// the cohort read's.
func cohortStreamScenario(t *testing.T, st podium.Store) {
	week1 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // a Monday
	s := newLeagueServer(t, st, week1)
	set := func(at time.Time) { s.clock.mu.Lock(); s.clock.t = at; s.clock.mu.Unlock() }
	s.must(201, s.do("PUT", "/v1/boards/xp", adminKey, `{"title": "XP league", "public": true,
		"keys": [{"name": "xp", "order": "desc"}], "mode": "sum", "reset": {"every": "week", "tz": "UTC"},
		"league": {"cohort_size": 3, "tiers": [{"name": "bronze", "promote": 1}, {"name": "silver", "relegate": 1}]}}`))
	s.must(201, s.do("PUT", "/v1/boards/plain", adminKey, oneKey))
	for i, p := range []string{"amy", "bob", "cid", "dan"} {
		s.score2("xp", p, 10*(i+1))
	}
	const path = "/v1/leagues/xp/players/%s/cohort/stream"
	s.must(404, s.do("GET", fmt.Sprintf(path, "eve"), "", nil)) // not placed this period
	s.must(404, s.do("GET", "/v1/leagues/plain/players/amy/cohort/stream", "", nil))
	s.must(404, s.do("GET", "/v1/leagues/nope/players/amy/cohort/stream", "", nil))
	s.must(400, s.do("GET", "/v1/leagues/xp/players/%20/cohort/stream", "", nil))

	c := s.openSSE(fmt.Sprintf(path, "amy"), "")
	ev := c.next(10 * time.Second)
	read := s.must(200, s.do("GET", "/v1/leagues/xp/players/amy/cohort", "", nil)).json(t)
	if ev.Type != "snapshot" || ev.Data["total"] != 3.0 || ev.Data["period"] != "2026-W49" {
		t.Fatalf("first event %+v", ev)
	}
	for k, v := range read {
		if fmt.Sprint(ev.Data[k]) != fmt.Sprint(v) {
			t.Fatalf("snapshot's %s = %v, the cohort read's %v", k, ev.Data[k], v)
		}
	}
	if got := cohortOrder(ev); got != "cid:promotion bob:safe amy:safe " {
		t.Fatalf("first snapshot %q", got)
	}
	// dan is in cohort 1: his score changes nothing of amy's cohort, so
	// the next snapshot is amy's move (a snapshot equal to the last is
	// never sent: nextCohort fails on a repeat).
	s.score2("xp", "dan", 500)
	s.score2("xp", "amy", 100)
	nextCohort(t, c, "amy:promotion cid:safe bob:safe ")
	// A burst converges on its last state.
	for i := range 30 {
		s.score2("xp", "bob", 10)
		s.score2("xp", "cid", 11+i%2)
	}
	nextCohort(t, c, "cid:promotion bob:safe amy:safe ")

	// Week 2: amy's stream keeps week 1's cohort until she plays week 2.
	set(week1.Add(7 * 24 * time.Hour))
	s.must(200, s.do("POST", "/v1/leagues/xp/settle", adminKey, nil))
	s.score2("xp", "amy", 5)
	ev = nextCohort(t, c, "amy:promotion ")
	if ev.Data["period"] != "2026-W50" || ev.Data["tier"] != "bronze" || ev.Data["cohort"] != 0.0 {
		t.Fatalf("week 2 snapshot %v", ev.Data)
	}
	s.score2("xp", "cid", 7) // promoted: silver, another cohort
	s.score2("xp", "bob", 9)
	nextCohort(t, c, "bob:promotion amy:safe ")

	// A private league: the stream asks what the cohort read asks.
	s.must(201, s.do("PUT", "/v1/boards/priv", adminKey, `{"keys": [{"name": "xp", "order": "desc"}], "mode": "sum",
		"reset": {"every": "week", "tz": "UTC"}, "league": {"cohort_size": 3, "tiers": [{"name": "bronze"}]}}`))
	s.score2("priv", "amy", 1)
	anon := s.do("GET", "/v1/leagues/priv/players/amy/cohort", "", nil).status
	s.must(anon, s.do("GET", "/v1/leagues/priv/players/amy/cohort/stream", "", nil))
	if anon < 400 {
		t.Fatalf("a private league's cohort read answers %d without a key", anon)
	}
	pc := s.openSSE("/v1/leagues/priv/players/amy/cohort/stream", "", adminKey)
	if ev := pc.next(10 * time.Second); ev.Type != "snapshot" || cohortOrder(ev) != "amy:safe " {
		t.Fatalf("private stream %+v", ev)
	}

	// Made private: the anonymous stream ends with the read's refusal;
	// one with a key goes on, until the board is deleted.
	keyed := s.openSSE(fmt.Sprintf(path, "amy"), "", adminKey)
	if ev := keyed.next(10 * time.Second); ev.Type != "snapshot" || cohortOrder(ev) != "bob:promotion amy:safe " {
		t.Fatalf("keyed stream %+v", ev)
	}
	s.must(200, s.do("PUT", "/v1/boards/xp", adminKey, `{"title": "XP league", "public": false,
		"keys": [{"name": "xp", "order": "desc"}], "mode": "sum", "reset": {"every": "week", "tz": "UTC"},
		"league": {"cohort_size": 3, "tiers": [{"name": "bronze", "promote": 1}, {"name": "silver", "relegate": 1}]}}`))
	refused := s.do("GET", "/v1/leagues/xp/players/amy/cohort", "", nil).errCode(t)
	if ev := c.next(10 * time.Second); ev.Type != "error" || ev.Data["code"] != refused {
		t.Fatalf("after private %+v, want %s", ev, refused)
	}
	if _, ok := <-c.events; ok {
		t.Fatal("the stream went on after its error")
	}
	// Deleted: an error event ends the stream.
	s.must(204, s.do("DELETE", "/v1/boards/xp", adminKey, nil))
	if ev := keyed.next(10 * time.Second); ev.Type != "error" || ev.Data["code"] != podium.ECodeBoardNotFound {
		t.Fatalf("after delete %+v", ev)
	}
	if _, ok := <-keyed.events; ok {
		t.Fatal("the stream went on after its error")
	}
}

// score2 posts one score with a single key.
func (s *server) score2(board, player string, v int) {
	s.t.Helper()
	s.must(200, s.do("POST", "/v1/boards/"+board+"/scores", adminKey, fmt.Sprintf(`{"player":%q,"keys":[%d]}`, player, v)))
}

// TestLeagueCohortStreamCaps: cohort streams are the boards' hub's
// connections, so the per-address cap counts them with board streams.
func TestLeagueCohortStreamCaps(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := newLeagueServerHub(t, st, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), stream.Config{MaxPerIP: 2})
	s.must(201, s.do("PUT", "/v1/boards/xp", adminKey, `{"public": true, "keys": [{"name": "xp", "order": "desc"}],
		"reset": {"every": "week"}, "league": {"cohort_size": 3, "tiers": [{"name": "bronze"}]}}`))
	s.score2("xp", "amy", 1)
	s.openSSE("/v1/boards/xp/stream", "")
	s.openSSE("/v1/leagues/xp/players/amy/cohort/stream", "")
	r := s.do("GET", "/v1/leagues/xp/players/amy/cohort/stream", "", nil)
	if s.must(429, r).errCode(t) != podium.ECodeRateLimited || r.header.Get("Retry-After") == "" {
		t.Fatalf("third stream: %d %s", r.status, r.body)
	}
	s.must(429, s.do("GET", "/v1/boards/xp/stream", "", nil))
}

// newLeagueServerHub is newLeagueServer with a hub configured by cfg.
func newLeagueServerHub(t *testing.T, st podium.Store, now time.Time, cfg stream.Config) *server {
	t.Helper()
	clk := &fakeClock{t: now}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := engine.New(engine.Config{Store: st, Now: clk.Now, Logger: log, PollEvery: 50 * time.Millisecond,
		Modules: modules.With(modules.Config{Store: st, Logger: log, Tournament: tournament.Config{SettleEvery: -1},
			League: league.Config{SettleEvery: -1}})})
	eng.Keys().SetAdminSecret(adminKey)
	cfg.Logger = log
	hub := stream.New(podiumhttp.StreamSource(eng), cfg)
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

// startLeagueNode starts a node on PostgreSQL in shared mode with the
// league module (no settlement scheduler) and a board hub.
func startLeagueNode(t *testing.T, dsn string, clk *fakeClock, name string) *server {
	t.Helper()
	st, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := modules.Engine(engine.Config{Store: st, Now: clk.Now, Logger: log, Node: name, PollEvery: 50 * time.Millisecond,
		Modules: modules.With(modules.Config{Store: st, Logger: log, Tournament: tournament.Config{SettleEvery: -1},
			League: league.Config{SettleEvery: -1}})})
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
		st.Close()
	})
	return &server{t: t, url: ts.URL, clock: clk, eng: eng, hub: hub, srv: srv}
}

// TestLeagueCohortStreamTwoNodesPostgres: a cohort stream on node b
// follows scores taken by node a (the change feed wakes b's stream), and
// moves to the player's next cohort placed on node a.
func TestLeagueCohortStreamTwoNodesPostgres(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	week1 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clk := &fakeClock{t: week1}
	a := startLeagueNode(t, dsn, clk, "a")
	b := startLeagueNode(t, dsn, clk, "b")
	a.must(201, a.do("PUT", "/v1/boards/xp", adminKey, `{"public": true, "keys": [{"name": "xp", "order": "desc"}], "mode": "sum",
		"reset": {"every": "week", "tz": "UTC"}, "league": {"cohort_size": 2, "tiers": [{"name": "bronze", "promote": 1}, {"name": "silver"}]}}`))
	a.score2("xp", "amy", 10)
	a.score2("xp", "bob", 20)
	a.score2("xp", "cid", 30) // cohort 1
	eventually(t, a, b, "/v1/leagues/xp/players/amy/cohort", "", func(s string) bool { return contains(s, `"bob"`) })
	c := b.openSSE("/v1/leagues/xp/players/amy/cohort/stream", "")
	if ev := c.next(10 * time.Second); ev.Type != "snapshot" || cohortOrder(ev) != "bob:promotion amy:safe " {
		t.Fatalf("first event on b %+v", ev)
	}
	a.score2("xp", "cid", 100) // another cohort: no snapshot for it
	a.score2("xp", "amy", 15)
	nextCohort(t, c, "amy:promotion bob:safe ")

	clk.Add(7 * 24 * time.Hour)
	a.must(200, a.do("POST", "/v1/leagues/xp/settle", adminKey, nil))
	a.score2("xp", "amy", 1) // promoted: silver
	ev := nextCohort(t, c, "amy:safe ")
	if ev.Data["period"] != "2026-W50" || ev.Data["tier"] != "silver" {
		t.Fatalf("week 2 on b %v", ev.Data)
	}
}
