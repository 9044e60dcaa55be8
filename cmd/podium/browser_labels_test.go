package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBrowserLabelsAndTies drives a board whose keys carry labels and
// formats in headless Chromium: the headers use the labels, the values
// their formats, the page says the ordering rule in words; on a phone the
// tie-break key is hidden except under rows tied on the first key; the
// index shows each board's leader and entry count.
func TestBrowserLabelsAndTies(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)
	base, api := startBrowserServer(t)
	api.do("PUT", "/v1/boards/lbl", `{"title": "Expert", "public": true, "keys": [
		{"name": "time_ms", "order": "asc", "label": "Time", "format": "duration_ms"},
		{"name": "bbbv", "order": "desc", "label": "3BV", "format": "integer"}]}`)
	api.do("PUT", "/v1/players/alice", `{"name": "Alice"}`)
	api.submit("lbl", "alice", 41234, 120)
	api.submit("lbl", "bob", 41234, 90)
	api.submit("lbl", "carol", 65000, 1500)

	driver := startChromedriver(t, chromedriver)
	wd := driver.newSession(t, chromium)
	shots := os.Getenv("PODIUM_TEST_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	wait := func(script, want string, within time.Duration) {
		t.Helper()
		if got, ok := wd.waitString(within, script, func(s string) bool { return s == want }); !ok {
			t.Fatalf("after %v: %q, want %q", within, got, want)
		}
	}
	row := func(player string) string {
		return `return Array.from(document.querySelectorAll('#rows tr[data-player="` + player + `"] td'), (td) => td.innerText.trim()).join("|");`
	}
	tiebreak := func(player string) string {
		return `const s = document.querySelector('#rows tr[data-player="` + player + `"] .tiebreak');
			return s ? getComputedStyle(s).display : "missing";`
	}

	wd.open(base + "/boards/lbl")
	waitLive(t, wd, 10*time.Second)
	waitRows(t, wd, 5*time.Second, "alice:1,bob:2,carol:3")
	wait(`return Array.from(document.querySelectorAll("#head-row th"), (th) => th.textContent).join("|");`, "#|Player|Time|3BV|Ahead of|When", time.Second)
	if got, _ := wd.waitString(time.Second, row("carol"), func(string) bool { return true }); !strings.HasPrefix(got, "3|carol|1:05.000|1,500|") {
		t.Errorf("carol's row on a wide screen: %q, want 1:05.000 and 1,500 under their labels", got)
	}
	wait(`return document.getElementById("order-rule").textContent;`,
		"Ranked by Time (lower is better), then 3BV (higher is better); an exact tie goes to whoever reached it first.", time.Second)
	wait(tiebreak("alice"), "none", time.Second) // a wide screen shows 3BV in its own column
	wd.screenshot(filepath.Join(shots, "board-labels.png"))

	// A phone: the 3BV column is hidden, so the two rows tied on time say
	// what ordered them; carol, tied with nobody, does not.
	if _, err := wd.d.call("POST", wd.url+"/window/rect", map[string]int{"width": 380, "height": 800}); err != nil {
		t.Fatalf("resize: %v", err)
	}
	wait(tiebreak("alice"), "block", 2*time.Second)
	wait(tiebreak("bob"), "block", time.Second)
	wait(tiebreak("carol"), "none", time.Second)
	wait(`return document.querySelector('#rows tr[data-player="bob"] td[data-key="time_ms"]').innerText.replace(/\s+/g, " ");`,
		"41.234 s then 3BV 90", time.Second)
	wait(`return String(document.documentElement.scrollWidth <= document.documentElement.clientWidth);`, "true", time.Second)
	wd.screenshot(filepath.Join(shots, "board-phone-ties.png"))
	// A new score breaks the tie: the marks follow the live updates.
	api.submit("lbl", "bob", 41000, 90)
	waitRows(t, wd, 2*time.Second, "bob:1,alice:2,carol:3")
	wait(tiebreak("alice"), "none", time.Second)
	// The activity feed shows the values in the keys' formats too.
	wait(`const li = document.querySelector('#feed li[data-kind="new_leader"]'); return li ? li.firstChild.textContent : "";`,
		"\u2068bob\u2069 took #1 with 41.000 s · 90 from \u2068Alice\u2069 (41.234 s · 120)", 5*time.Second)

	// The history chart: a player's name charts their entry over the
	// period (bob improved once: a step), the button the top 10.
	if err := wd.exec(nil, `document.querySelector('#rows tr[data-player="bob"] .name').click();`); err != nil {
		t.Fatal(err)
	}
	wait(`const ps = document.querySelectorAll("#history-chart path.line");
		return ps.length + "|" + (ps[0] ? ps[0].dataset.player + "|" + (ps[0].getAttribute("d").match(/V/g) || []).length : "");`, "1|bob|1", 5*time.Second)
	wait(`return document.getElementById("history-title").textContent;`, "History of \u2068bob\u2069", time.Second)
	if err := wd.exec(nil, `document.getElementById("history-top").click();`); err != nil {
		t.Fatal(err)
	}
	wait(`return Array.from(document.querySelectorAll("#history-legend li"), (li) => li.dataset.player).join(",") + "|" +
		document.querySelectorAll("#history-chart path.line").length;`, "bob,alice,carol|3", 5*time.Second)
	wd.screenshot(filepath.Join(shots, "board-history.png"))

	// The index names each board's leader and counts its entries.
	if _, err := wd.d.call("POST", wd.url+"/window/rect", map[string]int{"width": 1200, "height": 900}); err != nil {
		t.Fatalf("resize: %v", err)
	}
	wd.open(base + "/")
	wait(`const li = document.querySelector('#boards li[data-board="lbl"]');
		const f = (n) => { const d = li && li.querySelector('[data-fact="' + n + '"]'); return d ? d.textContent : "none"; };
		return f("leader") + " | " + f("entries");`, "bob · 41.000 s / 90 | 3", 5*time.Second)
	wd.screenshot(filepath.Join(shots, "index-leaders.png"))

	for _, e := range wd.consoleLog() {
		if e.Source == "javascript" || strings.Contains(e.Message, "Content Security Policy") {
			t.Errorf("browser console: %s %s: %s", e.Level, e.Source, e.Message)
		}
	}
}
