package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBrowserAdminModeration drives the console's Moderation tab and the
// player freeze against a real podium: the tab appears because
// GET /v1/review answers, lists held submissions with their meta, shows
// the server's refusal of a rejection without a reason, rejects and
// approves (checked against the public ranking), and a player frozen from
// the console has their next submission held, then is unfrozen.
func TestBrowserAdminModeration(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)
	base, api := startBrowserServer(t)
	api.do("PUT", "/v1/boards/mod.b", `{"title": "Held", "public": true, "keys": [{"name": "score", "order": "desc"}], "review": {"hold": "all"}}`)
	held := func(player string, score int, meta string) {
		t.Helper()
		out := api.do("POST", "/v1/boards/mod.b/scores", `{"player": "`+player+`", "score": `+strconv.Itoa(score)+`, "meta": `+meta+`}`)
		if !strings.Contains(string(out), `"status":"pending"`) {
			t.Fatalf("%s's submission was not held: %s", player, out)
		}
	}
	held("mallory", 1000, `{"replay": "ev_9"}`)
	held("trudy", 2000, `{}`)
	// trudy's replay goes with her held submission (by its review id).
	var q struct {
		Items []struct {
			ID     string `json:"id"`
			Player string `json:"player"`
		} `json:"items"`
	}
	if err := json.Unmarshal(api.do("GET", "/v1/review?board=mod.b", ""), &q); err != nil {
		t.Fatal(err)
	}
	for _, it := range q.Items {
		if it.Player == "trudy" {
			uploadHeldEvidence(t, base, "mod.b", "trudy", it.ID, "{\"t\":0}\n{\"t\":1}\n")
		}
	}

	driver := startChromedriver(t, chromedriver)
	wd := driver.newSession(t, chromium)
	wait := func(script, want string) {
		t.Helper()
		if got, ok := wd.waitString(5*time.Second, script, func(s string) bool { return strings.Contains(s, want) }); !ok {
			t.Fatalf("got %q, want it to contain %q", got, want)
		}
	}
	run := func(script string, args ...any) {
		t.Helper()
		if err := wd.exec(nil, script, args...); err != nil {
			t.Fatalf("%s: %v", script, err)
		}
	}
	wd.open(base + "/admin")
	run(`document.getElementById("signin-key").value = arguments[0]; document.getElementById("signin-form").requestSubmit();`, browserAdminKey)
	wait(`const b = document.getElementById("tab-moderation"); return b && !b.hidden ? "shown" : "";`, "shown")
	run(`document.getElementById("tab-moderation").click();`)
	rows := `return Array.from(document.querySelectorAll("#review-table tbody tr"), (tr) => tr.innerText.replace(/\s+/g, " ")).join(" | ");`
	wait(rows, "mallory")
	wait(rows, `{"replay":"ev_9"}`)
	wait(rows, "trudy")
	row := func(player string) string {
		return `Array.from(document.querySelectorAll("#review-table tbody tr")).find((tr) => tr.querySelector("th").textContent === "` + player + `")`
	}
	wait(`const tr = `+row("trudy")+`; const b = tr && Array.from(tr.querySelectorAll("button")).find((b) => b.textContent.startsWith("Evidence")); return b ? b.textContent : "";`,
		"Evidence (2 events, 1 KiB)")
	notice := `const n = document.getElementById("notice"); return n.hidden ? "" : n.innerText;`
	// A rejection needs a reason: the server says so, next to the queue.
	run(`const tr = ` + row("mallory") + `; tr.querySelector("button.danger").click();`)
	wait(`const e = document.querySelector("#panel-moderation .error"); return e && !e.hidden ? e.innerText : "";`, "400 invalid_argument: reason is required")
	run(`const tr = `+row("mallory")+`; tr.querySelector("input").value = arguments[0]; tr.querySelector("button.danger").click();`, "checked the replay")
	wait(notice, "\u2068mallory\u2069 on mod.b: rejected.")
	if got, ok := wd.waitString(5*time.Second, rows, func(s string) bool { return !strings.Contains(s, "mallory") }); !ok {
		t.Errorf("the rejected item is still in the pending queue: %q", got)
	}
	run(`const tr = ` + row("trudy") + `; Array.from(tr.querySelectorAll("button")).find((b) => b.textContent === "Approve").click();`)
	wait(notice, "\u2068trudy\u2069 on mod.b: approved.") // names are isolated (U+2068/U+2069)
	wait(`return document.querySelector("#panel-moderation .empty") ? "empty" : "";`, "empty")
	if out := string(api.do("GET", "/v1/boards/mod.b/entries", "")); !strings.Contains(out, `"trudy"`) || strings.Contains(out, `"mallory"`) {
		t.Errorf("the ranking after the decisions: %s", out)
	}
	// The decision log: status "all" shows both, with the reason.
	run(`const s = document.getElementById("review-status"); s.value = "all"; s.form.requestSubmit();`)
	wait(rows, "rejected (checked the replay)")
	wait(rows, "approved")

	// Freeze from the Players tab: the next submission is held.
	run(`document.getElementById("tab-players").click(); document.getElementById("player-lookup").value = "bob";
		document.getElementById("player-form").requestSubmit();`)
	wait(`const e = document.getElementById("freeze-state"); return e ? e.innerText : "";`, "Not frozen.")
	run(`document.getElementById("freeze-reason").value = "reports of a macro"; document.getElementById("freeze-player").click();`)
	wait(`const e = document.getElementById("freeze-state"); return e ? e.innerText : "";`, "by admin: reports of a macro")
	held("bob", 500, `{}`)
	run(`document.getElementById("unfreeze-player").click();`)
	wait(`const e = document.getElementById("freeze-state"); return e ? e.innerText : "";`, "Not frozen.")
	if out := string(api.do("GET", "/v1/players/bob/freeze", "")); !strings.Contains(out, `"frozen":false`) {
		t.Errorf("bob after the console unfroze him: %s", out)
	}
	run(`document.getElementById("tab-moderation").click();`)
	run(`const s = document.getElementById("review-status"); s.value = "pending"; s.form.requestSubmit();`)
	wait(rows, "bob")
	wait(rows, "frozen")

	for _, e := range wd.consoleLog() {
		// The refused rejection (400) and the lookup of bob, whom podium
		// has not seen yet (404), are answers the test asked for.
		if e.Source == "network" && (strings.Contains(e.Message, " 400 ") || strings.Contains(e.Message, "/v1/players/bob - Failed to load resource: the server responded with a status of 404")) {
			continue
		}
		if e.Source == "javascript" || strings.Contains(e.Message, "Content Security Policy") || e.Level == "SEVERE" {
			t.Errorf("browser console: %s %s: %s", e.Level, e.Source, e.Message)
		}
	}
}

// uploadHeldEvidence uploads lines, gzipped, as the evidence of a held
// submission's review item, with the admin key.
func uploadHeldEvidence(t *testing.T, base, board, player, review, lines string) {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(lines))
	zw.Close()
	content, compressed := sha256.Sum256([]byte(lines)), sha256.Sum256(gz.Bytes())
	u := fmt.Sprintf("%s/v1/boards/%s/entries/%s/evidence?review=%s&content_sha256=%x&compressed_sha256=%x", base, board, player, review, content, compressed)
	req, _ := http.NewRequest("PUT", u, bytes.NewReader(gz.Bytes()))
	req.Header.Set("Authorization", "Bearer "+browserAdminKey)
	req.Header.Set("Content-Type", "application/gzip")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 201 && res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("evidence upload: %d %s", res.StatusCode, b)
	}
}
