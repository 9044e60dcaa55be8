package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBrowserAdminEditEveryKind opens every kind of board in the console's
// editor and saves it unchanged: what the console reads back from
// GET /v1/boards must be a body PUT accepts, for best_k, aggregate,
// tournament, points, resetting and player_submit boards, key bounds,
// quotas, evidence policies and review holds alike, and the
// board must be the same afterwards. Entries are paged 50 at a time.
func TestBrowserAdminEditEveryKind(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)
	base, api := startBrowserServer(t)
	now := time.Now().UTC()
	boards := map[string]string{
		"k.daily": `{"title": "Daily", "keys": [{"name": "score", "order": "desc", "label": "Score", "format": "points", "min": -5, "max": 9007199254740991}],
			"reset": {"every": "day", "tz": "Asia/Shanghai"}, "public": true, "player_submit": true, "meta": {"game": "ms"},
			"quota": {"max": 3}, "evidence": {"max_bytes": 65536, "public": true}, "review": {"hold": "top", "top": 2}}`,
		"k.beg": `{"keys": [{"name": "time_ms", "order": "asc"}], "mode": "best_k", "keep": 5, "public": true}`,
		"k.int": `{"keys": [{"name": "time_ms", "order": "asc"}], "mode": "best", "public": false}`,
		"k.sum": `{"title": "Sum", "keys": [{"name": "time_ms", "order": "asc"}], "public": true,
			"aggregate": {"kind": "best_k_sum", "require_all": true, "sources": [{"board": "k.beg", "k": 3, "fill": [10000]}, {"board": "k.int", "k": 1, "fill": [60000]}]}}`,
		"k.cup": `{"title": "Cup", "keys": [{"name": "score", "order": "desc"}], "public": true,
			"tournament": {"start": "` + now.Add(-time.Hour).Format(time.RFC3339) + `", "end": "` + now.Add(time.Hour).Format(time.RFC3339) + `",
			"join_required": true, "max_participants": 10, "weight": 50, "category": "weekly", "series": "s1", "ladder": "pts"}}`,
		"k.pts": `{"public": true, "mode": "sum", "keys": [{"name": "era", "order": "desc"}, {"name": "points", "order": "desc"}],
			"points": {"ladder": "pts", "kind": "current", "half_life_days": 730}}`,
	}
	boards["k.clans"] = `{"title": "Clans", "keys": [{"name": "members", "order": "desc"}], "public": true, "group_set": {"max_members": 3}}`
	boards["k.clanbest"] = `{"title": "Clans, best", "keys": [{"name": "time_ms", "order": "asc"}], "public": true,
		"group_board": {"set": "k.clans", "source": "k.int", "rule": "best"}}`
	order := []string{"k.daily", "k.beg", "k.int", "k.sum", "k.cup", "k.pts", "k.clans", "k.clanbest"}
	for _, id := range order {
		api.do("PUT", "/v1/boards/"+id, boards[id])
	}
	api.submit("k.beg", "alice", 3000)
	api.submit("k.int", "alice", 50000)
	api.do("PUT", "/v1/groups/k.clans/red/members/alice", "")
	before := map[string]string{}
	for _, id := range order {
		before[id] = stripTimes(string(api.do("GET", "/v1/boards/"+id, "")))
	}

	driver := startChromedriver(t, chromedriver)
	wd := driver.newSession(t, chromium)
	wd.open(base + "/admin")
	if err := wd.exec(nil, `document.getElementById("signin-key").value = arguments[0]; document.getElementById("signin-form").requestSubmit();`, browserAdminKey); err != nil {
		t.Fatal(err)
	}
	for _, id := range order {
		script := `const b = document.querySelector('#boards-table button[aria-label="Edit ` + id + `"]'); if (!b) return "";
			b.click(); document.getElementById("board-form").requestSubmit(); return "sent";`
		if got, ok := wd.waitString(5*time.Second, script, func(s string) bool { return s == "sent" }); !ok {
			t.Fatalf("%s: no Edit button (%q)", id, got)
		}
		got, ok := wd.waitString(5*time.Second, `const n = document.getElementById("notice"), e = document.querySelector("#board-form .error");
			return e && !e.hidden ? "error: " + e.textContent : n.hidden ? "" : n.textContent;`,
			func(s string) bool { return strings.HasPrefix(s, "error") || s == "Board "+id+" saved." })
		if !ok || got != "Board "+id+" saved." {
			t.Errorf("%s saved unchanged from the console: %q", id, got)
			continue
		}
		if after := stripTimes(string(api.do("GET", "/v1/boards/"+id, ""))); after != before[id] {
			t.Errorf("%s changed by an unchanged save:\nbefore %s\nafter  %s", id, before[id], after)
		}
		// The editor closes on success.
		if got, ok := wd.waitString(5*time.Second, `return document.getElementById("board-form").closest("[hidden]") ? "closed" : "open";`,
			func(s string) bool { return s == "closed" }); !ok {
			t.Errorf("%s: the editor is %s after saving", id, got)
		}
		wd.exec(nil, `document.getElementById("notice").hidden = true;`)
	}
	// A set's entries come with its members panel: add a player to a
	// group and see the members.
	if err := wd.exec(nil, `document.querySelector('#boards-table button[aria-label="Entries of k.clans"]').click();`); err != nil {
		t.Fatal(err)
	}
	if got, ok := wd.waitString(5*time.Second, `const g = document.getElementById("group-id"); if (!g) return "";
		g.value = "red"; document.getElementById("group-player").value = "bob"; document.getElementById("group-join").click(); return "sent";`,
		func(s string) bool { return s == "sent" }); !ok {
		t.Fatalf("no members panel on a set's entries (%q)", got)
	}
	members := `return Array.from(document.querySelectorAll("#group-members-table tbody tr[data-player]")).map((r) => r.dataset.player).join(",");`
	if got, ok := wd.waitString(5*time.Second, members, func(s string) bool { return s == "alice,bob" }); !ok {
		t.Fatalf("members of red after adding bob in the console: %q", got)
	}
	if !strings.Contains(string(api.do("GET", "/v1/boards/k.clanbest/entries", "")), `"player":"red"`) {
		t.Errorf("the group board has no entry for red")
	}
	// Entries are paged 50 at a time.
	var batch []string
	for i := 0; i < 54; i++ {
		batch = append(batch, `{"board": "k.int", "player": "p`+strconv.Itoa(i)+`", "keys": [`+strconv.Itoa(60000+i)+`]}`)
	}
	api.do("POST", "/v1/scores", `{"scores": [`+strings.Join(batch, ",")+`]}`)
	rng := `const r = document.getElementById("entries-range"); return r ? r.textContent + " " + document.querySelectorAll("#entries-table tbody tr[data-player]").length : "";`
	if err := wd.exec(nil, `document.querySelector('#boards-table button[aria-label="Entries of k.int"]').click();`); err != nil {
		t.Fatal(err)
	}
	if got, ok := wd.waitString(5*time.Second, rng, func(s string) bool { return s == "1–50 of 55 50" }); !ok {
		t.Fatalf("the first page of entries: %q", got)
	}
	if err := wd.exec(nil, `Array.from(document.querySelectorAll(".pager button")).find((b) => b.textContent === "Next").click();`); err != nil {
		t.Fatal(err)
	}
	if got, ok := wd.waitString(5*time.Second, rng, func(s string) bool { return s == "51–55 of 55 5" }); !ok {
		t.Fatalf("the second page of entries: %q", got)
	}
	for _, e := range wd.consoleLog() {
		if e.Source == "javascript" || strings.Contains(e.Message, "Content Security Policy") {
			t.Errorf("browser console: %s %s: %s", e.Level, e.Source, e.Message)
		}
	}
}

// stripTimes drops updated_at (a save moves it) from a board's JSON.
func stripTimes(s string) string {
	for _, k := range []string{`"updated_at":"`} {
		if i := strings.Index(s, k); i >= 0 {
			j := strings.IndexByte(s[i+len(k):], '"')
			s = s[:i] + s[i+len(k)+j+1:]
		}
	}
	return s
}
