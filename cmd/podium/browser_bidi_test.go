package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBrowserNamesIsolated: a player name holding a right-to-left override
// (U+202E) must not reorder the text shown after it. In the activity
// feed's sentence and the index's "leader · value", the words after the
// name stay to its right: the pages isolate names (<bdi>, or U+2068/U+2069
// inside a string).
func TestBrowserNamesIsolated(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)
	base, api := startBrowserServer(t)
	api.do("PUT", "/v1/boards/bidi", `{"title": "Bidi", "public": true, "keys": [{"name": "score", "order": "desc"}]}`)
	api.do("PUT", "/v1/players/alice", `{"name": "Alice"}`)
	api.do("PUT", "/v1/players/mallory", `{"name": "\u202emallory"}`)
	api.submit("bidi", "alice", 50)
	api.submit("bidi", "mallory", 60) // takes #1 from Alice: a new_leader event

	driver := startChromedriver(t, chromedriver)
	wd := driver.newSession(t, chromium)
	// order says whether the text after within (an element) is laid out to
	// the right of the name, as in a left-to-right sentence.
	const order = `const within = arguments[0] ? document.querySelector(arguments[0]) : null;
		if (!within) return "";
		const box = (sub) => {
			const w = document.createTreeWalker(within, NodeFilter.SHOW_TEXT);
			for (let n = w.nextNode(); n; n = w.nextNode()) {
				const i = n.data.indexOf(sub);
				if (i >= 0) { const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + sub.length); return r.getBoundingClientRect(); }
			}
			return null;
		};
		const name = box("mallory"), after = box(arguments[1]);
		if (!name || !after) return "";
		return after.left >= name.right ? "after" : "reordered";`
	check := func(page, sel, after string) {
		t.Helper()
		wd.open(base + page)
		script := strings.NewReplacer("arguments[0]", strconv.Quote(sel), "arguments[1]", strconv.Quote(after)).Replace(order)
		got, _ := wd.waitString(10*time.Second, script, func(s string) bool { return s != "" })
		if got != "after" {
			t.Errorf("%s %s: %q after the name is %q, want laid out after it", page, sel, after, got)
		}
	}
	check("/boards/bidi", `#feed li[data-kind="new_leader"] span`, "took")
	check("/", `#boards li[data-board="bidi"] [data-fact="leader"]`, "60")

	for _, e := range wd.consoleLog() {
		if e.Source == "javascript" || strings.Contains(e.Message, "Content Security Policy") {
			t.Errorf("browser console: %s %s: %s", e.Level, e.Source, e.Message)
		}
	}
}
