package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestBrowserBoardListPages: the index page and the console's Boards tab
// read the board list a page at a time (100 boards), and "More boards"
// appends the next page until the list ends. The index shows only public
// boards; the console all of them.
func TestBrowserBoardListPages(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)
	base, api := startBrowserServer(t)
	const n = 230
	for i := range n {
		public := i%5 != 0 // 184 public
		api.do("PUT", fmt.Sprintf("/v1/boards/pg%03d", i), fmt.Sprintf(`{"keys":[{"name":"n","order":"desc"}],"public":%v}`, public))
	}
	wd := startChromedriver(t, chromedriver).newSession(t, chromium)
	wait := func(script string, want string, what string) {
		t.Helper()
		if got, ok := wd.waitString(10*time.Second, script, func(s string) bool { return s == want }); !ok {
			t.Fatalf("%s: got %q, want %q", what, got, want)
		}
	}
	click := func(sel string) {
		t.Helper()
		var ok bool
		if err := wd.exec(&ok, `const e = document.querySelector(arguments[0]); if (!e || e.closest("[hidden]") || e.disabled) return false; e.click(); return true;`, sel); err != nil || !ok {
			t.Fatalf("click %s: not there (err %v)", sel, err)
		}
	}
	// count returns "<items>|<first>|<last>|<more button shown>".
	count := func(items string) string {
		return `const li = document.querySelectorAll(` + fmt.Sprintf("%q", items) + `);
			const m = document.getElementById("boards-more");
			return li.length + "|" + (li.length ? li[0].dataset.board : "") + "|" + (li.length ? li[li.length-1].dataset.board : "") + "|" + !!(m && !m.closest("[hidden]"));`
	}

	// The index: the public boards, 100 a page.
	wd.open(base + "/")
	wait(count("#boards li"), "100|pg001|pg124|true", "the index's first page")
	click("#boards-more")
	wait(count("#boards li"), "184|pg001|pg229|false", "the index's last page")

	// The console: every board, 100 a page.
	wd.open(base + "/admin")
	if err := wd.exec(nil, `document.getElementById("signin-key").value = arguments[0]; document.getElementById("signin-form").requestSubmit();`, browserAdminKey); err != nil {
		t.Fatal(err)
	}
	rows := `#boards-table tbody tr`
	wait(count(rows), "100|pg000|pg099|true", "the console's first page")
	click("#boards-more")
	wait(count(rows), "200|pg000|pg199|true", "the console's second page")
	click("#boards-more")
	wait(count(rows), "230|pg000|pg229|false", "the console's last page")

	for _, e := range wd.consoleLog() {
		if e.Source == "javascript" || strings.Contains(e.Message, "Content Security Policy") {
			t.Errorf("browser console: %s %s: %s", e.Level, e.Source, e.Message)
		}
	}
}
