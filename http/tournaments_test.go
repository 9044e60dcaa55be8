package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/scoring"
	"github.com/podiumhq/podium/stream"
	"github.com/podiumhq/podium/tournament"
)

// tourneyOf is the engine's tournament module.
func tourneyOf(e *engine.Engine) *tournament.Module {
	for _, m := range e.Modules() {
		if x, ok := m.(*tournament.Module); ok {
			return x
		}
	}
	panic("no tournament module")
}

// newTourneyServer starts a server on st with a fake clock and no
// settlement scheduler (the test runs it with SettleDue).
func newTourneyServer(t *testing.T, st podium.Store, now time.Time) *server {
	t.Helper()
	clk := &fakeClock{t: now}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := modules.Engine(engine.Config{Store: st, Now: clk.Now, Logger: log, PollEvery: 50 * time.Millisecond,
		Modules: modules.With(modules.Config{Store: st, Logger: log, Tournament: tournament.Config{SettleEvery: -1}})})
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

func TestTournamentScenarioSQLite(t *testing.T) {
	tournamentScenario(t, sqliteStore(t))
}

func TestTournamentScenarioPostgres(t *testing.T) {
	tournamentScenario(t, postgresStore(t))
}

// tournamentScenario: a weekly tournament through the HTTP API, with
// scores inside and outside its window, settled twice (by the scheduler,
// then by hand), and the exact values of its ladder's points boards.
func tournamentScenario(t *testing.T, st podium.Store) {
	start := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	end := start.Add(7 * 24 * time.Hour)
	s := newTourneyServer(t, st, start.Add(-time.Hour))
	set := func(at time.Time) { s.clock.mu.Lock(); s.clock.t = at; s.clock.mu.Unlock() }

	s.mkBoard("pts:total", `{"keys": [{"name": "points", "order": "desc"}], "mode": "sum", "public": true,
		"points": {"ladder": "pts", "kind": "total"}}`)
	s.mkBoard("pts:weekly", `{"keys": [{"name": "points", "order": "desc"}], "mode": "sum", "public": true,
		"points": {"ladder": "pts", "kind": "category", "category": "weekly"}}`)
	s.mkBoard("pts:current", `{"keys": [{"name": "era", "order": "desc"}, {"name": "points", "order": "desc"}], "mode": "sum", "public": true,
		"points": {"ladder": "pts", "kind": "current"}}`)
	s.mkBoard("pts:best", `{"keys": [{"name": "rank", "order": "asc"}], "mode": "best", "public": true,
		"points": {"ladder": "pts", "kind": "best", "series": "weekly", "by": "rank"}}`)
	r := s.must(201, s.do("PUT", "/v1/boards/weekly:49", adminKey, fmt.Sprintf(`{"title": "Week 49", "public": true,
		"keys": [{"name": "time_ms", "order": "asc"}],
		"tournament": {"start": %q, "end": %q, "weight": 50, "category": "weekly", "series": "weekly", "ladder": "pts", "max_participants": 4}}`,
		start.Format(time.RFC3339), end.Format(time.RFC3339)))).json(t)
	if tt := r["tournament"].(map[string]any); tt["weight"] != 50.0 || tt["end"] != end.Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("board answer's tournament: %v", tt)
	}
	// A bad tournament is refused, with nothing changed.
	if code := s.must(400, s.do("PUT", "/v1/boards/bad", adminKey, `{"keys": [{"name": "t", "order": "asc"}],
		"tournament": {"start": "2026-12-07T00:00:00Z", "end": "2026-12-01T00:00:00Z"}}`)).errCode(t); code != "invalid_argument" {
		t.Fatalf("end before start: %s", code)
	}
	if code := s.must(400, s.do("PUT", "/v1/boards/bad", adminKey, `{"keys": [{"name": "t", "order": "asc"}],
		"tournament": {"start": "2026-12-07", "end": "2026-12-08T00:00:00Z", "extra": 1}}`)).errCode(t); code != "invalid_argument" {
		t.Fatalf("unknown field: %s", code)
	}

	submit := func(player string, ms int64) resp {
		return s.do("POST", "/v1/boards/weekly:49/scores", adminKey, fmt.Sprintf(`{"player": %q, "keys": [%d]}`, player, ms))
	}
	if code := s.must(409, submit("amy", 40000)).errCode(t); code != "tournament_closed" {
		t.Fatalf("before the start: %s", code)
	}
	set(start)
	s.must(200, submit("amy", 40000))
	s.must(200, submit("bob", 35000))
	s.must(200, submit("amy", 33000))
	// A batch: items in the window pass, the one for a points board fails alone.
	b := s.must(200, s.do("POST", "/v1/scores", adminKey, `{"scores": [
		{"board": "weekly:49", "player": "cid", "keys": [50000]},
		{"board": "pts:total", "player": "cid", "keys": [1000]},
		{"board": "weekly:49", "player": "dan", "keys": [60000]}]}`)).json(t)
	items := b["results"].([]any)
	if e := items[1].(map[string]any)["error"].(map[string]any); e["code"] != "points_board" {
		t.Fatalf("batch item to a points board: %v", items[1])
	}
	if items[0].(map[string]any)["error"] != nil || items[2].(map[string]any)["error"] != nil {
		t.Fatalf("batch items in the window failed: %v", items)
	}
	// Five players on a tournament of four: the fifth is refused.
	if code := s.must(409, submit("eve", 30000)).errCode(t); code != "tournament_full" {
		t.Fatalf("a fifth player: %s", code)
	}
	j := s.must(200, s.do("POST", "/v1/tournaments/weekly:49/join", adminKey, `{"player": "amy"}`)).json(t)
	if j["already"] != true || j["participants"] != 4.0 {
		t.Fatalf("join of a participant: %v", j)
	}
	if code := s.must(409, s.do("POST", "/v1/tournaments/weekly:49/join", adminKey, `{"player": "eve"}`)).errCode(t); code != "tournament_full" {
		t.Fatalf("join past the cap: %s", code)
	}
	// join_required: a player must join first (403 not_joined).
	s.must(201, s.do("PUT", "/v1/boards/invite", adminKey, fmt.Sprintf(`{"keys": [{"name": "t", "order": "asc"}],
		"tournament": {"start": %q, "end": %q, "join_required": true}}`, start.Format(time.RFC3339), end.Format(time.RFC3339))))
	if code := s.must(403, s.do("POST", "/v1/boards/invite/scores", adminKey, `{"player": "amy", "keys": [1]}`)).errCode(t); code != "not_joined" {
		t.Fatalf("a score before joining: %s", code)
	}
	j = s.must(201, s.do("POST", "/v1/tournaments/invite/join", adminKey, `{"player": "amy"}`)).json(t)
	if j["n"] != 1.0 || j["already"] != false {
		t.Fatalf("join: %v", j)
	}
	s.must(200, s.do("POST", "/v1/boards/invite/scores", adminKey, `{"player": "amy", "keys": [1]}`))
	s.must(400, s.do("POST", "/v1/tournaments/invite/join", adminKey, `{"player": "amy", "team": "x"}`))
	s.must(404, s.do("POST", "/v1/tournaments/pts:total/join", adminKey, `{"player": "amy"}`))
	pp := s.must(200, s.do("GET", "/v1/tournaments/invite/participants", adminKey, nil)).json(t)
	if pp["total"] != 1.0 || pp["participants"].([]any)[0].(map[string]any)["player"] != "amy" {
		t.Fatalf("participants: %v", pp)
	}
	s.must(204, s.do("DELETE", "/v1/boards/invite", adminKey, nil))

	set(end)
	if code := s.must(409, submit("bob", 1)).errCode(t); code != "tournament_closed" {
		t.Fatalf("at the end: %s", code)
	}
	st1 := s.must(200, s.do("GET", "/v1/tournaments/weekly:49", "", nil)).json(t)
	if st1["state"] != "ended" || st1["settlement"] != nil || st1["participants"] != 4.0 || st1["entries"] != 4.0 {
		t.Fatalf("status before settlement: %v", st1)
	}

	// Run 1: the scheduler. Run 2: by hand; it pays nothing more.
	rs, err := tourneyOf(s.eng).SettleDue(context.Background())
	if err != nil || len(rs) != 1 {
		t.Fatalf("SettleDue = %+v, %v", rs, err)
	}
	r2 := s.must(200, s.do("POST", "/v1/tournaments/weekly:49/settle", adminKey, nil)).json(t)
	if r2["run"] != 2.0 || r2["credits"] != 0.0 || r2["changed"] != 0.0 || r2["paid"] != 104.0 {
		t.Fatalf("second run: %v", r2)
	}
	if code := s.must(401, s.do("POST", "/v1/tournaments/weekly:49/settle", "", nil)).errCode(t); code != "unauthenticated" {
		t.Fatalf("settle without a key: %s", code)
	}

	// Ranks (time ascending): amy 33000, bob 35000, cid 50000, dan 60000.
	// amy 50, bob 25, cid 50/3 = 16.67 -> 17, dan 50/4 = 12.5 -> 12 (even): 104.
	want := map[string]int64{"amy": 50, "bob": 25, "cid": 17, "dan": 12}
	entries := func(board string) map[string]map[string]any {
		page := s.must(200, s.do("GET", "/v1/boards/"+board+"/entries", "", nil)).json(t)
		out := map[string]map[string]any{}
		for _, e := range page["entries"].([]any) {
			m := e.(map[string]any)
			out[m["player"].(string)] = m
		}
		return out
	}
	h := int64(730 * 24 * 3600 * 1000)
	era := scoring.Era(end.UnixMilli(), h)
	check := func(when string, valueFactor float64) {
		t.Helper()
		tot, cat, cur, best := entries("pts:total"), entries("pts:weekly"), entries("pts:current"), entries("pts:best")
		if len(tot) != 4 || len(cat) != 4 || len(cur) != 4 || len(best) != 4 {
			t.Fatalf("%s: %d %d %d %d entries", when, len(tot), len(cat), len(cur), len(best))
		}
		for p, v := range want {
			if k := tot[p]["keys"].([]any); k[0] != float64(v) {
				t.Fatalf("%s: total %s = %v, want %d", when, p, k, v)
			}
			if k := cat[p]["keys"].([]any); k[0] != float64(v) {
				t.Fatalf("%s: weekly %s = %v, want %d", when, p, k, v)
			}
			k := cur[p]["keys"].([]any)
			if k[0] != float64(era) || k[1] != float64(scoring.Scaled(v, end.UnixMilli(), era, h)) {
				t.Fatalf("%s: current %s = %v", when, p, k)
			}
			if got := cur[p]["value"].(float64); math.Abs(got-float64(v)*valueFactor) > 1e-5 {
				t.Fatalf("%s: current value %s = %v, want %v", when, p, got, float64(v)*valueFactor)
			}
		}
		if best["amy"]["keys"].([]any)[0] != 1.0 || best["dan"]["keys"].([]any)[0] != 4.0 || best["amy"]["rank"] != 1.0 {
			t.Fatalf("%s: best %v", when, best)
		}
	}
	check("after two runs", 1)
	set(end.Add(730 * 24 * time.Hour)) // one half-life later
	check("a half-life later", 0.5)

	st2 := s.must(200, s.do("GET", "/v1/tournaments/weekly:49", "", nil)).json(t)
	stl := st2["settlement"].(map[string]any)
	if st2["state"] != "settled" || stl["runs"] != 2.0 || stl["paid"] != 104.0 || stl["players"] != 4.0 {
		t.Fatalf("status after settlement: %v", st2)
	}
	po := s.must(200, s.do("GET", "/v1/tournaments/weekly:49/payouts?limit=2", "", nil)).json(t)
	list := po["payouts"].([]any)
	if po["total"] != 4.0 || len(list) != 2 || list[0].(map[string]any)["player"] != "amy" || list[1].(map[string]any)["points"] != 25.0 {
		t.Fatalf("payouts: %v", po)
	}
	s.must(400, s.do("GET", "/v1/tournaments/weekly:49/payouts?limit=0", "", nil))
	s.must(404, s.do("GET", "/v1/tournaments/pts:total", "", nil))
	lt := s.must(200, s.do("GET", "/v1/tournaments", "", nil)).json(t)
	if n := len(lt["tournaments"].([]any)); n != 1 {
		t.Fatalf("%d tournaments listed", n)
	}

	// podium check: clean, then a points board changed behind
	// settlement's back is reported.
	if c := s.must(200, s.do("POST", "/v1/admin/check", adminKey, nil)).json(t); c["ok"] != true {
		t.Fatalf("check after settlement: %v", c)
	}
	s.must(204, s.do("DELETE", "/v1/boards/pts:total/entries/bob", adminKey, nil))
	c := s.must(200, s.do("POST", "/v1/admin/check", adminKey, nil)).json(t)
	sd := c["settlement_differences"].([]any)
	if c["ok"] != false || len(sd) != 1 || sd[0].(map[string]any)["player"] != "bob" || sd[0].(map[string]any)["want"] != "25 points" {
		t.Fatalf("check after a points entry was removed: %v", c)
	}
}
