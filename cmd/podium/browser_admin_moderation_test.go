package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBrowserAdminModeration drives the console's Moderation tab against
// the review contract (GET /v1/review, POST /v1/review/{id}/approve and
// /reject, docs/CONSOLE.md), served here by a stand-in in front of a real
// podium until the moderation endpoints are part of the server: the tab
// appears because the endpoint answers, lists the pending items with
// their meta, and approving or rejecting sends the decision with its
// reason and the admin key.
func TestBrowserAdminModeration(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)
	addr := "127.0.0.1:" + strconv.Itoa(browserFreePort(t))
	var serverLog browserOutput
	m := &Main{Config: Config{Addr: addr, Data: t.TempDir(), Sync: "normal", AdminKey: browserAdminKey,
		Shutdown: 2 * time.Second, LogLevel: "warn"}, Stderr: &serverLog}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close()
		if t.Failed() {
			t.Logf("server log:\n%s", serverLog.String())
		}
	})

	type decision struct{ ID, What, Reason string }
	var (
		mu        sync.Mutex
		decisions []decision
		items     = []map[string]any{
			{"id": "rv_1", "board": "ms:expert", "period": "all", "player": "mallory", "keys": []int{1000, 5},
				"meta": map[string]any{"evidence": "ev_9"}, "submitted_at": "2026-12-01T01:00:00.000Z",
				"reason": "top 3", "status": "pending", "decision": nil, "entry": nil},
			{"id": "rv_2", "board": "ms:expert", "period": "all", "player": "trudy", "keys": []int{2000, 7},
				"meta": map[string]any{}, "submitted_at": "2026-12-01T01:01:00.000Z",
				"reason": "threshold", "status": "pending", "decision": nil, "entry": nil},
		}
	)
	target, _ := url.Parse("http://" + addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	mux := http.NewServeMux()
	mux.Handle("/", proxy)
	mux.HandleFunc("GET /v1/review", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+browserAdminKey {
			http.Error(w, `{"error":{"code":"unauthenticated","message":"no key"}}`, 401)
			return
		}
		status := r.URL.Query().Get("status")
		mu.Lock()
		out := []map[string]any{}
		for _, it := range items {
			if status == "" || status == "all" || it["status"] == status {
				out = append(out, it)
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"items": out, "next_cursor": nil})
	})
	mux.HandleFunc("POST /v1/review/{id}/{what}", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Reason string `json:"reason"`
		}
		if r.Header.Get("Authorization") != "Bearer "+browserAdminKey || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, `{"error":{"code":"invalid_argument","message":"bad request"}}`, 400)
			return
		}
		what := r.PathValue("what")
		mu.Lock()
		defer mu.Unlock()
		decisions = append(decisions, decision{r.PathValue("id"), what, body.Reason})
		for _, it := range items {
			if it["id"] == r.PathValue("id") {
				it["status"] = map[string]string{"approve": "approved", "reject": "rejected"}[what]
				it["decision"] = map[string]any{"by": "admin", "at": "2026-12-01T01:02:00.000Z", "reason": body.Reason}
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(it)
				return
			}
		}
		http.Error(w, `{"error":{"code":"not_found","message":"no such item"}}`, 404)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := &http.Server{Handler: mux}
	go front.Serve(ln)
	t.Cleanup(func() { front.Close() })
	base := "http://" + ln.Addr().String()

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
	rows := `return Array.from(document.querySelectorAll("#review-table tbody tr"), (tr) => tr.dataset.review + ":" + tr.innerText.replace(/\s+/g, " ")).join(" | ");`
	wait(rows, "rv_1:")
	wait(rows, `{"evidence":"ev_9"}`)
	run(`const tr = document.querySelector('#review-table tr[data-review="rv_1"]');
		tr.querySelector("input").value = "checked the replay"; tr.querySelector("button.danger").click();`)
	wait(`return document.getElementById("notice").innerText;`, "mallory on ms:expert: rejected")
	wait(rows, "rv_2:")
	if got, _ := wd.waitString(time.Second, rows, func(s string) bool { return !strings.Contains(s, "rv_1") }); strings.Contains(got, "rv_1") {
		t.Errorf("the rejected item is still in the pending queue: %q", got)
	}
	run(`document.querySelector('#review-table tr[data-review="rv_2"] button:not(.danger)').click();`)
	wait(`return document.getElementById("notice").innerText;`, "trudy on ms:expert: approved")
	wait(`return document.querySelector("#panel-moderation .empty") ? "empty" : "";`, "empty")
	mu.Lock()
	got := decisions
	mu.Unlock()
	if len(got) != 2 || got[0] != (decision{"rv_1", "reject", "checked the replay"}) || got[1] != (decision{"rv_2", "approve", ""}) {
		t.Errorf("decisions sent: %+v", got)
	}
	for _, e := range wd.consoleLog() {
		if e.Source == "javascript" || strings.Contains(e.Message, "Content Security Policy") {
			t.Errorf("browser console: %s %s: %s", e.Level, e.Source, e.Message)
		}
	}
}
