package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDemo: serve --demo shows every kind of page with live data: boards of
// each mode, both aggregates, best_k results, the feed, a tournament cycle
// settled into the points ladder, and CTF contests whose simulated teams
// solve challenges before a freeze and that are revealed at their end. The
// demo runs at a test's pace (3 s cups, 6 s contests); the test waits for
// each event, up to a deadline that only a broken demo reaches.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo feeds boards in real time; skipped in -short")
	}
	var logs syncBuffer
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: filepath.Join(t.TempDir(), "data"), Sync: "normal", MaxBody: 1 << 20, Demo: true,
		Shutdown: time.Second}, Stderr: &logs,
		demoCfg: &demoConfig{Tick: 20 * time.Millisecond, Cup: 3 * time.Second, Contest: 6 * time.Second,
			Freeze: 2 * time.Second, AttemptsPerCo: 150}}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	defer func() {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
				t.Errorf("logged: %s", l)
			}
		}
	}()
	base := m.URL()
	get := func(path string, into any) bool {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return false
		}
		return json.NewDecoder(resp.Body).Decode(into) == nil
	}
	type entries struct {
		Total   int `json:"total"`
		Entries []struct {
			Player  string            `json:"player"`
			Name    string            `json:"name"`
			Keys    []int64           `json:"keys"`
			Results []json.RawMessage `json:"results"`
		} `json:"entries"`
	}
	// filled: the board has entries with names (players registered by the
	// demo), and, for best_k, results.
	filled := func(board string, results bool) bool {
		var e entries
		if !get("/v1/boards/"+board+"/entries?limit=5", &e) || e.Total == 0 || len(e.Entries) == 0 {
			return false
		}
		return e.Entries[0].Name != e.Entries[0].Player && (!results || len(e.Entries[0].Results) > 0)
	}

	want := map[string]func() bool{}
	for _, b := range []string{"demo.minesweeper.beginner", "demo.minesweeper.intermediate", "demo.minesweeper.expert",
		"demo.minesweeper.total", "demo.daily", "demo.sprint.total", "demo.points.total", "demo.points.current", "demo.league"} {
		want["entries on "+b] = func() bool { return filled(b, false) }
	}
	want["best_k results on demo.sprint"] = func() bool { return filled("demo.sprint", true) }
	want["six full clans"] = func() bool {
		var e entries
		return get("/v1/boards/demo.clans/entries", &e) && e.Total == 6 && len(e.Entries[0].Keys) == 1 && e.Entries[0].Keys[0] == 20
	}
	want["clans on the daily puzzle"] = func() bool {
		var e entries
		return get("/v1/boards/demo.clans.daily/entries", &e) && e.Total > 0
	}
	want["league cohorts"] = func() bool {
		var l struct {
			Tiers []struct {
				Members int `json:"members"`
				Cohorts int `json:"cohorts"`
			} `json:"tiers"`
		}
		return get("/v1/leagues/demo.league", &l) && len(l.Tiers) == 3 && l.Tiers[0].Members > 0 && l.Tiers[0].Cohorts > 0
	}
	want["a settled cup"] = func() bool {
		var list struct {
			Tournaments []struct{ Board string } `json:"tournaments"`
		}
		if !get("/v1/tournaments", &list) {
			return false
		}
		for _, tn := range list.Tournaments {
			var st struct{ State string }
			if strings.HasPrefix(tn.Board, demoCupPrefix) && get("/v1/tournaments/"+tn.Board, &st) && st.State == "settled" {
				return true
			}
		}
		return false
	}
	feedKinds := map[string]bool{}
	want["the feed: personal bests, new leaders, a settlement"] = func() bool {
		var f struct {
			Events []struct{ Kind string } `json:"events"`
		}
		if !get("/v1/feed?limit=200", &f) {
			return false
		}
		for _, e := range f.Events {
			feedKinds[e.Kind] = true
		}
		return feedKinds["personal_best"] && feedKinds["new_leader"] && feedKinds["tournament_settled"]
	}
	type contestItem struct {
		ID       string     `json:"id"`
		Freeze   *time.Time `json:"freeze"`
		Revealed bool       `json:"revealed"`
		State    string     `json:"state"`
	}
	contests := func() []contestItem {
		var list struct {
			Contests []contestItem `json:"contests"`
		}
		get("/v1/contests", &list)
		return list.Contests
	}
	want["a contest with a freeze ahead and solves"] = func() bool {
		for _, c := range contests() {
			if c.Freeze == nil || !time.Now().Before(*c.Freeze) {
				continue
			}
			var st struct {
				Frozen    bool `json:"frozen"`
				Standings []struct {
					Score  int64 `json:"score"`
					Solved int   `json:"solved"`
					Name   string
				} `json:"standings"`
			}
			if get("/v1/contests/"+c.ID+"/standings", &st) && !st.Frozen && len(st.Standings) > 0 &&
				st.Standings[0].Score > 0 && st.Standings[0].Name != "" && !strings.HasPrefix(st.Standings[0].Name, "demo-team") {
				return true
			}
		}
		return false
	}
	want["a contest revealed at its end"] = func() bool {
		return slices.ContainsFunc(contests(), func(c contestItem) bool { return c.Revealed })
	}
	deadline := time.Now().Add(90 * time.Second)
	for len(want) > 0 {
		for what, ok := range want {
			if ok() {
				delete(want, what)
			}
		}
		if len(want) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo did not show, within 90 s: %v", keys(want))
		}
		time.Sleep(100 * time.Millisecond) // poll: the events come from the demo's own tickers
	}

	// Every page the index links answers: the index, each public board's
	// page, each contest's page.
	var boards struct {
		Boards []struct{ ID string } `json:"boards"`
	}
	if !get("/v1/boards?limit=100", &boards) {
		t.Fatal("GET /v1/boards failed")
	}
	pages := []string{"/", "/leagues/demo.league?player=demo-001", "/leagues/demo.league?tier=bronze&cohort=0"}
	for _, b := range boards.Boards {
		pages = append(pages, "/boards/"+b.ID)
	}
	for _, c := range contests() {
		pages = append(pages, "/contests/"+c.ID)
	}
	for _, p := range pages {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %s", p, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	if got := fmt.Sprint(len(boards.Boards)); len(boards.Boards) < len(demoBoards)+len(demoPointsBoards)+1 {
		t.Errorf("%s public boards, want the demo's %d, the points boards and a cup at least", got, len(demoBoards))
	}
}

