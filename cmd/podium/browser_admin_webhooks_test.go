package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBrowserAdminWebhooks drives the console's Webhooks tab against a
// real podium: create an endpoint (the secret shown once), see it listed
// with its URL as text, read its delivery log, where a receiver's error
// answer (HTML with a script) is shown as text and runs nothing, redeliver
// an event, disable and enable, rotate the secret, delete.
func TestBrowserAdminWebhooks(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)
	base, api := startBrowserServer(t, func(c *Config) { c.WebhookAllowPrivate = true })

	// The receiver answers 500 with HTML until accept, then 200; ok
	// counts the 200s by webhook-id.
	var mu sync.Mutex
	accept, ok := false, map[string]int{}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		defer mu.Unlock()
		if !accept {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `<img src=x onerror="window.pwned=1"><b>down</b>`)
			return
		}
		ok[r.Header.Get("webhook-id")]++
	}))
	defer rcv.Close()
	okOf := func(id string) int { mu.Lock(); defer mu.Unlock(); return ok[id] }

	driver := startChromedriver(t, chromedriver)
	wd := driver.newSession(t, chromium)
	wait := func(script, want string) {
		t.Helper()
		if got, ok := wd.waitString(30*time.Second, script, func(s string) bool { return strings.Contains(s, want) }); !ok {
			t.Fatalf("got %q, want it to contain %q", got, want)
		}
	}
	run := func(script string, args ...any) {
		t.Helper()
		if err := wd.exec(nil, script, args...); err != nil {
			t.Fatalf("%s: %v", script, err)
		}
	}
	text := func(sel string) string {
		return `const e = document.querySelector(` + jsString(sel) + `); return e && !e.closest("[hidden]") ? e.innerText : "";`
	}
	wd.open(base + "/admin")
	run(`document.getElementById("signin-key").value = arguments[0]; document.getElementById("signin-form").requestSubmit();`, browserAdminKey)
	wait(`const b = document.getElementById("tab-webhooks"); return b && !b.hidden ? "shown" : "";`, "shown")
	run(`document.getElementById("tab-webhooks").click();`)
	wait(text("#panel-webhooks .empty"), "No webhook endpoints.")

	// Create: the URL carries markup in its query, shown as text.
	url := rcv.URL + "/hook?tag=<b>x</b>"
	run(`document.getElementById("wh-url").value = arguments[0];
		document.getElementById("wh-type-leader.changed").click();
		document.getElementById("wh-form").requestSubmit();`, url)
	wait(text("#wh-secret"), "whsec_")
	var first string
	if err := wd.exec(&first, `return document.getElementById("wh-secret").textContent;`); err != nil {
		t.Fatal(err)
	}
	rows := `return Array.from(document.querySelectorAll("#wh-table tbody tr"), (tr) => tr.innerText.replace(/\s+/g, " ")).join(" | ");`
	wait(rows, url)
	wait(rows, "leader.changed")
	var eps struct {
		Webhooks []struct {
			ID       string   `json:"id"`
			URL      string   `json:"url"`
			Types    []string `json:"types"`
			Disabled bool     `json:"disabled"`
		} `json:"webhooks"`
	}
	list := func() {
		t.Helper()
		if err := json.Unmarshal(api.do("GET", "/v1/webhooks", ""), &eps); err != nil {
			t.Fatal(err)
		}
	}
	list()
	if len(eps.Webhooks) != 1 || eps.Webhooks[0].URL != url || strings.Join(eps.Webhooks[0].Types, ",") != "leader.changed" {
		t.Fatalf("endpoints after the console's create: %+v", eps.Webhooks)
	}
	run(`document.querySelector("#wh-secret-box button").click();`)

	// An event; the receiver refuses it with HTML: the log shows the
	// error as text.
	api.do("PUT", "/v1/boards/wh.b", `{"public": true, "keys": [{"name": "score", "order": "desc"}]}`)
	api.submit("wh.b", "ann", 10)
	button := func(scope, label string) string {
		return `Array.from(document.querySelectorAll(` + jsString(scope+" button") + `)).find((b) => b.textContent === ` + jsString(label) + `)`
	}
	// click clicks a button once it is there (a list may be reloading).
	click := func(scope, label string) {
		t.Helper()
		wait(`const b = `+button(scope, label)+`; if (!b) return ""; b.click(); return "clicked";`, "clicked")
	}
	click("#wh-table", "Deliveries")
	// Reads the log, then asks for it again (the next call reads that).
	logRows := `const got = Array.from(document.querySelectorAll("#wh-log-table tbody tr"), (tr) => tr.innerText.replace(/\s+/g, " ")).join(" | ");
		const r = ` + button("#wh-log", "Refresh") + `; if (r) r.click();
		return got;`
	wait(logRows, `status 500: <img src=x onerror="window.pwned=1"><b>down</b>`)
	wait(logRows, "leader.changed")
	// Read while the log shows the error (a refresh may be under way).
	injected, _ := wd.waitString(30*time.Second, `const tr = document.querySelector("#wh-log-table tbody tr");
		if (!tr || !tr.innerText.includes("status 500")) return "";
		return String(document.querySelectorAll("#panel-webhooks img, #panel-webhooks b").length) + " " + String(window.pwned);`,
		func(s string) bool { return s != "" })
	if injected != "0 undefined" {
		t.Fatalf("markup from a URL or a receiver's answer became elements: %q", injected)
	}

	// The receiver recovers; the retry delivers; a redelivery sends the
	// event again.
	event, _ := wd.waitString(30*time.Second, `const tr = document.querySelector("#wh-log-table tbody tr"); return tr ? tr.dataset.event : "";`,
		func(s string) bool { return strings.HasPrefix(s, "evt_") })
	mu.Lock()
	accept = true
	mu.Unlock()
	wait(logRows, "delivered")
	if n := okOf(event); n != 1 {
		t.Fatalf("event %s received %d times before the redelivery, want 1", event, n)
	}
	click("#wh-log-table", "Redeliver")
	wait(`const n = document.getElementById("notice"); return n.hidden ? "" : n.innerText;`, "queued for redelivery")
	deadline := time.Now().Add(30 * time.Second)
	for okOf(event) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("event %s received %d times after the redelivery, want 2", event, okOf(event))
		}
		<-time.After(20 * time.Millisecond) // polling the receiver, with a deadline
	}

	// Disable, enable.
	click("#wh-table", "Disable")
	wait(rows, "disabled")
	if list(); !eps.Webhooks[0].Disabled {
		t.Fatal("the console's Disable left the endpoint enabled")
	}
	click("#wh-table", "Enable")
	wait(rows, "enabled")
	if list(); eps.Webhooks[0].Disabled {
		t.Fatal("the console's Enable left the endpoint disabled")
	}

	// Rotate (confirmed): a new secret, shown once.
	click("#wh-table", "Rotate")
	run(`document.getElementById("confirm-ok").click();`)
	wait(`const e = document.getElementById("wh-secret"); return e && e.textContent !== `+jsString(first)+` ? e.textContent : "";`, "whsec_")

	// Delete (confirmed).
	click("#wh-table", "Delete")
	run(`document.getElementById("confirm-ok").click();`)
	if got, ok := wd.waitString(30*time.Second, text("#panel-webhooks .empty"), func(s string) bool { return strings.Contains(s, "No webhook endpoints.") }); !ok {
		var page string
		wd.exec(&page, `const q = (s) => { const e = document.querySelector(s); return e ? e.innerText : "(none)"; };
			return "panel: " + q("#panel-webhooks").replace(/\s+/g, " ") + " | notice: " + q("#notice") + " | dialog open: " + document.getElementById("confirm").open;`)
		list()
		t.Fatalf("after the console's Delete: got %q, want the empty list; the page shows %s; the server lists %+v", got, page, eps.Webhooks)
	}
	if list(); len(eps.Webhooks) != 0 {
		t.Fatalf("endpoints after the console's delete: %+v", eps.Webhooks)
	}

	for _, e := range wd.consoleLog() {
		if e.Source == "javascript" || strings.Contains(e.Message, "Content Security Policy") || e.Level == "SEVERE" {
			t.Errorf("browser console: %s %s: %s", e.Level, e.Source, e.Message)
		}
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
