package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// startAt starts a server in a new directory on clock now (nil: real time).
func startAt(t *testing.T, now func() time.Time) *Main {
	t.Helper()
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: t.TempDir(), Sync: "normal", MaxBody: 1 << 20, AdminKey: "admin-secret",
		Shutdown: time.Second}, Stderr: io.Discard, Now: now}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func mustCall(t *testing.T, base, method, path, body string, want int) map[string]any {
	t.Helper()
	code, out := callURL(t, base, method, path, body)
	if code != want {
		t.Fatalf("%s %s: %d %v, want %d", method, path, code, out, want)
	}
	return out
}

// boardState renders every period of every board of a server, hidden
// players included, through the paged REST reads: what an import must
// reproduce.
func boardState(t *testing.T, base string, boards ...string) string {
	t.Helper()
	var b strings.Builder
	for _, id := range boards {
		ps := mustCall(t, base, "GET", "/v1/boards/"+id+"/periods", "", 200)["periods"].([]any)
		for _, p := range ps {
			period := p.(map[string]any)["id"].(string)
			fmt.Fprintf(&b, "%s %s:\n", id, period)
			for off := 0; ; off += 100 {
				es := mustCall(t, base, "GET", fmt.Sprintf("/v1/boards/%s/entries?period=%s&include_hidden=true&limit=100&offset=%d", id, url.QueryEscape(period), off), "", 200)["entries"].([]any)
				for _, e := range es {
					m := e.(map[string]any)
					fmt.Fprintf(&b, "  %v %v %q %v %v %v %v\n", m["rank"], m["player"], m["name"], m["keys"], m["at"], m["meta"], m["hidden"])
				}
				if len(es) < 100 {
					break
				}
			}
		}
	}
	return b.String()
}

