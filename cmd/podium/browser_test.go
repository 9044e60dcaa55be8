package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBrowserLiveBoard opens the live board page in headless Chromium and
// checks what a viewer sees: the ranking follows submissions within
// moments, movement is marked, and the page reconnects on its own after
// the server restarts. It needs chromium and chromedriver
// (apt-get install -y chromium chromium-driver); it skips without them
// unless PODIUM_TEST_BROWSER=1, which CI sets.
func TestBrowserLiveBoard(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)

	port := browserFreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	base := "http://" + addr
	data := t.TempDir()
	var serverLog browserOutput
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", serverLog.String())
		}
	})
	var m *Main
	start := func() {
		t.Helper()
		m = &Main{Config: Config{Addr: addr, Data: data, Sync: "normal", AdminKey: browserAdminKey,
			Shutdown: 2 * time.Second, LogLevel: "warn"}, Stderr: &serverLog}
		if err := m.Open(context.Background()); err != nil {
			t.Fatalf("start the server on %s: %v", addr, err)
		}
	}
	start()
	t.Cleanup(func() {
		if m != nil {
			m.Close()
		}
	})

	api := browserAPI{t: t, base: base, hc: &http.Client{Timeout: 10 * time.Second}}
	const board = "e2e.sprint"
	api.do("PUT", "/v1/boards/"+board, `{"title": "Sprint: fastest time, then most 3BV",
		"keys": [{"name": "time_ms", "order": "asc"}, {"name": "bbbv", "order": "desc"}],
		"mode": "best", "public": true}`)
	for _, p := range [][2]string{{"alice", "Alice"}, {"bob", "Bob"}, {"carol", "Carol"}, {"dave", "Dave"}} {
		api.do("PUT", "/v1/players/"+p[0], fmt.Sprintf(`{"name": %q}`, p[1]))
	}
	api.submit(board, "alice", 50_000, 100)

	driver := startChromedriver(t, chromedriver)
	wd := driver.newSession(t, chromium)
	shots := os.Getenv("PODIUM_TEST_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}

	wd.open(base + "/boards/" + board)
	waitLive(t, wd, 10*time.Second)
	waitRows(t, wd, 5*time.Second, "alice:1")

	// Two players pass Alice in one batch: the page follows within 2 s.
	if out := api.do("POST", "/v1/scores", `{"scores": [
		{"board": "e2e.sprint", "player": "bob", "keys": [41234, 120]},
		{"board": "e2e.sprint", "player": "carol", "keys": [47000, 90]}]}`); bytes.Contains(out, []byte(`"error"`)) {
		t.Fatalf("batch submission: %s", out)
	}
	waitRows(t, wd, 2*time.Second, "bob:1,carol:2,alice:3")
	// The activity feed under the board names the new #1 (feed.js); its
	// newest event is Carol's personal best, submitted after Bob's.
	if got, ok := wd.waitString(5*time.Second, `const li = document.querySelector('#feed li[data-kind="new_leader"]');
		return li ? li.dataset.kind + ": " + li.textContent : "";`, func(s string) bool {
		return strings.HasPrefix(s, "new_leader: \u2068Bob\u2069 took #1 with 41.234 s · 120 from \u2068Alice\u2069")
	}); !ok {
		t.Errorf("the newest activity is %q, want Bob taking #1 from Alice", got)
	}

	// Keys are formatted by name, under headers named after the keys.
	var cells struct {
		Head []string `json:"head"`
		Bob  []string `json:"bob"`
		Move string   `json:"move"`
	}
	if err := wd.exec(&cells, `
		const text = (l) => Array.from(l, (e) => e.innerText.trim());
		return {
			head: text(document.querySelectorAll("#board-table thead th")),
			bob: text(document.querySelectorAll('#rows tr[data-player="bob"] td')),
			move: document.querySelector('#rows tr[data-player="alice"] .move').className + " " +
				document.querySelector('#rows tr[data-player="alice"] .move').textContent,
		};`); err != nil {
		t.Fatal(err)
	}
	if !containsAll(cells.Head, "time_ms", "bbbv") {
		t.Errorf("column headers = %q, want the key names time_ms and bbbv", cells.Head)
	}
	if !containsAll(cells.Bob, "Bob", "41.234 s", "120", "66.66%") {
		t.Errorf("Bob's row = %q, want his name, 41.234 s, 120 and his percentile 66.66%% (first of 3)", cells.Bob)
	}
	if !strings.Contains(cells.Move, "down") || !strings.Contains(cells.Move, "\u25BC") {
		t.Errorf("Alice fell from 1st to 3rd but her movement marker is %q, want a down marker", cells.Move)
	}
	wd.screenshot(filepath.Join(shots, "board-live.png"))

	// Restart the server on the same port and data: the page must notice,
	// reconnect on its own (no reload) and show what changed meanwhile.
	if err := wd.exec(nil, `window.podiumTestNoReload = true;`); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("close the server: %v", err)
	}
	m = nil
	if st, ok := wd.waitString(5*time.Second, statusScript, func(s string) bool { return !strings.HasPrefix(s, "live") }); !ok {
		t.Errorf("the server is down but the page still says %q", st)
	}
	start()
	restarted := time.Now()
	api.submit(board, "alice", 40_000, 100)
	waitRows(t, wd, 35*time.Second, "alice:1,bob:2,carol:3")
	waitLive(t, wd, 5*time.Second)
	t.Logf("the page recovered %v after the server came back", time.Since(restarted).Round(time.Millisecond))
	var same bool
	if err := wd.exec(&same, `return window.podiumTestNoReload === true;`); err != nil || !same {
		t.Errorf("the page was reloaded instead of reconnecting (err %v)", err)
	}
	wd.screenshot(filepath.Join(shots, "board-after-restart.png"))

	// The WebSocket transport and ?limit= in the page address.
	wd.open(base + "/boards/" + board + "?transport=ws&limit=2")
	waitLive(t, wd, 10*time.Second)
	waitRows(t, wd, 5*time.Second, "alice:1,bob:2")
	api.submit(board, "dave", 30_000, 80)
	waitRows(t, wd, 2*time.Second, "dave:1,alice:2")

	// A board with rank_style shared shows the shared ranks (1, 1, 3),
	// live, and every row's percentile follows the total as players join.
	api.do("PUT", "/v1/boards/e2e.ties", `{"keys": [{"name": "points", "order": "desc"}], "public": true, "rank_style": "shared"}`)
	api.do("POST", "/v1/scores", `{"scores": [{"board": "e2e.ties", "player": "alice", "keys": [10]},
		{"board": "e2e.ties", "player": "bob", "keys": [10]}, {"board": "e2e.ties", "player": "carol", "keys": [5]}]}`)
	wd.open(base + "/boards/e2e.ties")
	waitLive(t, wd, 10*time.Second)
	const sharedScript = `return Array.from(document.querySelectorAll("#rows tr[data-player]"), (tr) => tr.dataset.player + ":" +
		tr.querySelector(".rank").textContent + ":" + tr.querySelector('td[data-key="percentile"]').textContent).join(",");`
	if got, ok := wd.waitString(5*time.Second, sharedScript, func(s string) bool { return s == "alice:1:66.66%,bob:1:33.33%,carol:3:0.00%" }); !ok {
		t.Errorf("shared ranks and percentiles = %q, want alice:1:66.66%%,bob:1:33.33%%,carol:3:0.00%%", got)
	}
	api.do("POST", "/v1/scores", `{"scores": [{"board": "e2e.ties", "player": "dave", "keys": [1]}]}`)
	if got, ok := wd.waitString(5*time.Second, sharedScript, func(s string) bool {
		return s == "alice:1:75.00%,bob:1:50.00%,carol:3:25.00%,dave:4:0.00%"
	}); !ok {
		t.Errorf("after a fourth player = %q, want every percentile moved with the total", got)
	}
	wd.screenshot(filepath.Join(shots, "board-shared-ranks.png"))

	// The board list links to the board.
	wd.open(base + "/")
	if href, ok := wd.waitString(5*time.Second,
		`const a = document.querySelector('#boards li[data-board="e2e.sprint"] h2 a'); return a ? a.getAttribute("href") : "";`,
		func(s string) bool { return s != "" }); !ok || href != "/boards/e2e.sprint" {
		t.Errorf("board list link = %q, want /boards/e2e.sprint", href)
	}

	// A board that does not exist: the page says so and stops retrying.
	wd.open(base + "/boards/e2e.missing")
	if st, ok := wd.waitString(5*time.Second, statusScript, func(s string) bool { return strings.HasPrefix(s, "error") }); !ok {
		t.Errorf("missing board: status %q, want error", st)
	}
	var notice string
	if err := wd.exec(&notice, `return document.getElementById("notice").textContent;`); err != nil || !strings.Contains(notice, "does not exist") {
		t.Errorf("missing board: notice %q (err %v), want it to say the board does not exist", notice, err)
	}

	// No script errors and no Content-Security-Policy violations on the way
	// (failed connections while the server was down are expected).
	for _, e := range wd.consoleLog() {
		if e.Source == "javascript" || strings.Contains(e.Message, "Content Security Policy") {
			t.Errorf("browser console: %s %s: %s", e.Level, e.Source, e.Message)
		}
	}
}

