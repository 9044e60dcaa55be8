package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBrowserAdminConsole drives the admin console (/admin) in headless
// Chromium as an operator would: sign in with the admin key, create a
// board through the console, see scores submitted through the API, delete
// an entry, download an entry's evidence, hide and unhide a player, edit the board (a refusal shown),
// move between tabs by keyboard, create a key (its secret shown once),
// revoke it and see it fail against the API, manage a player and their
// sessions, create a contest, settle a tournament; a refused key signs out. The key
// lives in sessionStorage only, and the page raises no script error or
// Content-Security-Policy violation.
func TestBrowserAdminConsole(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)
	base, api := startBrowserServer(t)
	call := func(method, path, key, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := api.hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(out)
	}

	// The page's own headers: the strict policy, no framing, never cached.
	res, err := http.Get(base + "/admin")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); res.StatusCode != 200 || !strings.Contains(csp, "script-src 'self';") ||
		!strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "form-action 'none'") || strings.Contains(csp, "unsafe") {
		t.Errorf("GET /admin: %d, Content-Security-Policy %q", res.StatusCode, csp)
	}
	if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("GET /admin: Cache-Control %q, want no-store", cc)
	}

	driver := startChromedriver(t, chromedriver)
	wd := driver.newSession(t, chromium)
	shots := os.Getenv("PODIUM_TEST_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	resize := func(w, h int) {
		t.Helper()
		if _, err := wd.d.call("POST", wd.url+"/window/rect", map[string]int{"width": w, "height": h}); err != nil {
			t.Fatalf("resize: %v", err)
		}
	}
	resize(1280, 900)
	run := func(script string, args ...any) {
		t.Helper()
		if err := wd.exec(nil, script, args...); err != nil {
			t.Fatalf("%s: %v", script, err)
		}
	}
	wait := func(within time.Duration, script string, ok func(string) bool, what string) string {
		t.Helper()
		got, good := wd.waitString(within, script, ok)
		if !good {
			t.Fatalf("%s: after %v got %q", what, within, got)
		}
		return got
	}
	is := func(want string) func(string) bool { return func(s string) bool { return s == want } }
	has := func(want string) func(string) bool { return func(s string) bool { return strings.Contains(s, want) } }
	text := func(sel string) string {
		return `const e = document.querySelector(` + strconv.Quote(sel) + `); return e && !e.closest("[hidden]") ? e.innerText : "";`
	}
	click := func(sel string) {
		t.Helper()
		var ok bool
		if err := wd.exec(&ok, `const e = document.querySelector(arguments[0]); if (!e) return false; e.click(); return true;`, sel); err != nil || !ok {
			t.Fatalf("click %s: not found (err %v)", sel, err)
		}
	}
	set := func(sel, value string) {
		t.Helper()
		var ok bool
		if err := wd.exec(&ok, `const e = document.querySelector(arguments[0]); if (!e) return false;
			if (e.type === "checkbox") e.checked = arguments[1] === "true"; else e.value = arguments[1];
			e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); return true;`, sel, value); err != nil || !ok {
			t.Fatalf("set %s: not found (err %v)", sel, err)
		}
	}
	submit := func(sel string) { t.Helper(); run(`document.querySelector(arguments[0]).requestSubmit();`, sel) }
	confirmDialog := func(want string) {
		t.Helper()
		wait(2*time.Second, `const d = document.getElementById("confirm"); return d.open ? d.innerText : "";`, has(want), "the confirm dialog")
		click("#confirm-ok")
	}

	// Sign in: a wrong key is refused with the server's reason, and kept nowhere.
	wd.open(base + "/admin")
	wait(5*time.Second, `return document.activeElement ? document.activeElement.id : "";`, is("signin-key"), "focus on the key field")
	set("#signin-key", "not-a-key")
	submit("#signin-form")
	wait(5*time.Second, text("#signin-error"), has("401 unauthenticated"), "a wrong key's error")
	set("#signin-key", browserAdminKey)
	submit("#signin-form")
	// The Moderation tab shows only on a server that has GET /v1/review.
	wantTabs := "Boards|API keys|Players|Contests & tournaments|Leagues"
	if st, _ := call("GET", "/v1/review?limit=1", browserAdminKey, ""); st != 404 {
		wantTabs += "|Moderation"
	}
	// So does the Webhooks tab on a server that keeps webhooks.
	if st, _ := call("GET", "/v1/webhooks", browserAdminKey, ""); st == 200 {
		wantTabs += "|Webhooks"
	}
	wait(5*time.Second, `return Array.from(document.querySelectorAll("#tabs [role=tab]"), (b) => b.hidden ? "" : b.textContent).filter(Boolean).join("|");`,
		is(wantTabs), "the tabs")
	wait(5*time.Second, text("#panel-boards .empty"), has("No boards yet"), "the empty board list")
	var where struct {
		Stored, Cookie, URL, Field string
	}
	if err := wd.exec(&where, `return {Stored: sessionStorage.getItem("podium.adminKey") || "", Cookie: document.cookie,
		URL: location.href, Field: document.getElementById("signin-key").value};`); err != nil {
		t.Fatal(err)
	}
	if where.Stored != browserAdminKey || where.Cookie != "" || strings.Contains(where.URL, browserAdminKey) || where.Field != "" {
		t.Errorf("after sign-in: sessionStorage %q, cookies %q, URL %q, key field %q; want the key in sessionStorage only",
			where.Stored, where.Cookie, where.URL, where.Field)
	}
	if v, err := wd.d.call("GET", wd.url+"/cookie", nil); err != nil || string(v) != "[]" {
		t.Errorf("browser cookies: %s (err %v), want none", v, err)
	}

	// Create a board through the console, with labels and formats; the
	// ordering rule reads in words as the keys are typed. A setting the
	// server refuses shows its message next to the form.
	click("#board-new")
	set("#board-id", "con.sprint")
	set("#board-title", "Sprint")
	set("#board-keys .key-row:nth-child(1) .k-name", "time_ms")
	set("#board-keys .key-row:nth-child(1) .k-order", "asc")
	set("#board-keys .key-row:nth-child(1) .k-label", "Time")
	set("#board-keys .key-row:nth-child(1) .k-format", "duration_ms")
	click("#board-keys + button")
	set("#board-keys .key-row:nth-child(2) .k-name", "bbbv")
	set("#board-keys .key-row:nth-child(2) .k-label", "3BV")
	wait(time.Second, text("#order-preview"), is("Ranked by Time (lower is better), then 3BV (higher is better); an exact tie goes to whoever reached it first."), "the ordering rule")
	set("#board-every", "day")
	set("#board-tz", "Mars/Olympus_Mons")
	set("#board-public", "true")
	submit("#board-form")
	wait(5*time.Second, text("#board-form .error"), has("400 invalid_argument"), "the server's refusal of an unknown zone")
	wd.screenshot(filepath.Join(shots, "admin-board-form.png"))
	if st, _ := call("GET", "/v1/boards/con.sprint", browserAdminKey, ""); st != 404 {
		t.Fatalf("a refused board exists: GET answered %d", st)
	}
	set("#board-every", "none")
	set("#board-tz", "")
	set("#board-keep-periods", "3")
	submit("#board-form")
	wait(5*time.Second, text(`#boards-table tr[data-board="con.sprint"]`), has("Sprint"), "the new board in the list")
	_, body := call("GET", "/v1/boards/con.sprint", browserAdminKey, "")
	var board struct {
		Public      bool `json:"public"`
		KeepPeriods int  `json:"keep_periods"`
		Keys        []struct{ Name, Order, Label, Format string }
	}
	if err := json.Unmarshal([]byte(body), &board); err != nil || !board.Public || board.KeepPeriods != 3 || len(board.Keys) != 2 ||
		board.Keys[0] != (struct{ Name, Order, Label, Format string }{"time_ms", "asc", "Time", "duration_ms"}) ||
		board.Keys[1].Name != "bbbv" || board.Keys[1].Order != "desc" || board.Keys[1].Label != "3BV" {
		t.Fatalf("the board the console created: %s (err %v)", body, err)
	}

	// Scores submitted through the API show in the console.
	api.submit("con.sprint", "alice", 41234, 120)
	api.submit("con.sprint", "bob", 50000, 90)
	api.submit("con.sprint", "carol", 65000, 80)
	click("#panel-boards .toolbar button:last-child") // Refresh
	wait(5*time.Second, text(`#boards-table tr[data-board="con.sprint"] [data-col=entries]`), is("3"), "the entry count")
	click(`#boards-table tr[data-board="con.sprint"] button[aria-label="Entries of con.sprint"]`)
	rows := `return Array.from(document.querySelectorAll("#entries-table tbody tr[data-player]"), (tr) =>
		Array.from(tr.cells, (c) => c.innerText.trim()).slice(0, 5).join(" ")).join(" | ");`
	wait(5*time.Second, rows, has("1 alice"), "the entries")
	wait(time.Second, rows, is("1 alice alice 41.234 s 120 | 2 bob bob 50.000 s 90 | 3 carol carol 1:05.000 80"), "the entries with their formats")
	wd.screenshot(filepath.Join(shots, "admin-entries.png"))

	// Evidence: alice's replay downloads with the admin key; carol has none.
	replay := "{\"t\":0,\"click\":[1,2]}\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(replay))
	zw.Close()
	sum := func(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }
	req, _ := http.NewRequest("PUT", base+"/v1/boards/con.sprint/entries/alice/evidence?content_sha256="+sum([]byte(replay))+
		"&compressed_sha256="+sum(gz.Bytes()), bytes.NewReader(gz.Bytes()))
	req.Header.Set("Authorization", "Bearer "+browserAdminKey)
	req.Header.Set("Content-Type", "application/gzip")
	if res, err := api.hc.Do(req); err != nil || res.StatusCode/100 != 2 {
		t.Fatalf("upload alice's evidence: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	click(`#entries-table button[aria-label="Evidence of alice"]`)
	wait(5*time.Second, text("#notice"), is("Evidence of alice downloaded."), "alice's evidence")
	click(`#entries-table button[aria-label="Evidence of carol"]`)
	wait(5*time.Second, text("#notice"), has("No evidence for the entry of carol"), "carol's missing evidence")

	// Delete Carol's entry (after confirming), hide Bob.
	click(`#entries-table tr[data-player="carol"] button.danger`)
	confirmDialog("Delete the entry of \u201ccarol\u201d")
	wait(5*time.Second, rows, is("1 alice alice 41.234 s 120 | 2 bob bob 50.000 s 90"), "the entries after deleting carol's")
	if st, out := call("GET", "/v1/boards/con.sprint/entries/carol", "", ""); st != 404 {
		t.Errorf("carol's entry after the console deleted it: %d %s", st, out)
	}
	click(`#entries-table tr[data-player="bob"] button[aria-label="Hide bob"]`)
	wait(5*time.Second, `const tr = document.querySelector('#entries-table tr[data-player="bob"]'); return tr ? tr.dataset.hidden : "";`, is("true"), "bob hidden")
	if _, out := call("GET", "/v1/boards/con.sprint/entries", "", ""); !strings.Contains(out, `"total":1`) || strings.Contains(out, `"bob"`) {
		t.Errorf("the public ranking after hiding bob: %s", out)
	}

	click(`#entries-table tr[data-player="bob"] button[aria-label="Unhide bob"]`)
	wait(5*time.Second, `const tr = document.querySelector('#entries-table tr[data-player="bob"]'); return tr ? tr.dataset.hidden : "";`, is("false"), "bob shown again")
	if _, out := call("GET", "/v1/boards/con.sprint/entries", "", ""); !strings.Contains(out, `"total":2`) || !strings.Contains(out, `"bob"`) {
		t.Errorf("the public ranking after unhiding bob: %s", out)
	}

	// Edit the board: a change the server refuses on a board with entries
	// (a key's order) shows its 409; a new title is saved.
	click(`#boards-table button[aria-label="Edit con.sprint"]`)
	wait(time.Second, `return document.getElementById("board-id").readOnly + " " + document.getElementById("board-id").value;`, is("true con.sprint"), "the editor on con.sprint")
	set("#board-title", "Sprint 2")
	set("#board-keys .key-row:nth-child(1) .k-order", "desc")
	wait(time.Second, text("#order-preview"), has("Time (higher is better)"), "the ordering rule follows the form")
	submit("#board-form")
	wait(5*time.Second, text("#board-form .error"), has("409 conflict"), "the server's refusal to reorder a board with entries")
	set("#board-keys .key-row:nth-child(1) .k-order", "asc")
	submit("#board-form")
	wait(5*time.Second, text(`#boards-table tr[data-board="con.sprint"]`), has("Sprint 2"), "the new title in the list")

	// The tabs follow the keyboard (ARIA tabs: arrows move and select).
	key := func(k string) {
		t.Helper()
		run(`document.activeElement.dispatchEvent(new KeyboardEvent("keydown", {key: arguments[0], bubbles: true}));`, k)
	}
	run(`document.getElementById("tab-boards").focus();`)
	key("ArrowRight")
	wait(time.Second, `return document.activeElement.id + " " + document.getElementById("panel-keys").hidden;`, is("tab-keys false"), "ArrowRight to API keys")
	key("ArrowLeft")
	wait(time.Second, `return document.activeElement.id + " " + document.getElementById("panel-boards").hidden;`, is("tab-boards false"), "ArrowLeft back to Boards")

	// A key: created in the console, its secret shown once; it works until
	// the console revokes it, then the API refuses it.
	click("#tab-keys")
	set("#key-name", "game-server")
	set("#key-scope-submit", "true")
	set("#key-scope-read", "true")
	set("#key-boards", "con.")
	submit("#key-form")
	secret := wait(5*time.Second, text("#key-secret"), func(s string) bool { return s != "" }, "the new key's secret")
	if st, out := call("POST", "/v1/boards/con.sprint/scores", secret, `{"player": "dave", "keys": [70000, 10]}`); st != 200 {
		t.Fatalf("the new key submits: %d %s", st, out)
	}
	wait(5*time.Second, text("#keys-table tbody"), has("game-server"), "the key in the list")
	wd.screenshot(filepath.Join(shots, "admin-key-created.png"))
	click("#key-secret-box button.secondary") // Done
	var shown bool
	if err := wd.exec(&shown, `return document.body.innerHTML.includes(arguments[0]);`, secret); err != nil || shown {
		t.Errorf("the secret is still in the page after Done (err %v)", err)
	}
	click(`#keys-table button[aria-label^="Revoke game-server"]`)
	confirmDialog("Revoke key \u201cgame-server\u201d")
	wait(5*time.Second, text("#panel-keys .list"), func(s string) bool { return !strings.Contains(s, "game-server") }, "the revoked key gone from the list")
	if st, out := call("POST", "/v1/boards/con.sprint/scores", secret, `{"player": "dave", "keys": [60000, 10]}`); st != 401 {
		t.Errorf("the revoked key: %d %s, want 401", st, out)
	}

	// Players: rename, and sessions: list, revoke all.
	api.do("POST", "/v1/players/alice/sessions", `{"device": "phone"}`)
	api.do("POST", "/v1/players/alice/sessions", `{"device": "laptop"}`)
	click("#tab-players")
	set("#player-lookup", "alice")
	submit("#player-form")
	wait(5*time.Second, `return Array.from(document.querySelectorAll("#sessions-table tbody th"), (c) => c.innerText).sort().join(",");`, is("laptop,phone"), "alice's sessions")
	set("#player-name", "Alice A.")
	submit("#player-result form")
	wait(5*time.Second, text("#notice"), has("Player \u2068alice\u2069 saved"), "the rename")
	if _, out := call("GET", "/v1/players/alice", browserAdminKey, ""); !strings.Contains(out, `"name":"Alice A."`) || !strings.Contains(out, `"hidden":false`) {
		t.Errorf("alice after the console renamed her: %s", out)
	}
	wait(5*time.Second, `return document.getElementById("sessions-revoke-all") ? "yes" : "";`, is("yes"), "the sessions reloaded")
	click("#sessions-revoke-all")
	confirmDialog("Revoke every session of alice")
	wait(5*time.Second, text("#sessions"), has("No open sessions"), "no sessions after revoking all")
	if _, out := call("GET", "/v1/players/alice/sessions", browserAdminKey, ""); strings.TrimSpace(out) != `{"sessions":[]}` {
		t.Errorf("alice's sessions after revoking all: %s", out)
	}

	// Contests and tournaments: create a contest from the JSON form; settle
	// a tournament.
	now := time.Now().UTC()
	api.do("PUT", "/v1/boards/con.cup", `{"title": "Cup", "public": true, "keys": [{"name": "score", "order": "desc"}],
		"tournament": {"start": "`+now.Add(-time.Hour).Format(time.RFC3339)+`", "end": "`+now.Add(time.Hour).Format(time.RFC3339)+`"}}`)
	api.submit("con.cup", "alice", 10)
	click("#tab-contests")
	set("#contest-id", "con.ctf")
	set("#contest-json", `{"title": "Finals", "start": "`+now.Format(time.RFC3339)+`", "end": "`+now.Add(2*time.Hour).Format(time.RFC3339)+`", "public": true}`)
	submit("#contest-form")
	wait(5*time.Second, `const a = document.querySelector('#contests-table tr[data-contest="con.ctf"] th a'); return a ? a.getAttribute("href") : "";`,
		is("/contests/con.ctf"), "the new contest, linked to its live page")
	// The form, in the viewer's zone: a contest that ended frozen, then
	// revealed from the console.
	local := func(d time.Duration) string { return now.Add(d).Local().Format("2006-01-02T15:04") }
	set("#contest-id", "con.past")
	set("#contest-title", "Past")
	set("#contest-start", local(-3*time.Hour))
	set("#contest-end", local(-time.Hour))
	set("#contest-freeze", local(-2*time.Hour))
	set("#contest-first-blood", "10, 5, 3")
	set("#contest-public", "true")
	submit("#contest-form")
	wait(5*time.Second, text(`#contests-table tr[data-contest="con.past"]`), has("ended"), "the frozen contest from the form")
	_, out := call("GET", "/v1/contests/con.past", browserAdminKey, "")
	var past struct {
		Start, End, Freeze string
		FirstBlood         []int `json:"first_blood"`
		Public             bool
	}
	if err := json.Unmarshal([]byte(out), &past); err != nil || !past.Public || len(past.FirstBlood) != 3 || past.FirstBlood[0] != 10 ||
		past.Start != now.Add(-3*time.Hour).Truncate(time.Minute).Format("2006-01-02T15:04:05.000Z") || past.Freeze == "" {
		t.Errorf("the contest the form created: %s (err %v)", out, err)
	}
	click(`#contests-table button[aria-label="Unfreeze con.past"]`)
	confirmDialog("Reveal the final standings of con.past")
	wait(5*time.Second, text(`#contests-table tr[data-contest="con.past"]`), has("final"), "the revealed contest")
	wait(5*time.Second, text(`#tournaments-table tr[data-board="con.cup"]`), has("open"), "the tournament's state")
	click(`#tournaments-table button[aria-label="Settle con.cup"]`)
	confirmDialog("Settle con.cup")
	wait(5*time.Second, text("#notice"), has("Settled con.cup: run 1, 1 players"), "the settlement")
	wait(5*time.Second, text(`#tournaments-table tr[data-board="con.cup"]`), has("run 1"), "the settled tournament")
	wd.screenshot(filepath.Join(shots, "admin-contests.png"))

	// Leagues: a league's tiers in the current period, and a settle with
	// nothing due.
	api.do("PUT", "/v1/boards/con.league", `{"title": "League", "public": true, "keys": [{"name": "xp", "order": "desc"}], "mode": "sum",
		"reset": {"every": "week", "tz": "UTC"}, "league": {"cohort_size": 2, "tiers": [{"name": "bronze", "promote": 1}, {"name": "silver", "relegate": 1}]}}`)
	api.submit("con.league", "alice", 10)
	api.submit("con.league", "bob", 20)
	api.submit("con.league", "carol", 30)
	click("#tab-leagues")
	wait(5*time.Second, text(`[data-league="con.league"] .league-tiers`), has("bronze"), "the league's tiers")
	wait(5*time.Second, `const r = document.querySelector('[data-league="con.league"] .league-tiers tbody tr:last-child'); return r ? r.innerText.replace(/\s+/g, " ").trim() : "";`,
		is("bronze 3 2 1 0"), "bronze's members and cohorts")
	click(`[data-league="con.league"] button[aria-label="Settle con.league"]`)
	confirmDialog("Settle the ended periods of con.league")
	wait(5*time.Second, text("#notice"), has("Nothing was due"), "a settle with nothing due")
	wd.screenshot(filepath.Join(shots, "admin-leagues.png"))

	// A phone: the board list and entries fit the width.
	click("#tab-boards")
	wait(5*time.Second, text(`#boards-table tr[data-board="con.sprint"] [data-col=entries]`), is("3"), "the entry count after the changes (alice, bob, dave)")
	resize(390, 844)
	click(`#boards-table tr[data-board="con.sprint"] button[aria-label="Entries of con.sprint"]`)
	wait(5*time.Second, rows, has("alice"), "the entries on a phone")
	wait(time.Second, `return String(document.documentElement.scrollWidth <= document.documentElement.clientWidth);`, is("true"), "no sideways scrolling on a phone")
	wd.screenshot(filepath.Join(shots, "admin-phone.png"))
	resize(1280, 900)

	// A key the server refuses signs out with a clear message.
	run(`sessionStorage.setItem("podium.adminKey", "revoked-or-wrong");`)
	click("#panel-boards .toolbar button:last-child")
	wait(5*time.Second, text("#signin-error"), has("The server refused the admin key (401 unauthenticated"), "the sign-out on 401")
	var left string
	if err := wd.exec(&left, `return (sessionStorage.getItem("podium.adminKey") || "") + "|" + document.getElementById("console").hidden;`); err != nil || left != "|true" {
		t.Errorf("after a 401: stored key and console hidden = %q (err %v), want none and hidden", left, err)
	}
	// Sign in again, then sign out: the key is gone.
	set("#signin-key", browserAdminKey)
	submit("#signin-form")
	wait(5*time.Second, `return document.getElementById("console").hidden ? "" : "shown";`, is("shown"), "the console after signing in again")
	click("#signout")
	if err := wd.exec(&left, `return (sessionStorage.getItem("podium.adminKey") || "") + "|" + document.getElementById("signin").hidden;`); err != nil || left != "|false" {
		t.Errorf("after sign out: stored key and sign-in hidden = %q (err %v)", left, err)
	}

	logs := wd.consoleLog()
	t.Logf("browser console: %d messages", len(logs))
	for _, e := range logs {
		// Chromium logs every error answer as a network error: the wrong
		// and the refused key (401), the refused board (400), the refused
		// reordering (409), carol's missing evidence (404) and the
		// moderation probe on a server without it (404) are expected.
		if e.Source == "network" && (strings.Contains(e.Message, " 401 ") || strings.Contains(e.Message, " 400 ") || strings.Contains(e.Message, " 409 ") ||
			strings.Contains(e.Message, "/v1/review?limit=1 - Failed to load resource: the server responded with a status of 404") ||
			strings.Contains(e.Message, "/entries/carol/evidence - Failed to load resource: the server responded with a status of 404")) {
			continue
		}
		if e.Source == "javascript" || strings.Contains(e.Message, "Content Security Policy") || e.Level == "SEVERE" {
			t.Errorf("browser console: %s %s: %s", e.Level, e.Source, e.Message)
		}
	}
}