// TestExportImport moves a SQLite server's boards (two periods of a daily
// board, a sum board, a private one; hidden and named players; meta) to a
// fresh server with podium export and podium import, compares every
// period, imports again (nothing changes), and exports the copy to the
// same dump.
func TestExportImport(t *testing.T) {
	day := time.Now().UTC().Truncate(24 * time.Hour)
	clk := &testClock{t: day.Add(-48*time.Hour + 9*time.Hour)}
	src := startAt(t, clk.Now).URL()
	mustCall(t, src, "PUT", "/v1/boards/daily", `{"title":"Daily","keys":[{"name":"time_ms","order":"asc","label":"Time","format":"duration_ms"},{"name":"bbbv","order":"desc"}],"reset":{"every":"day"},"public":true}`, 201)
	mustCall(t, src, "PUT", "/v1/boards/total", `{"keys":[{"name":"points","order":"desc"}],"mode":"sum","public":true,"meta":{"season":3}}`, 201)
	mustCall(t, src, "PUT", "/v1/boards/priv", `{"keys":[{"name":"points","order":"desc"}],"public":false}`, 201)
	score := func(board, player string, keys string, meta string) {
		t.Helper()
		body := fmt.Sprintf(`{"player":%q,"keys":%s`, player, keys)
		if meta != "" {
			body += `,"meta":` + meta
		}
		mustCall(t, src, "POST", "/v1/boards/"+board+"/scores", body+"}", 200)
	}
	score("daily", "alice", "[41000,150]", `{"replay":"r-1"}`)
	score("daily", "bob", "[41000,150]", "") // a tie on keys: alice reached it first
	score("daily", "carol", "[39000,90]", "")
	score("total", "alice", "[5]", "")
	clk.Set(day.Add(-24*time.Hour + 10*time.Hour))
	score("daily", "bob", "[50000,10]", `{"v":2}`)
	score("daily", "dave", "[50000,10]", "")
	score("total", "alice", "[7]", "")
	score("total", "bob", "[3]", "")
	score("priv", "erin", "[1]", "")
	mustCall(t, src, "PUT", "/v1/players/carol", `{"hidden":true}`, 200)
	mustCall(t, src, "PUT", "/v1/players/bob", `{"name":"Bob B."}`, 200)
	boards := []string{"daily", "total", "priv"}
	want := boardState(t, src, boards...)
	if strings.Count(want, ":\n") != 4 || !strings.Contains(want, "true\n") {
		t.Fatalf("fixture: %s", want)
	}

	t.Setenv("PODIUM_ADMIN_KEY", "admin-secret")
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump.jsonl")
	code, _, errs := runCLI(t, "export", "--url", src, "--out", dump, "--progress")
	if code != 0 || !strings.Contains(errs, "export: 3 boards, 5 players, 8 entries") || !strings.Contains(errs, "entries, 3/3 boards") {
		t.Fatalf("export: %d %s", code, errs)
	}

	dst := startAt(t, nil).URL()
	code, out, errs := runCLI(t, "import", "--url", dst, "--in", dump)
	if code != 0 || !strings.Contains(out, "boards 3 created, 0 kept, 0 skipped; players 2 updated, 3 unchanged; entries 8 restored, 0 unchanged, 0 refused") {
		t.Fatalf("import: %d %s%s", code, out, errs)
	}
	if got := boardState(t, dst, boards...); got != want {
		t.Fatalf("after import:\n%s\nwant:\n%s", got, want)
	}
	b := mustCall(t, dst, "GET", "/v1/boards/daily", "", 200)
	if b["title"] != "Daily" || fmt.Sprint(b["keys"]) != fmt.Sprint(mustCall(t, src, "GET", "/v1/boards/daily", "", 200)["keys"]) {
		t.Fatalf("board definition: %v", b)
	}

	code, out, errs = runCLI(t, "import", "--url", dst, "--in", dump, "--progress")
	if code != 0 || !strings.Contains(out, "boards 0 created, 3 kept, 0 skipped; players 0 updated, 5 unchanged; entries 0 restored, 8 unchanged, 0 refused") ||
		!strings.Contains(errs, "import: 0 entries restored, 8 unchanged, 0 refused; 0 boards created, 3 kept") {
		t.Fatalf("import again: %d %s%s", code, out, errs)
	}
	if got := boardState(t, dst, boards...); got != want {
		t.Fatalf("after a second import:\n%s\nwant:\n%s", got, want)
	}
	again := filepath.Join(dir, "again.jsonl")
	if code, _, errs := runCLI(t, "export", "--url", dst, "--out", again); code != 0 {
		t.Fatalf("export of the copy: %d %s", code, errs)
	}
	ab, _ := os.ReadFile(dump)
	cb, _ := os.ReadFile(again)
	_, a, _ := strings.Cut(string(ab), "\n") // the header names the source and time
	_, c, _ := strings.Cut(string(cb), "\n")
	if a == "" || a != c {
		t.Fatalf("the copy exports another dump:\n%s\nwant:\n%s", c, a)
	}

	// A board that exists with another ranking stops the import, unless
	// skipped.
	clash := filepath.Join(dir, "clash.jsonl")
	os.WriteFile(clash, []byte(`{"podium_dump":1}
{"board":{"id":"total","keys":[{"name":"points","order":"asc"}],"mode":"sum","reset":{"every":"none"}}}
{"entry":{"board":"total","period":"all","player":"zed","name":"zed","keys":[1],"at":"2026-11-30T10:00:00Z","hidden":false}}
`), 0o600)
	if code, _, errs := runCLI(t, "import", "--url", dst, "--in", clash); code != 1 || !strings.Contains(errs, "board total exists on the target with another ranking") {
		t.Fatalf("clash: %d %s", code, errs)
	}
	if code, out, errs := runCLI(t, "import", "--url", dst, "--in", clash, "--skip-existing-boards"); code != 0 || !strings.Contains(out, "boards 0 created, 0 kept, 1 skipped") ||
		!strings.Contains(out, "entries 0 restored, 0 unchanged, 0 refused, 1 left out with their boards") || !strings.Contains(errs, "board total exists with another ranking") {
		t.Fatalf("clash skipped: %d %s%s", code, out, errs)
	}
	mustCall(t, dst, "GET", "/v1/boards/total/entries/zed", "", 404)
	if code, _, errs := runCLI(t, "import", "--url", dst, "--in", filepath.Join(dir, "nothing")); code != 1 || !strings.Contains(errs, "no such file") {
		t.Fatalf("missing file: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "import", "--url", dst, "--in", again, "--at", "2026-11-30T00:00:00Z"); code != 2 || !strings.Contains(errs, "--csv") {
		t.Fatalf("--at without --csv: %d %s", code, errs)
	}
}

// TestImportCSV restores a CSV file another system wrote into a daily
// board: the period each row's time falls in, a bad row refused and
// named, and a second run changes nothing.
func TestImportCSV(t *testing.T) {
	dst := startAt(t, nil).URL()
	mustCall(t, dst, "PUT", "/v1/boards/runs", `{"keys":[{"name":"score","order":"desc"},{"name":"kills","order":"desc"}],"reset":{"every":"day"},"public":true}`, 201)
	day := time.Now().UTC().Truncate(24 * time.Hour)
	yesterday := day.Add(-24*time.Hour + 3*time.Hour)
	csv := fmt.Sprintf("name,when,points,k\namy,%d,100,3\nben,%s,90,9\n\"cy, jr\",%s,100,3\nbad,%s,lots,1\n",
		yesterday.UnixMilli(), yesterday.Add(time.Minute).Format(time.RFC3339Nano), day.Add(time.Second).Format(time.RFC3339), day.Format(time.RFC3339))
	in := filepath.Join(t.TempDir(), "runs.csv")
	os.WriteFile(in, []byte(csv), 0o600)
	t.Setenv("PODIUM_ADMIN_KEY", "admin-secret")
	args := []string{"import", "--url", dst, "--in", in, "--csv", "--board", "runs", "--columns", "name,points,k,when"}
	code, out, errs := runCLI(t, args...)
	if code != 1 || !strings.Contains(out, "entries 3 restored, 0 unchanged, 1 refused") || !strings.Contains(errs, `CSV line 5: key 1: "lots" is not an integer`) {
		t.Fatalf("csv import: %d %s%s", code, out, errs)
	}
	got := boardState(t, dst, "runs")
	want := fmt.Sprintf("runs %s:\n  1 cy, jr \"cy, jr\" [100 3] %s map[] <nil>\nruns %s:\n  1 amy \"amy\" [100 3] %s map[] <nil>\n  2 ben \"ben\" [90 9] %s map[] <nil>\n",
		day.Format("2006-01-02"), day.Add(time.Second).Format("2006-01-02T15:04:05.000Z"),
		yesterday.Format("2006-01-02"), yesterday.Format("2006-01-02T15:04:05.000Z"), yesterday.Add(time.Minute).Format("2006-01-02T15:04:05.000Z"))
	if got != want {
		t.Fatalf("after the CSV import:\n%s\nwant:\n%s", got, want)
	}
	code, out, _ = runCLI(t, args...)
	if code != 1 || !strings.Contains(out, "entries 0 restored, 3 unchanged, 1 refused") {
		t.Fatalf("csv import again: %d %s", code, out)
	}
	if got := boardState(t, dst, "runs"); got != want {
		t.Fatalf("after a second CSV import:\n%s", got)
	}
	if code, _, errs := runCLI(t, "import", "--url", dst, "--in", in, "--csv", "--board", "runs"); code != 1 || !strings.Contains(errs, `the CSV has no column "player"`) {
		t.Fatalf("default columns: %d %s", code, errs)
	}
}

// TestImportAggregateAndBestK: an aggregate board is created after its
// sources' entries and computes the same entries; a second import finds
// the sources (which now feed an aggregate and take no restores) already
// equal; a best_k board's entries are refused by name (exit 1).
func TestImportAggregateAndBestK(t *testing.T) {
	day := time.Now().UTC().Truncate(24 * time.Hour)
	clk := &testClock{t: day.Add(-24 * time.Hour)}
	src := startAt(t, clk.Now).URL()
	mustCall(t, src, "PUT", "/v1/boards/s1", `{"keys":[{"name":"ms","order":"asc"}],"public":true}`, 201)
	mustCall(t, src, "PUT", "/v1/boards/s2", `{"keys":[{"name":"ms","order":"asc"}],"public":true}`, 201)
	mustCall(t, src, "PUT", "/v1/boards/k", `{"keys":[{"name":"ms","order":"asc"}],"mode":"best_k","keep":2,"public":true}`, 201)
	for i, s := range []string{"s1:amy:300", "s2:amy:200", "s1:bo:250", "s2:bo:260", "s1:cy:100", "k:amy:5", "k:amy:4"} {
		clk.Set(day.Add(-24*time.Hour + time.Duration(i)*time.Minute))
		f := strings.Split(s, ":")
		mustCall(t, src, "POST", "/v1/boards/"+f[0]+"/scores", fmt.Sprintf(`{"player":%q,"keys":[%s]}`, f[1], f[2]), 200)
	}
	mustCall(t, src, "PUT", "/v1/boards/agg", `{"keys":[{"name":"ms","order":"asc"}],"public":true,"aggregate":{"kind":"sum_of_bests","require_all":false,"sources":[{"board":"s1"},{"board":"s2"}]}}`, 201)
	want := boardState(t, src, "s1", "s2", "agg")
	if !strings.Contains(want, "agg all:\n  1 cy") || !strings.Contains(want, "[500]") {
		t.Fatalf("fixture: %s", want)
	}
	t.Setenv("PODIUM_ADMIN_KEY", "admin-secret")
	dump := filepath.Join(t.TempDir(), "dump.jsonl")
	if code, _, errs := runCLI(t, "export", "--url", src, "--out", dump); code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	dst := startAt(t, nil).URL()
	code, out, errs := runCLI(t, "import", "--url", dst, "--in", dump)
	if code != 1 || !strings.Contains(out, "boards 4 created, 0 kept, 0 skipped; players 0 updated, 3 unchanged; entries 5 restored, 0 unchanged, 1 refused") ||
		!strings.Contains(errs, `board k: 1 entries not restored`) || !strings.Contains(errs, "best_k") {
		t.Fatalf("import: %d %s%s", code, out, errs)
	}
	if got := boardState(t, dst, "s1", "s2", "agg"); got != want {
		t.Fatalf("after import:\n%s\nwant:\n%s", got, want)
	}
	code, out, errs = runCLI(t, "import", "--url", dst, "--in", dump)
	if code != 1 || !strings.Contains(out, "boards 0 created, 4 kept, 0 skipped; players 0 updated, 3 unchanged; entries 0 restored, 5 unchanged, 1 refused") {
		t.Fatalf("import again: %d %s%s", code, out, errs)
	}
	if got := boardState(t, dst, "s1", "s2", "agg"); got != want {
		t.Fatalf("after a second import:\n%s\nwant:\n%s", got, want)
	}
}

func TestPeriodStart(t *testing.T) {
	utc := podium.Reset{Every: podium.Weekly, TZ: "UTC"}
	for _, c := range []struct {
		reset podium.Reset
		id    string
		want  string
	}{
		{utc, "2026-W49", "2026-11-30T00:00:00Z"},
		{utc, "2026-W01", "2025-12-29T00:00:00Z"},
		{utc, "2026-W53", "2026-12-28T00:00:00Z"}, // 2026 starts on a Thursday: 53 ISO weeks
		{utc, "2025-W53", ""},                     // 52 weeks
		{utc, "2020-W53", "2020-12-28T00:00:00Z"},
		{podium.Reset{Every: podium.Daily, TZ: "Europe/Paris"}, "2026-11-30", "2026-11-29T23:00:00Z"},
		{podium.Reset{Every: podium.Monthly, TZ: "UTC"}, "2026-11", "2026-11-01T00:00:00Z"},
		{podium.Reset{Every: podium.Never}, "all", ""},
		{podium.Reset{Every: podium.Daily}, "2026-13-01", ""},
	} {
		got, ok := periodStart(c.reset, c.id)
		s := ""
		if ok {
			s = got.UTC().Format(time.RFC3339)
		}
		if s != c.want {
			t.Errorf("periodStart(%v, %s) = %q, want %q", c.reset, c.id, s, c.want)
		}
	}
}

// A CSV with a period column and no time: each row at its period's start.
func TestImportCSVPeriodColumn(t *testing.T) {
	dst := startAt(t, nil).URL()
	mustCall(t, dst, "PUT", "/v1/boards/w", `{"keys":[{"name":"score","order":"desc"}],"reset":{"every":"day"},"public":true}`, 201)
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-48 * time.Hour)
	in := filepath.Join(t.TempDir(), "w.csv")
	os.WriteFile(in, []byte("player,score,period\namy,5,"+day.Format("2006-01-02")+"\nbo,6,2999-01-01\n"), 0o600)
	t.Setenv("PODIUM_ADMIN_KEY", "admin-secret")
	code, out, errs := runCLI(t, "import", "--url", dst, "--in", in, "--csv", "--board", "w")
	if code != 1 || !strings.Contains(out, "entries 1 restored, 0 unchanged, 1 refused") || !strings.Contains(errs, "is in the future") {
		t.Fatalf("import: %d %s%s", code, out, errs)
	}
	if got := boardState(t, dst, "w"); got != fmt.Sprintf("w %s:\n  1 amy \"amy\" [5] %s map[] <nil>\n", day.Format("2006-01-02"), day.Format("2006-01-02T15:04:05.000Z")) {
		t.Fatalf("after import: %s", got)
	}
}

