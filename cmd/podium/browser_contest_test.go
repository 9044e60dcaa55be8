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

// TestBrowserContestPage drives the live contest page in headless
// Chromium: the standings follow solves live, the challenges show their
// current values, solve counts and first bloods, the chart draws one line
// per team, and after the freeze the public page stops moving.
func TestBrowserContestPage(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)
	addr := "127.0.0.1:" + strconv.Itoa(browserFreePort(t))
	base := "http://" + addr
	var (
		mu  sync.Mutex
		now = time.Date(2026, 11, 30, 11, 10, 0, 0, time.UTC)
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
	const id = "ctf:e2e"
	api.do("PUT", "/v1/contests/"+id, `{"title": "E2E finals", "start": "2026-11-30T11:00:00Z",
		"end": "2026-11-30T13:00:00Z", "freeze": "2026-11-30T12:30:00Z", "first_blood": [10, 5, 3], "public": true}`)
	api.do("PUT", "/v1/contests/"+id+"/challenges/web", `{"name": "Web 1", "category": "web",
		"scoring": {"function": "ctfd_logarithmic", "value": 500, "minimum": 100, "decay": 10}}`)
	api.do("PUT", "/v1/contests/"+id+"/challenges/pwn", `{"category": "pwn", "scoring": {"value": 300}}`)
	api.do("PUT", "/v1/players/alice", `{"name": "Team Alice"}`)
	solve := func(team, ch string) {
		api.do("POST", "/v1/contests/"+id+"/attempts", fmt.Sprintf(`{"team": %q, "challenge": %q, "correct": true}`, team, ch))
	}
	solve("alice", "web")

	driver := startChromedriver(t, chromedriver)
	wd := driver.newSession(t, chromium)
	shots := os.Getenv("PODIUM_TEST_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	wd.open(base + "/contests/" + id)
	waitLive(t, wd, 10*time.Second)
	const teams = `return Array.from(document.querySelectorAll("#rows tr[data-team]"),
		(tr) => tr.dataset.team + ":" + tr.dataset.rank + ":" + tr.children[2].firstChild.textContent).join(",");`
	wait := func(script, want string, within time.Duration) {
		t.Helper()
		if got, ok := wd.waitString(within, script, func(s string) bool { return s == want }); !ok {
			t.Fatalf("after %v: %q, want %q", within, got, want)
		}
	}
	wait(teams, "alice:1:550", 15*time.Second)

	mu.Lock()
	now = now.Add(10 * time.Minute)
	mu.Unlock()
	solve("bob", "web")
	solve("bob", "pwn")
	// web: 2 solves, 496; alice 496+50, bob 496+25 + 300+30.
	wait(teams, "bob:1:851,alice:2:546", 15*time.Second)
	// A challenge's first cell holds its category too, under the name (shown on a phone).
	const chals = `return Array.from(document.querySelectorAll("#challenges tr"),
		(tr) => Array.from(tr.children, (td) => td.textContent.trim()).join("|")).join(";");`
	wait(chals, "pwnpwn|pwn|300|1|1stbob;Web 1web|web|496|2|1stTeam Alice2ndbob", 15*time.Second)
	wait(`return String(document.querySelectorAll("#chart path").length);`, "2", 15*time.Second)
	wd.screenshot(filepath.Join(shots, "contest-live.png"))
	// A phone: the standings, chart and challenges fit the width.
	if _, err := wd.d.call("POST", wd.url+"/window/rect", map[string]int{"width": 390, "height": 844}); err != nil {
		t.Fatalf("resize: %v", err)
	}
	wait(`return String(document.documentElement.scrollWidth <= document.documentElement.clientWidth);`, "true", 15*time.Second)
	wd.screenshot(filepath.Join(shots, "contest-phone.png"))
	if _, err := wd.d.call("POST", wd.url+"/window/rect", map[string]int{"width": 1200, "height": 900}); err != nil {
		t.Fatalf("resize: %v", err)
	}

	// After the freeze the public page shows the board as it was.
	mu.Lock()
	now = time.Date(2026, 11, 30, 12, 40, 0, 0, time.UTC)
	mu.Unlock()
	solve("carol", "web")
	solve("carol", "pwn")
	// A barrier instead of a pause: a rename after the frozen solves goes
	// out on the same stream after them, so once the page shows it, it has
	// seen whatever the solves sent.
	api.do("PUT", "/v1/players/bob", `{"name": "Bob B"}`)
	wait(`return String(document.getElementById("rows").textContent.includes("Bob B"));`, "true", 15*time.Second)
	wait(teams, "bob:1:851,alice:2:546", 15*time.Second)
	if n, _ := wd.waitString(12*time.Second, `return document.getElementById("notice").textContent;`,
		func(s string) bool { return strings.Contains(s, "frozen") }); !strings.Contains(n, "frozen") {
		t.Errorf("notice %q, want it to say the standings are frozen", n)
	}

	for _, e := range wd.consoleLog() {
		if e.Source == "javascript" || strings.Contains(e.Message, "Content Security Policy") {
			t.Errorf("browser console: %s %s: %s", e.Level, e.Source, e.Message)
		}
	}
}
