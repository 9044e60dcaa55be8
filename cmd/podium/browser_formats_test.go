package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBrowserFormatPages drives the competition formats' pages in
// headless Chromium: a tournament page shows its window, participants
// and state, and after the scheduler settles it, the payouts; the ladder's
// current points board shows each player's decayed points (not the raw
// era and fixed-point keys) and links the tournament; a best_k board
// shows kept results; an aggregate board names its sources; the index
// lists the contest and marks the formats.
func TestBrowserFormatPages(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)
	addr := "127.0.0.1:" + strconv.Itoa(browserFreePort(t))
	base := "http://" + addr
	start := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	end := start.Add(7 * 24 * time.Hour)
	var (
		mu  sync.Mutex
		now = start.Add(time.Hour)
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var serverLog browserOutput
	m := &Main{Config: Config{Addr: addr, Data: t.TempDir(), Sync: "normal", AdminKey: browserAdminKey,
		Shutdown: 2 * time.Second, LogLevel: "warn"}, Stderr: &serverLog, Now: clock}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close()
		if t.Failed() {
			t.Logf("server log:\n%s", serverLog.String())
		}
	})
	api := browserAPI{t: t, base: base, hc: &http.Client{Timeout: 10 * time.Second}}
	api.do("PUT", "/v1/boards/pts:current", `{"title": "Current points", "public": true, "mode": "sum",
		"keys": [{"name": "era", "order": "desc"}, {"name": "points", "order": "desc"}],
		"points": {"ladder": "pts", "kind": "current"}}`)
	api.do("PUT", "/v1/boards/wk", fmt.Sprintf(`{"title": "Week 49", "public": true, "keys": [{"name": "time_ms", "order": "asc"}],
		"tournament": {"start": %q, "end": %q, "weight": 50, "ladder": "pts", "max_participants": 10}}`,
		start.Format(time.RFC3339), end.Format(time.RFC3339)))
	api.do("PUT", "/v1/boards/bk", `{"title": "Best three", "public": true, "keys": [{"name": "time_ms", "order": "asc"}], "mode": "best_k", "keep": 3}`)
	api.do("PUT", "/v1/boards/agg", `{"title": "Sum", "public": true, "keys": [{"name": "time_ms", "order": "asc"}],
		"aggregate": {"kind": "best_k_sum", "sources": [{"board": "bk", "k": 2, "fill": [9000]}]}}`)
	api.do("PUT", "/v1/contests/ctf:x", `{"title": "Finals", "start": "2026-12-07T00:00:00Z", "end": "2026-12-08T00:00:00Z", "public": true}`)
	for p, ms := range map[string]int64{"amy": 30000, "bob": 35000, "cid": 40000} {
		api.submit("wk", p, ms)
	}
	for _, ms := range []int64{4000, 3000, 5000, 6000} {
		api.submit("bk", "amy", ms)
	}

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
	fact := func(name string) string {
		return `const d = document.querySelector('[data-fact="` + name + `"]'); return d ? d.textContent : "none";`
	}

	// The tournament while it runs.
	wd.open(base + "/boards/wk")
	waitLive(t, wd, 10*time.Second)
	waitRows(t, wd, 5*time.Second, "amy:1,bob:2,cid:3")
	wait(fact("state"), "open", 5*time.Second) // the API's word (docs/API.md), as in the console
	wait(fact("participants"), "3 / 10", time.Second)
	wait(`return document.querySelector('[data-fact="end"] time').dateTime;`, "2026-12-14T00:00:00.000Z", time.Second)
	wait(`return String(document.getElementById("payouts").hidden);`, "true", time.Second)

	// After the end the server's scheduler settles it (credits dated at
	// the end, read 18 days later): the page shows the payouts.
	mu.Lock()
	now = end.Add(18 * 24 * time.Hour)
	mu.Unlock()
	wd.open(base + "/boards/wk")
	wait(fact("state"), "settled", 10*time.Second)
	wait(`return Array.from(document.querySelectorAll("#payout-rows tr"),
		(tr) => Array.from(tr.children, (td) => td.textContent).join("|")).join(";");`, "1|amy|50;2|bob|25;3|cid|17", 5*time.Second)
	wait(`return document.getElementById("points-boards").textContent;`, "Credited to Current points.", time.Second)
	wd.screenshot(filepath.Join(shots, "tournament-settled.png"))

	// The current points board: decayed points, the exact keys in the title.
	wd.open(base + "/boards/pts:current")
	waitLive(t, wd, 10*time.Second)
	waitRows(t, wd, 5*time.Second, "amy:1,bob:2,cid:3")
	wait(`return Array.from(document.querySelectorAll("#head-row th"), (th) => th.textContent).join("|");`, "#|Player|Points|Ahead of|When", time.Second)
	wait(`const td = document.querySelector('#rows tr[data-player="amy"] td[data-key="points"]');
		return td.textContent + "|" + td.dataset.value + "|" + td.title;`, "49.15|49.152696|era 28, points 1181831112", time.Second)
	wait(`const a = document.querySelector("#ladder a"); return a ? a.textContent + "|" + a.getAttribute("href") : "none";`,
		"Week 49|/boards/wk", 5*time.Second)
	wd.screenshot(filepath.Join(shots, "points-current.png"))

	// best_k: the kept results, best first; aggregate: its sources.
	// The pages left behind closed their streams (a browser has 6
	// connections per server: more pages would not load).
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got := grepMetric(api.do("GET", "/metrics", ""), "podium_stream_connections")
		if got == "podium_stream_connections 2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("streams open with one page: %s, want 2 (the board's and the feed's)", got)
		}
	}
	wd.open(base + "/boards/agg")
	waitLive(t, wd, 10*time.Second)
	wait(`return document.getElementById("sources").textContent;`, "best 2 on bk (a missing one counts 9.000 s)", 5*time.Second)
	waitRows(t, wd, 5*time.Second, "amy:1")
	wd.open(base + "/boards/bk")
	waitLive(t, wd, 10*time.Second)
	wait(`const td = document.querySelector('#rows tr[data-player="amy"] td[data-key="results"]'); return td ? td.textContent : "none";`,
		"3.000 s \u00b7 4.000 s \u00b7 5.000 s", 5*time.Second)

	// The index: the contest, and the formats marked.
	wd.open(base + "/")
	wait(`const a = document.querySelector('#contests li[data-contest="ctf:x"] a');
		return a ? a.textContent + "|" + a.getAttribute("href") : "none";`, "Finals|/contests/ctf%3Ax", 5*time.Second)
	wait(`return Array.from(document.querySelectorAll("#boards li"), (li) => {
		const b = li.querySelector(".badge"); return li.dataset.board + ":" + (b ? b.dataset.kind : "-"); }).join(",");`,
		"agg:aggregate,bk:best_k,pts:current:points,wk:tournament", 5*time.Second)
	wd.screenshot(filepath.Join(shots, "index-formats.png"))

	// A phone: the tournament page fits the width (the table scrolls inside its frame if it must).
	if _, err := wd.d.call("POST", wd.url+"/window/rect", map[string]int{"width": 380, "height": 800}); err != nil {
		t.Fatalf("resize: %v", err)
	}
	wd.open(base + "/boards/wk")
	wait(fact("state"), "settled", 5*time.Second)
	wait(`return String(document.documentElement.scrollWidth <= document.documentElement.clientWidth);`, "true", time.Second)
	wd.screenshot(filepath.Join(shots, "tournament-phone.png"))

	for _, e := range wd.consoleLog() {
		if e.Source == "javascript" || strings.Contains(e.Message, "Content Security Policy") {
			t.Errorf("browser console: %s %s: %s", e.Level, e.Source, e.Message)
		}
	}
}

func grepMetric(b []byte, name string) string {
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, name+" ") {
			return l
		}
	}
	return "?"
}