// TestImportCSVFormulaCells: a player cell that an export neutralised
// against spreadsheet formulas ('=x) is imported as the player it names
// (=x); other cells that begin with an apostrophe are kept as they are.
func TestImportCSVFormulaCells(t *testing.T) {
	dst := startAt(t, nil).URL()
	mustCall(t, dst, "PUT", "/v1/boards/fx", `{"keys":[{"name":"score","order":"desc"}],"public":true}`, 201)
	in := filepath.Join(t.TempDir(), "fx.csv")
	os.WriteFile(in, []byte("player,score,at\n'=x,3,2026-01-01T00:00:00Z\n'y,2,2026-01-01T00:00:00Z\n''-z,1,2026-01-01T00:00:00Z\n"), 0o600)
	t.Setenv("PODIUM_ADMIN_KEY", "admin-secret")
	if code, out, errs := runCLI(t, "import", "--url", dst, "--in", in, "--csv", "--board", "fx"); code != 0 || !strings.Contains(out, "entries 3 restored") {
		t.Fatalf("import: %d %s%s", code, out, errs)
	}
	want := "fx all:\n  1 =x \"=x\" [3] 2026-01-01T00:00:00.000Z map[] <nil>\n  2 'y \"'y\" [2] 2026-01-01T00:00:00.000Z map[] <nil>\n  3 '-z \"'-z\" [1] 2026-01-01T00:00:00.000Z map[] <nil>\n"
	if got := boardState(t, dst, "fx"); got != want {
		t.Fatalf("after import:\n%s\nwant:\n%s", got, want)
	}
}

