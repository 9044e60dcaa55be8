package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBrowserAdminContest drives the console's contest manager in
// headless Chromium, as a CTF organiser runs an event (issue 18, item
// 15): create a challenge, edit its scoring (previewed and confirmed:
// values are retroactive), hide and delete one, see the solve grid after
// solves, filter the attempt log, and reveal and re-freeze with a button
// that follows the freeze's state. The contest's times are moved by PUT
// (the browser's clock is the real one).
func TestBrowserAdminContest(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)
	base, api := startBrowserServer(t)
	now := time.Now().UTC()
	ts := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	putContest := func(start, freeze, end time.Duration) {
		api.do("PUT", "/v1/contests/ctf:con", fmt.Sprintf(`{"title": "Console CTF", "start": %q, "freeze": %q, "end": %q, "public": true, "first_blood": [10, 5, 3]}`,
			ts(start), ts(freeze), ts(end)))
	}
	putContest(-10*time.Minute, time.Hour, 2*time.Hour)
	api.do("PUT", "/v1/players/alice", `{"name": "Team <b>Alice</b>"}`)
	solve := func(team, ch string, correct bool) {
		api.do("POST", "/v1/contests/ctf:con/attempts", fmt.Sprintf(`{"team": %q, "challenge": %q, "correct": %v}`, team, ch, correct))
	}

	driver := startChromedriver(t, chromedriver)
	wd := driver.newSession(t, chromium)
	shots := os.Getenv("PODIUM_TEST_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	if _, err := wd.d.call("POST", wd.url+"/window/rect", map[string]int{"width": 1280, "height": 900}); err != nil {
		t.Fatalf("resize: %v", err)
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
	submit := func(sel string) {
		t.Helper()
		if err := wd.exec(nil, `document.querySelector(arguments[0]).requestSubmit();`, sel); err != nil {
			t.Fatalf("submit %s: %v", sel, err)
		}
	}
	confirmDialog := func(want string) {
		t.Helper()
		wait(20*time.Second, `const d = document.getElementById("confirm"); return d.open ? d.innerText : "";`, has(want), "the confirm dialog")
		click("#confirm-ok")
		wait(20*time.Second, `return String(document.getElementById("confirm").open);`, is("false"), "the dialog closed")
	}
	phase := func(want, button string) {
		t.Helper()
		wait(20*time.Second, `const s = document.getElementById("freeze-status"); const b = document.getElementById("freeze-action");
			return s ? s.dataset.phase + "|" + (b ? b.textContent : "") : "";`, is(want+"|"+button), "the freeze control")
	}
	row := func(ch string) string { return text(`#challenges-table tr[data-challenge="` + ch + `"]`) }

	wd.open(base + "/admin")
	wait(20*time.Second, `return document.activeElement ? document.activeElement.id : "";`, is("signin-key"), "focus on the key field")
	set("#signin-key", browserAdminKey)
	submit("#signin-form")
	wait(20*time.Second, `const b = document.getElementById("tab-contests"); return b ? "yes" : "";`, is("yes"), "the Contests tab")
	click("#tab-contests")
	listed := wait(20*time.Second, text(`#contests-table tr[data-contest="ctf:con"]`), has("running"), "the contest in the list")
	// Times name their zone (issue 18 item 20), here the browser's.
	if !regexp.MustCompile(`\d:\d\d(:\d\d)?(\s?[AP]M)?\s(UTC|GMT[+-]?[\d:]*|[A-Z]{3,5})\b`).MatchString(listed) {
		t.Errorf("the contest's times show no time zone: %q", listed)
	}
	click(`#contests-table button[aria-label="Manage ctf:con"]`)
	wait(20*time.Second, text("#ctf-title"), is("Console CTF (ctf:con)"), "the manager")
	wait(20*time.Second, text("#ctf-countdown"), func(s string) bool { return has("Freeze in")(s) && has("ends in 1h")(s) }, "the countdown")
	phase("pending", "")
	wait(20*time.Second, text("#ctf-challenges"), has("No challenges yet"), "no challenges")

	// Create a challenge from the form.
	set("#challenge-id", "web")
	set("#challenge-name", "Web 1")
	set("#challenge-category", "web")
	set("#challenge-function", "ctfd_linear")
	set("#challenge-value", "500")
	set("#challenge-minimum", "100")
	set("#challenge-decay", "100")
	submit("#challenge-form")
	wait(20*time.Second, row("web"), has("Web 1"), "the new challenge")
	wait(20*time.Second, row("web"), has("ctfd_linear 500, minimum 100, decay 100"), "its scoring")
	if got := string(api.do("GET", "/v1/contests/ctf:con/challenges?view=live", "")); !strings.Contains(got, `"name":"Web 1"`) || !strings.Contains(got, `"decay":100`) {
		t.Fatalf("the challenge the form made: %s", got)
	}

	// Solves show in the grid: first bloods marked, names as text.
	solve("alice", "web", true)
	solve("bob", "web", true)
	solve("carol", "web", false)
	click("#ctf-refresh")
	const grid = `return Array.from(document.querySelectorAll("#solve-grid tbody tr"), (tr) =>
		tr.dataset.team + ":" + tr.querySelector("th").textContent + ":" + Array.from(tr.querySelectorAll("td.cell"), (td) => td.dataset.blood || "-").join("")).join(",");`
	wait(20*time.Second, grid, is("alice:Team <b>Alice</b>:1,bob:bob:2"), "the solve grid")
	var bold int
	if err := wd.exec(&bold, `return document.querySelectorAll("#ctf-manager b").length;`); err != nil || bold != 0 {
		t.Fatalf("a team name was parsed as HTML: %d elements (err %v)", bold, err)
	}

	// Edit its scoring: retroactive, so the console shows what it does first.
	click(`#challenges-table button[aria-label="Edit web"]`)
	wait(20*time.Second, `return document.getElementById("challenge-value").value;`, is("500"), "the edit form")
	set("#challenge-value", "700")
	submit("#challenge-form")
	confirmDialog("Value: 400 \u2192 600 for every solver")
	wait(20*time.Second, row("web"), has("ctfd_linear 700"), "the edited scoring")
	wait(20*time.Second, text("#challenges-table"), has("600"), "the new value")
	// A rename needs no confirmation.
	click(`#challenges-table button[aria-label="Edit web"]`)
	set("#challenge-name", "Web one")
	submit("#challenge-form")
	wait(20*time.Second, row("web"), has("Web one"), "the renamed challenge")
	if err := wd.exec(nil, `document.getElementById("ctf-manager").scrollIntoView();`); err != nil {
		t.Fatal(err)
	}
	wd.screenshot(filepath.Join(shots, "admin-contest-manager.png"))

	// Hide and delete an unsolved challenge.
	set("#challenge-id", "draft")
	set("#challenge-value", "50")
	submit("#challenge-form")
	wait(20*time.Second, row("draft"), has("shown"), "the second challenge")
	click(`#challenges-table button[aria-label="Hide draft"]`)
	wait(20*time.Second, row("draft"), has("hidden"), "the hidden challenge")
	if got := string(api.do("GET", "/v1/contests/ctf:con/challenges?view=public", "")); strings.Contains(got, "draft") {
		t.Fatalf("a hidden challenge is public: %s", got)
	}
	click(`#challenges-table button[aria-label="Delete draft"]`)
	confirmDialog("Delete challenge draft")
	wait(20*time.Second, `return String(document.querySelectorAll('#challenges-table tr[data-challenge="draft"]').length);`, is("0"), "the deleted challenge")
	// A solved one cannot go: the server's reason is shown.
	click(`#challenges-table button[aria-label="Delete web"]`)
	confirmDialog("Delete challenge web")
	wait(20*time.Second, text("#ctf-challenges-error"), has("409 conflict"), "the refusal")

	// The attempt log, filtered by verdict and by team.
	const logRows = `return Array.from(document.querySelectorAll("#attempts-table tbody tr[data-result]"), (tr) => tr.children[2].textContent + "/" + tr.children[5].textContent).join(",");`
	wait(20*time.Second, logRows, is("alice/solved,bob/solved,carol/wrong"), "the attempt log")
	set("#log-verdict", "false")
	submit("#log-filters")
	wait(20*time.Second, logRows, is("carol/wrong"), "the incorrect attempts")
	set("#log-verdict", "")
	set("#log-team", "bob")
	submit("#log-filters")
	wait(20*time.Second, logRows, is("bob/solved"), "bob's attempts")
	if err := wd.exec(nil, `document.getElementById("ctf-grid").scrollIntoView();`); err != nil {
		t.Fatal(err)
	}
	wd.screenshot(filepath.Join(shots, "admin-contest-grid.png"))

	// The freeze control follows the state: frozen (an early reveal is
	// forced), revealed early (re-freeze), ended (the final reveal), final.
	putContest(-10*time.Minute, -time.Minute, 2*time.Hour)
	click("#ctf-refresh")
	phase("frozen", "Reveal now (before the end)")
	click("#freeze-action")
	confirmDialog("Teams still play")
	phase("early", "Re-freeze")
	if got := string(api.do("GET", "/v1/contests/ctf:con", "")); !strings.Contains(got, `"revealed":true`) {
		t.Fatalf("after the early reveal: %s", got)
	}
	click("#freeze-action")
	confirmDialog("Freeze the public standings of ctf:con again")
	phase("frozen", "Reveal now (before the end)")
	putContest(-10*time.Minute, -5*time.Minute, -time.Minute)
	click("#ctf-refresh")
	phase("ended", "Reveal final standings")
	wait(20*time.Second, text("#ctf-countdown"), has("Ended"), "the countdown at the end")
	click("#freeze-action")
	confirmDialog("Reveal the final standings of ctf:con")
	phase("final", "")
	wait(20*time.Second, text(`#contests-table tr[data-contest="ctf:con"]`), has("final"), "the list follows")

	// A phone: the grid scrolls in its box, the page does not.
	if _, err := wd.d.call("POST", wd.url+"/window/rect", map[string]int{"width": 390, "height": 844}); err != nil {
		t.Fatalf("resize: %v", err)
	}
	wait(20*time.Second, `return String(document.documentElement.scrollWidth <= document.documentElement.clientWidth);`, is("true"), "no sideways scroll at 390 px")
	wd.screenshot(filepath.Join(shots, "admin-contest-phone.png"))

	for _, e := range wd.consoleLog() {
		if e.Source == "javascript" || strings.Contains(e.Message, "Content Security Policy") {
			t.Errorf("browser console: %s %s: %s", e.Level, e.Source, e.Message)
		}
	}
}
