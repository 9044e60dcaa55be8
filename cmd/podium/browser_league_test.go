package main

import (
	"strings"
	"testing"
	"time"
)

// TestBrowserLeagueCohort: a league cohort's live page shows the player's
// cohort ranked, with its zones, and follows its cohort stream: a score
// that changes the cohort's order shows without a reload.
func TestBrowserLeagueCohort(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)
	base, api := startBrowserServer(t)
	api.do("PUT", "/v1/boards/xp", `{"title": "XP", "public": true, "keys": [{"name": "xp", "order": "desc"}], "mode": "sum",
		"reset": {"every": "week", "tz": "UTC"},
		"league": {"cohort_size": 3, "tiers": [{"name": "bronze", "promote": 1}, {"name": "silver", "relegate": 1}]}}`)
	api.submit("xp", "alice", 10)
	api.submit("xp", "bob", 20)
	api.submit("xp", "carol", 30)

	driver := startChromedriver(t, chromedriver)
	wd := driver.newSession(t, chromium)
	wd.open(base + "/leagues/xp?player=alice")
	const rows = `return Array.from(document.querySelectorAll("#rows tr"), (r) => r.dataset.player + ":" + r.dataset.zone).join(" ");`
	if got, _ := wd.waitString(10*time.Second, rows, func(s string) bool { return s != "" }); got != "carol:promotion bob:safe alice:safe" {
		t.Fatalf("alice's cohort: %q", got)
	}
	api.submit("xp", "alice", 50) // sum: 60, ahead of carol
	if got, _ := wd.waitString(10*time.Second, rows, func(s string) bool { return strings.HasPrefix(s, "alice") }); got != "alice:promotion carol:safe bob:safe" {
		t.Fatalf("alice's cohort after her score: %q", got)
	}
	// The player's page follows the cohort's stream: it never re-reads
	// the cohort (the read's route was never requested).
	if m := string(api.do("GET", "/metrics", "")); strings.Contains(m, `route="GET /v1/leagues/{board}/players/{player}/cohort"`) ||
		!strings.Contains(m, "podium_http_requests_total") {
		t.Errorf("the page read the cohort instead of following its stream")
	}
	for _, e := range wd.consoleLog() {
		if e.Source == "javascript" || strings.Contains(e.Message, "Content Security Policy") {
			t.Errorf("browser console: %s %s: %s", e.Level, e.Source, e.Message)
		}
	}
}
