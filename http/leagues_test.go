package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/league"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/stream"
	"github.com/podiumhq/podium/tournament"
)

func leagueOf(e *engine.Engine) *league.Module {
	for _, m := range e.Modules() {
		if x, ok := m.(*league.Module); ok {
			return x
		}
	}
	panic("no league module")
}

// newLeagueServer starts a server on st with a fake clock and no
// settlement schedulers (the test settles with SettleDue or the API).
func newLeagueServer(t *testing.T, st podium.Store, now time.Time) *server {
	t.Helper()
	clk := &fakeClock{t: now}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := engine.New(engine.Config{Store: st, Now: clk.Now, Logger: log, PollEvery: 50 * time.Millisecond,
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
	})
	return &server{t: t, url: ts.URL, clock: clk, eng: eng, hub: hub, srv: srv}
}

func TestLeagueScenarioSQLite(t *testing.T) {
	leagueScenario(t, sqliteStore(t))
}

func TestLeagueScenarioPostgres(t *testing.T) {
	leagueScenario(t, postgresStore(t))
}

// leagueScenario: a weekly league through the HTTP API: made with a board
// PUT, played, read (standing, my cohort with zones, a tier's cohorts, a
// cohort), refused while its previous week settles, settled by hand and
// again (nothing more), and the history after.
func leagueScenario(t *testing.T, st podium.Store) {
	week1 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // a Monday
	s := newLeagueServer(t, st, week1)
	set := func(at time.Time) { s.clock.mu.Lock(); s.clock.t = at; s.clock.mu.Unlock() }

	// Bad leagues are refused, with nothing made.
	for _, body := range []string{
		`{"keys": [{"name": "xp", "order": "desc"}], "league": {"tiers": [{"name": "bronze"}]}}`,                                      // no reset
		`{"keys": [{"name": "xp", "order": "desc"}], "reset": {"every": "week"}, "league": {"tiers": []}}`,                            // no tiers
		`{"keys": [{"name": "xp", "order": "desc"}], "reset": {"every": "week"}, "league": {"tiers": [{"name": "a", "promote": 1}]}}`, // top promotes
		`{"keys": [{"name": "xp", "order": "desc"}], "reset": {"every": "week"}, "league": {"tiers": [{"name": "a"}], "extra": 1}}`,   // unknown field
	} {
		s.must(400, s.do("PUT", "/v1/boards/bad", adminKey, body))
	}
	s.must(404, s.do("GET", "/v1/leagues/bad", adminKey, nil))

	r := s.must(201, s.do("PUT", "/v1/boards/xp", adminKey, `{"title": "XP league", "public": true,
		"keys": [{"name": "xp", "order": "desc"}], "mode": "sum", "reset": {"every": "week", "tz": "UTC"},
		"league": {"cohort_size": 3, "tiers": [{"name": "bronze", "promote": 1}, {"name": "silver", "relegate": 1}]}}`)).json(t)
	if l := r["league"].(map[string]any); l["cohort_size"] != 3.0 || l["absent"] != "keep" {
		t.Fatalf("board answer's league: %v", l)
	}
	for i, p := range []string{"amy", "bob", "cid", "dan"} {
		s.must(200, s.do("POST", "/v1/boards/xp/scores", adminKey, fmt.Sprintf(`{"player": %q, "keys": [%d]}`, p, 10*(i+1))))
	}
	st1 := s.must(200, s.do("GET", "/v1/leagues/xp/players/dan", "", nil)).json(t)
	if st1["placed"] != true || st1["tier"] != "bronze" || st1["cohort"] != 1.0 || st1["period"] != "2026-W49" {
		t.Fatalf("dan's standing: %v", st1)
	}
	c := s.must(200, s.do("GET", "/v1/leagues/xp/players/amy/cohort", "", nil)).json(t)
	es := c["entries"].([]any)
	if len(es) != 3 || es[0].(map[string]any)["player"] != "cid" || es[0].(map[string]any)["zone"] != "promotion" ||
		es[2].(map[string]any)["player"] != "amy" || es[2].(map[string]any)["zone"] != "safe" || c["tier"] != "bronze" {
		t.Fatalf("amy's cohort: %v", c)
	}
	cs := s.must(200, s.do("GET", "/v1/leagues/xp/tiers/bronze/cohorts", "", nil)).json(t)
	if cs["total"] != 2.0 || len(cs["cohorts"].([]any)) != 2 {
		t.Fatalf("bronze's cohorts: %v", cs)
	}
	one := s.must(200, s.do("GET", "/v1/leagues/xp/tiers/bronze/cohorts/1", "", nil)).json(t)
	if e := one["entries"].([]any); len(e) != 1 || e[0].(map[string]any)["player"] != "dan" || e[0].(map[string]any)["board_rank"] != 1.0 {
		t.Fatalf("cohort 1: %v", one)
	}
	s.must(404, s.do("GET", "/v1/leagues/xp/tiers/gold/cohorts", "", nil))
	s.must(404, s.do("GET", "/v1/leagues/xp/tiers/bronze/cohorts/7", "", nil))
	s.must(400, s.do("GET", "/v1/leagues/xp/tiers/bronze/cohorts/x", "", nil))
	s.must(404, s.do("GET", "/v1/leagues/xp/players/eve/cohort", "", nil))
	lg := s.must(200, s.do("GET", "/v1/leagues/xp", "", nil)).json(t)
	if ts := lg["tiers"].([]any); ts[0].(map[string]any)["members"] != 4.0 || ts[0].(map[string]any)["cohorts"] != 2.0 {
		t.Fatalf("league status: %v", lg)
	}
	if ls := s.must(200, s.do("GET", "/v1/leagues", "", nil)).json(t)["leagues"].([]any); len(ls) != 1 {
		t.Fatalf("leagues: %v", ls)
	}

	// Week 2: first scores wait for week 1's settlement (503, Retry-After).
	set(week1.Add(7 * 24 * time.Hour))
	w := s.do("POST", "/v1/boards/xp/scores", adminKey, `{"player": "cid", "keys": [1]}`)
	if code := s.must(503, w).errCode(t); code != podium.ECodeLeagueSettling || w.header.Get("Retry-After") == "" {
		t.Fatalf("a first score before settlement: %s", code)
	}
	s.must(401, s.do("POST", "/v1/leagues/xp/settle", "", nil))
	rep := s.must(200, s.do("POST", "/v1/leagues/xp/settle", adminKey, nil)).json(t)
	if sl := rep["settled"].([]any); len(sl) != 1 || sl[0].(map[string]any)["promoted"] != 2.0 || sl[0].(map[string]any)["period"] != "2026-W49" {
		t.Fatalf("settle: %v", rep)
	}
	found := false
	for _, ev := range s.must(200, s.do("GET", "/v1/feed?board=xp", "", nil)).json(t)["events"].([]any) {
		e := ev.(map[string]any)
		if e["kind"] == "league_settled" {
			d := e["data"].(map[string]any)
			found = d["promoted"] == 2.0 && len(d["outcomes"].([]any)) == 4 && e["period"] == "2026-W49"
		}
	}
	if !found {
		t.Fatal("the feed has no league_settled event for week 49")
	}
	if rs, err := leagueOf(s.eng).SettleDue(context.Background()); err != nil || len(rs) != 0 {
		t.Fatalf("settle again: %+v, %v; want nothing due", rs, err)
	}
	if sl := s.must(200, s.do("POST", "/v1/leagues/xp/settle", adminKey, nil)).json(t)["settled"].([]any); len(sl) != 0 {
		t.Fatalf("settle by hand again: %v", sl)
	}
	s.must(200, s.do("POST", "/v1/boards/xp/scores", adminKey, `{"player": "cid", "keys": [1]}`))
	if st2 := s.must(200, s.do("GET", "/v1/leagues/xp/players/cid", "", nil)).json(t); st2["tier"] != "silver" || st2["placed"] != true {
		t.Fatalf("cid in week 2: %v", st2)
	}
	if st2 := s.must(200, s.do("GET", "/v1/leagues/xp/players/amy", "", nil)).json(t); st2["tier"] != "bronze" || st2["placed"] != false || st2["cohort"] != nil {
		t.Fatalf("amy in week 2: %v", st2)
	}
	h := s.must(200, s.do("GET", "/v1/leagues/xp/players/cid/history", "", nil)).json(t)["periods"].([]any)
	if len(h) != 2 || h[0].(map[string]any)["settled"] != false || h[1].(map[string]any)["outcome"] != "promoted" ||
		h[1].(map[string]any)["next_tier"] != "silver" || h[1].(map[string]any)["period"] != "2026-W49" {
		t.Fatalf("cid's history: %v", h)
	}
	// Last week's cohorts still read.
	old := s.must(200, s.do("GET", "/v1/leagues/xp/tiers/bronze/cohorts/0?period=previous", "", nil)).json(t)
	if old["period"] != "2026-W49" || len(old["entries"].([]any)) != 3 {
		t.Fatalf("last week's cohort: %v", old)
	}
	s.must(400, s.do("GET", "/v1/leagues/xp/players/cid?period=someday", "", nil))
	s.must(400, s.do("GET", "/v1/leagues/xp/players/cid?bogus=1", "", nil))
}