const browserAdminKey = "browser-test-admin-key"

// statusScript reads the page's connection indicator: its state, then its
// text.
const statusScript = `const s = document.getElementById("status");
	return s ? s.dataset.state + " | " + s.textContent : "no #status";`

// rowsScript lists the table rows as player:rank, in page order.
const rowsScript = `return Array.from(document.querySelectorAll("#rows tr[data-player]"),
	(tr) => tr.dataset.player + ":" + tr.dataset.rank).join(",");`

func waitLive(t *testing.T, wd *wdSession, timeout time.Duration) {
	t.Helper()
	st, ok := wd.waitString(timeout, statusScript, func(s string) bool {
		state, text, _ := strings.Cut(s, " | ")
		return state == "live" && strings.Contains(text, "live")
	})
	if !ok {
		t.Fatalf("the page did not go live within %v; status: %q", timeout, st)
	}
}

func waitRows(t *testing.T, wd *wdSession, timeout time.Duration, want string) {
	t.Helper()
	start := time.Now()
	got, ok := wd.waitString(timeout, rowsScript, func(s string) bool { return s == want })
	if !ok {
		var st string
		wd.exec(&st, statusScript)
		t.Fatalf("rows after %v = %q, want %q (status %q)", timeout, got, want, st)
	}
	t.Logf("rows %s after %v", want, time.Since(start).Round(time.Millisecond))
}

