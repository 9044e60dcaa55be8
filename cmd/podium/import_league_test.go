package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExportImportLeague moves a league with two settled periods (promoted,
// relegated, stayed and absent players) and a current period with
// placements to a fresh server with podium export and podium import:
// every player's standing shows the tier the source's settlements left
// them in, every history reads as the source's, the current period's
// placements stay behind (a player's next score places them, in their
// restored tier), the target's check is clean, and a second import changes
// nothing.
func TestExportImportLeague(t *testing.T) {
	day := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := &testClock{t: day}
	src := startAt(t, clk.Now).URL()
	const admin = "admin-secret"
	mustDo(t, 201, src, "PUT", "/v1/boards/lg", admin, `{"keys":[{"name":"xp","order":"desc"}],"mode":"sum","public":true,
		"reset":{"every":"day","tz":"UTC"},"league":{"cohort_size":2,"absent":"drop",
		"tiers":[{"name":"low","promote":1},{"name":"mid","promote":1,"relegate":1},{"name":"high","relegate":1}]}}`)
	score := func(base, p string, xp int) {
		t.Helper()
		mustDo(t, 200, base, "POST", "/v1/boards/lg/scores", admin, fmt.Sprintf(`{"player":%q,"keys":[%d]}`, p, xp))
	}
	// Day 1, all in low: a, b (cohort 0), c, d (1), f, g (2): b, d and g go
	// up to mid.
	for i, p := range []string{"a", "b", "c", "d", "f", "g"} {
		score(src, p, 10*(i+1))
	}
	clk.Set(day.Add(24 * time.Hour))
	mustDo(t, 200, src, "POST", "/v1/leagues/lg/settle", admin, "")
	// Day 2: in mid b goes up and g down, d is absent (drops to low); a,
	// alone in low, goes up; c and f are absent in low (no row).
	score(src, "b", 50)
	score(src, "g", 5)
	score(src, "a", 1)
	clk.Set(day.Add(48 * time.Hour))
	mustDo(t, 200, src, "POST", "/v1/leagues/lg/settle", admin, "")
	score(src, "e", 7) // day 3, not settled: its placement stays behind

	players := []string{"a", "b", "c", "d", "e", "f", "g"}
	read := func(base string) map[string]string {
		out := map[string]string{}
		for _, p := range players {
			out[p+" history"] = string(mustDo(t, 200, base, "GET", "/v1/leagues/lg/players/"+p+"/history", "", ""))
			out[p+" standing"] = string(mustDo(t, 200, base, "GET", "/v1/leagues/lg/players/"+p, "", ""))
		}
		return out
	}
	want := read(src)
	if !strings.Contains(want["b history"], `"outcome":"promoted","next_tier":"high"`) || !strings.Contains(want["g history"], `"outcome":"relegated","next_tier":"low"`) ||
		!strings.Contains(want["d history"], `"outcome":"absent","next_tier":"low"`) {
		t.Fatalf("fixture: %v", want)
	}
	wantTier := map[string]string{"a": "mid", "b": "high", "c": "low", "d": "low", "e": "low", "f": "low", "g": "low"}

	t.Setenv("PODIUM_ADMIN_KEY", admin)
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump.jsonl")
	if code, _, errs := runCLI(t, "export", "--url", src, "--out", dump); code != 0 || !strings.Contains(errs, "1 boards, 7 players, 10 entries, 16 league rows") {
		t.Fatalf("export: %d %s", code, errs)
	}
	text, _ := os.ReadFile(dump)
	if n := strings.Count(string(text), `"league_tier"`); n != 4 { // a, b, d and g: the tiers settlements set (c and f never left low)
		t.Fatalf("%d league_tier lines:\n%s", n, text)
	}

	dst := startAt(t, clk.Now).URL()
	code, out, errs := runCLI(t, "import", "--url", dst, "--in", dump)
	if code != 0 || !strings.Contains(out, "league tiers 4, results 10 restored") {
		t.Fatalf("import: %d %s%s", code, out, errs)
	}
	got := read(dst)
	for _, p := range players {
		for _, k := range []string{" standing", " history"} {
			if p == "e" {
				continue // e's current placement stayed behind
			}
			if got[p+k] != want[p+k] {
				t.Errorf("%s%s on the target:\n%s\nwant\n%s", p, k, got[p+k], want[p+k])
			}
		}
	}
	if strings.TrimSpace(got["e history"]) != `{"player":"e","board":"lg","periods":[]}` || !strings.Contains(got["e standing"], `"placed":false,"tier":"low"`) {
		t.Errorf("e on the target: %s %s", got["e history"], got["e standing"])
	}
	status := string(mustDo(t, 200, dst, "GET", "/v1/leagues/lg", "", ""))
	if !strings.Contains(status, `"node":"(restored)"`) || strings.Count(status, `"settled_at"`) != 2 {
		t.Errorf("status on the target: %s", status)
	}
	check := func() {
		t.Helper()
		if code, body := callURL(t, dst, "POST", "/v1/admin/check", ""); code != 200 || body["ok"] != true {
			t.Fatalf("check on the target: %d %v", code, body)
		}
	}
	check()

	// Each player's next score places them in the tier they left the
	// source with.
	for i, p := range players {
		score(dst, p, i+1)
		st := string(mustDo(t, 200, dst, "GET", "/v1/leagues/lg/players/"+p, "", ""))
		if !strings.Contains(st, `"placed":true,"tier":"`+wantTier[p]+`"`) {
			t.Errorf("%s's standing after a score on the target: %s (want tier %s)", p, st, wantTier[p])
		}
	}
	check()

	// Again: nothing changes (the restored periods are overwritten with
	// themselves; the tiers are equal, so the current period's placements
	// do not stop it).
	before := mustDo(t, 200, dst, "GET", "/v1/leagues/lg/export", admin, "")
	if code, out, errs := runCLI(t, "import", "--url", dst, "--in", dump); code != 0 || !strings.Contains(out, "league tiers 4, results 10 restored") {
		t.Fatalf("import again: %d %s%s", code, out, errs)
	}
	if after := mustDo(t, 200, dst, "GET", "/v1/leagues/lg/export", admin, ""); !bytes.Equal(before, after) {
		t.Fatalf("a second import changed the league:\n%s\nwant\n%s", after, before)
	}
}

// TestLeagueRestoreRefusals: the restore route's bad requests are clear
// 4xx errors and change nothing.
func TestLeagueRestoreRefusals(t *testing.T) {
	day := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := &testClock{t: day}
	base := startAt(t, clk.Now).URL()
	const admin = "admin-secret"
	mustDo(t, 201, base, "PUT", "/v1/boards/lg", admin, `{"keys":[{"name":"xp","order":"desc"}],"public":true,
		"reset":{"every":"day","tz":"UTC"},"league":{"cohort_size":2,"tiers":[{"name":"low","promote":1},{"name":"high","relegate":1}]}}`)
	mustDo(t, 201, base, "PUT", "/v1/boards/plain", admin, `{"keys":[{"name":"xp","order":"desc"}]}`)
	mustDo(t, 200, base, "POST", "/v1/boards/lg/scores", admin, `{"player":"a","keys":[1]}`)
	clk.Set(day.Add(24 * time.Hour))
	mustDo(t, 200, base, "POST", "/v1/leagues/lg/settle", admin, "") // 2026-12-01, settled here
	clk.Set(day.Add(72 * time.Hour))
	before := mustDo(t, 200, base, "GET", "/v1/leagues/lg/export", admin, "")

	period := func(id, start, settled, results string) string {
		return fmt.Sprintf(`{"tiers":[],"periods":[{"period":%q,"start":%q,"settled_at":%q,"players":1,"promoted":0,"relegated":0,"results":[%s]}]}`,
			id, start, settled, results)
	}
	good := `{"player":"z","tier":"low","cohort":0,"rank":1,"outcome":"stayed","new_tier":"low"}`
	for _, c := range []struct {
		name, board, body string
		code              int
		says              string
	}{
		{"unknown tier", "lg", `{"tiers":[{"player":"z","tier":"gold"}],"periods":[]}`, 400, `has no tier`},
		{"a player twice", "lg", `{"tiers":[{"player":"z","tier":"low"},{"player":"z","tier":"high"}],"periods":[]}`, 400, "listed twice"},
		{"bad player", "lg", `{"tiers":[{"player":"","tier":"low"}],"periods":[]}`, 400, "tiers[0]"},
		{"not a period id", "lg", period("2026-W49", "2026-12-02T00:00:00Z", "2026-12-03T00:00:01Z", good), 400, "not a period id"},
		{"wrong start", "lg", period("2026-12-02", "2026-12-02T01:00:00Z", "2026-12-03T00:00:01Z", good), 400, "not the start of period"},
		{"current period", "lg", period("2026-12-04", "2026-12-04T00:00:00Z", "2026-12-04T00:00:01Z", good), 400, "has not ended"},
		{"settled before its end", "lg", period("2026-12-02", "2026-12-02T00:00:00Z", "2026-12-02T23:00:00Z", good), 400, "settled_at"},
		{"bad outcome", "lg", period("2026-12-02", "2026-12-02T00:00:00Z", "2026-12-03T00:00:01Z",
			`{"player":"z","tier":"low","cohort":0,"rank":1,"outcome":"won","new_tier":"low"}`), 400, "outcome must be"},
		{"outcome against tiers", "lg", period("2026-12-02", "2026-12-02T00:00:00Z", "2026-12-03T00:00:01Z",
			`{"player":"z","tier":"low","cohort":0,"rank":1,"outcome":"promoted","new_tier":"low"}`), 400, "does not move"},
		{"absent with a rank", "lg", period("2026-12-02", "2026-12-02T00:00:00Z", "2026-12-03T00:00:01Z",
			`{"player":"z","tier":"high","cohort":0,"rank":1,"outcome":"absent","new_tier":"low"}`), 400, "absent player"},
		{"rank past the cohort", "lg", period("2026-12-02", "2026-12-02T00:00:00Z", "2026-12-03T00:00:01Z",
			`{"player":"z","tier":"low","cohort":0,"rank":3,"outcome":"stayed","new_tier":"low"}`), 400, "rank from 1"},
		{"unknown field", "lg", `{"tiers":[],"periods":[],"extra":1}`, 400, "extra"},
		{"settled here", "lg", period("2026-12-01", "2026-12-01T00:00:00Z", "2026-12-02T00:00:01Z", good), 409, "settled period 2026-12-01 itself"},
		{"not a league", "plain", `{"tiers":[],"periods":[]}`, 404, "not a league"},
		{"no board", "nope", `{"tiers":[],"periods":[]}`, 404, "nope"},
		{"too many rows", "lg", `{"tiers":[` + strings.Repeat(`{"player":"z","tier":"low"},`, 1000) + `{"player":"y","tier":"low"}],"periods":[]}`, 413, "at most 1000"},
	} {
		code, body, _ := do(base, "POST", "/v1/leagues/"+c.board+"/restore", admin, c.body)
		if code != c.code || !strings.Contains(string(body), c.says) {
			t.Errorf("%s: %d %s, want %d saying %q", c.name, code, body, c.code, c.says)
		}
	}
	if after := mustDo(t, 200, base, "GET", "/v1/leagues/lg/export", admin, ""); !bytes.Equal(before, after) {
		t.Fatalf("refused restores changed the league:\n%s\nwant\n%s", after, before)
	}
	// A changed tier while the league has placements in a period it has
	// not settled: refused; the same tier is not a change.
	mustDo(t, 200, base, "POST", "/v1/boards/lg/scores", admin, `{"player":"b","keys":[1]}`)
	if code, body, _ := do(base, "POST", "/v1/leagues/lg/restore", admin, `{"tiers":[{"player":"q","tier":"high"}],"periods":[]}`); code != 409 || !strings.Contains(string(body), "not settled") {
		t.Errorf("a tier change with placements: %d %s", code, body)
	}
	mustDo(t, 200, base, "POST", "/v1/leagues/lg/restore", admin, `{"tiers":[{"player":"q","tier":"low"}],"periods":[]}`)
	mustDo(t, 401, base, "POST", "/v1/leagues/lg/restore", "", `{"tiers":[],"periods":[]}`)
}

// TestImportLeagueBatches: a league's rows past one restore call (1,000
// rows) go in several, each period's row again with each batch of its
// results, and the target exports the rows the dump holds.
func TestImportLeagueBatches(t *testing.T) {
	day := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	clk := &testClock{t: day}
	dst := startAt(t, clk.Now).URL()
	var dump, want strings.Builder
	dump.WriteString(`{"podium_dump":1}` + "\n")
	dump.WriteString(`{"board":{"id":"lg","keys":[{"name":"xp","order":"desc"}],"mode":"sum","reset":{"every":"day","tz":"UTC"},"public":true,` +
		`"league":{"cohort_size":30,"tiers":[{"name":"low","promote":1},{"name":"high","relegate":1}]}}}` + "\n")
	line := func(s string) { dump.WriteString(s + "\n"); want.WriteString(s + "\n") }
	const tiers, results = 1100, 1300
	for i := range tiers {
		line(fmt.Sprintf(`{"league_tier":{"board":"lg","player":"p%04d","tier":"high"}}`, i))
	}
	for _, p := range []string{"2026-12-01", "2026-12-02"} {
		next := map[string]string{"2026-12-01": "2026-12-02", "2026-12-02": "2026-12-03"}[p]
		line(fmt.Sprintf(`{"league_period":{"board":"lg","period":%q,"start":"%sT00:00:00.000Z","settled_at":"%sT00:00:01.000Z","players":%d,"promoted":0,"relegated":0}}`,
			p, p, next, results))
		for i := range results {
			line(fmt.Sprintf(`{"league_result":{"board":"lg","period":%q,"player":"p%04d","tier":"high","cohort":%d,"rank":%d,"outcome":"stayed","new_tier":"high"}}`,
				p, i, i/30, i%30+1))
		}
	}
	t.Setenv("PODIUM_ADMIN_KEY", "admin-secret")
	in := filepath.Join(t.TempDir(), "dump.jsonl")
	os.WriteFile(in, []byte(dump.String()), 0o600)
	if code, out, errs := runCLI(t, "import", "--url", dst, "--in", in); code != 0 || !strings.Contains(out, fmt.Sprintf("league tiers %d, results %d restored", tiers, 2*results)) {
		t.Fatalf("import: %d %s%s", code, out, errs)
	}
	// The export lists tiers and results by player, as written here.
	if got := string(mustDo(t, 200, dst, "GET", "/v1/leagues/lg/export", "admin-secret", "")); got != want.String() {
		t.Fatalf("the target's league export differs from the dump's lines:\n%.2000s", got)
	}
}