func keys(m map[string]func() bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestDemoRestart: a restart of the demo on its data directory takes up the
// running cup and contest (no second one starts), keeps its boards, and
// deletes the board of earlier demos that this one no longer feeds.
func TestDemoRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cfg := &demoConfig{Tick: 20 * time.Millisecond, Cup: time.Hour, Contest: time.Hour, Freeze: 15 * time.Minute, AttemptsPerCo: 72000}
	var logs syncBuffer
	start := func() *Main {
		m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: dir, Sync: "normal", MaxBody: 1 << 20, Demo: true,
			Shutdown: time.Second}, Stderr: &logs, demoCfg: cfg}
		if err := m.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		return m
	}
	running := func(m *Main) (cups, contests []string) {
		var tl struct {
			Tournaments []struct{ Board string } `json:"tournaments"`
		}
		var cl struct {
			Contests []struct{ ID string } `json:"contests"`
		}
		_, b, _ := do(m.URL(), "GET", "/v1/tournaments", "", "")
		json.Unmarshal(b, &tl)
		_, b, _ = do(m.URL(), "GET", "/v1/contests", "", "")
		json.Unmarshal(b, &cl)
		for _, x := range tl.Tournaments {
			cups = append(cups, x.Board)
		}
		for _, x := range cl.Contests {
			contests = append(contests, x.ID)
		}
		return cups, contests
	}
	m := start()
	cups, contests := running(m)
	if len(cups) != 1 || len(contests) != 1 {
		t.Fatalf("first start: cups %v, contests %v", cups, contests)
	}
	key, err := os.ReadFile(filepath.Join(dir, keyName))
	if err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(string(key))
	if code, b, _ := do(m.URL(), "PUT", "/v1/boards/demo.ctf", admin, `{"keys":[{"name":"score","order":"desc"}],"public":true}`); code != 201 {
		t.Fatalf("an earlier demo's board: %d %s", code, b)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	m = start()
	defer m.Close()
	again, againContests := running(m)
	if !slices.Equal(again, cups) || !slices.Equal(againContests, contests) {
		t.Errorf("after a restart: cups %v, contests %v; want %v, %v (taken up)", again, againContests, cups, contests)
	}
	if code, _, _ := do(m.URL(), "GET", "/v1/boards/demo.ctf", "", ""); code != 404 {
		t.Errorf("the earlier demo's board after a restart: %d, want 404", code)
	}
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
			t.Errorf("logged: %s", l)
		}
	}
}