// TestImportGroupsAndLeagues: an export carries a league's definition, a
// group set's memberships and a group board's definition; an import makes
// them again, the group board recomputed from the restored source and the
// joined members, equal to the source server's.
func TestImportGroupsAndLeagues(t *testing.T) {
	src := startAt(t, nil).URL()
	mustCall(t, src, "PUT", "/v1/boards/pts", `{"keys":[{"name":"points","order":"desc"}],"public":true}`, 201)
	mustCall(t, src, "PUT", "/v1/boards/clans", `{"keys":[{"name":"members","order":"desc"}],"public":true,"group_set":{"max_members":3}}`, 201)
	mustCall(t, src, "PUT", "/v1/boards/clan-sum", `{"keys":[{"name":"points","order":"desc"}],"public":true,"group_board":{"set":"clans","source":"pts","rule":"sum","k":2}}`, 201)
	mustCall(t, src, "PUT", "/v1/boards/xp", `{"keys":[{"name":"xp","order":"desc"}],"mode":"sum","public":true,"reset":{"every":"week","tz":"UTC"},
		"league":{"cohort_size":5,"tiers":[{"name":"bronze","promote":1},{"name":"silver","relegate":1}]}}`, 201)
	for _, m := range []string{"red:amy", "red:bo", "red:cy", "blue:dee"} {
		f := strings.Split(m, ":")
		mustCall(t, src, "PUT", "/v1/groups/clans/"+f[0]+"/members/"+f[1], "", 201)
	}
	for _, s := range []string{"amy:30", "bo:20", "cy:25", "dee:40"} {
		f := strings.Split(s, ":")
		mustCall(t, src, "POST", "/v1/boards/pts/scores", fmt.Sprintf(`{"player":%q,"keys":[%s]}`, f[0], f[1]), 200)
	}
	// The sets' and group boards' entries are computed again on import,
	// at its time: their ranks and values must match, not their times.
	derived := func(base string) string {
		return regexp.MustCompile(`\d{4}-\d\d-\d\dT[0-9:.]+Z`).ReplaceAllString(boardState(t, base, "clans", "clan-sum"), "T")
	}
	want, wantDerived := boardState(t, src, "pts"), derived(src)
	if !strings.Contains(wantDerived, `1 red "red" [55]`) || !strings.Contains(wantDerived, `2 blue "blue" [40]`) {
		t.Fatalf("fixture: %s", wantDerived)
	}
	t.Setenv("PODIUM_ADMIN_KEY", "admin-secret")
	dump := filepath.Join(t.TempDir(), "dump.jsonl")
	if code, _, errs := runCLI(t, "export", "--url", src, "--out", dump); code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	dst := startAt(t, nil).URL()
	code, out, errs := runCLI(t, "import", "--url", dst, "--in", dump)
	if code != 0 || !strings.Contains(out, "boards 4 created") || !strings.Contains(out, "group members 4 joined, 0 unchanged") {
		t.Fatalf("import: %d %s%s", code, out, errs)
	}
	if got, gotDerived := boardState(t, dst, "pts"), derived(dst); got != want || gotDerived != wantDerived {
		t.Fatalf("after import:\n%s%s\nwant:\n%s%s", got, gotDerived, want, wantDerived)
	}
	lg := mustCall(t, dst, "GET", "/v1/boards/xp", "", 200)["league"].(map[string]any)
	if lg["cohort_size"] != 5.0 || len(lg["tiers"].([]any)) != 2 {
		t.Fatalf("the league after import: %v", lg)
	}
	code, out, errs = runCLI(t, "import", "--url", dst, "--in", dump)
	if code != 0 || !strings.Contains(out, "boards 0 created, 4 kept") || !strings.Contains(out, "group members 0 joined, 4 unchanged") {
		t.Fatalf("import again: %d %s%s", code, out, errs)
	}
	if got, gotDerived := boardState(t, dst, "pts"), derived(dst); got != want || gotDerived != wantDerived {
		t.Fatalf("after a second import:\n%s%s\nwant:\n%s%s", got, gotDerived, want, wantDerived)
	}
}