func containsAll(list []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, s := range list {
			if s == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// browserBinaries returns the paths of Chromium and chromedriver, skipping
// the test when they are missing, unless PODIUM_TEST_BROWSER=1 requires
// them.
func browserBinaries(t *testing.T) (chromium, chromedriver string) {
	required := os.Getenv("PODIUM_TEST_BROWSER") == "1"
	if testing.Short() && !required {
		t.Skip("browser test skipped in -short mode (PODIUM_TEST_BROWSER=1 runs it)")
	}
	chromium, chromedriver = "/usr/bin/chromium", "/usr/bin/chromedriver"
	if p := os.Getenv("PODIUM_CHROMIUM"); p != "" {
		chromium = p
	}
	if p := os.Getenv("PODIUM_CHROMEDRIVER"); p != "" {
		chromedriver = p
	}
	for _, p := range []string{chromium, chromedriver} {
		if _, err := os.Stat(p); err != nil {
			msg := fmt.Sprintf("the browser test needs %s: install with apt-get install -y chromium chromium-driver (%v)", p, err)
			if required {
				t.Fatal(msg + "; PODIUM_TEST_BROWSER=1 requires it")
			}
			t.Skip(msg + "; set PODIUM_TEST_BROWSER=1 to make this a failure")
		}
	}
	return chromium, chromedriver
}

// browserAPI calls the podium API with the admin key.
type browserAPI struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func (a browserAPI) do(method, path, body string) []byte {
	a.t.Helper()
	req, err := http.NewRequest(method, a.base+path, bytes.NewReader([]byte(body)))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+browserAdminKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := a.hc.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		a.t.Fatalf("%s %s: HTTP %d: %s", method, path, res.StatusCode, out)
	}
	return out
}

func (a browserAPI) submit(board, player string, keys ...int64) {
	a.t.Helper()
	b, _ := json.Marshal(map[string]any{"player": player, "keys": keys})
	a.do("POST", "/v1/boards/"+board+"/scores", string(b))
}

// startBrowserServer starts podium on a free port with a fresh data
// directory and the browser tests' admin key, closes it when t ends
// (printing its log if t failed), and returns its base URL and an API
// caller.
func startBrowserServer(t *testing.T, configure ...func(*Config)) (string, browserAPI) {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(browserFreePort(t))
	var serverLog browserOutput
	m := &Main{Config: Config{Addr: addr, Data: t.TempDir(), Sync: "normal", AdminKey: browserAdminKey,
		Shutdown: 2 * time.Second, LogLevel: "warn"}, Stderr: &serverLog}
	for _, f := range configure {
		f(&m.Config)
	}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close()
		if t.Failed() {
			t.Logf("server log:\n%s", serverLog.String())
		}
	})
	base := "http://" + addr
	return base, browserAPI{t: t, base: base, hc: &http.Client{Timeout: 10 * time.Second}}
}
