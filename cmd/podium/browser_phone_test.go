package main

import (
	"context"
	"encoding/json"
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

// TestBrowserPhoneLayouts opens every public page (the index, a board with
// its history chart, a settled tournament, a current points board, a
// contest) on a desktop and on an emulated 360 px phone, and checks what a
// reader sees there (issue 18 items 16-21):
//   - on the phone no element sticks out of its card, unless it is inside a
//     frame that scrolls sideways and says so above it; the contest's
//     challenges table fits without scrolling;
//   - the charts are drawn at the size they are shown (12 px labels on the
//     phone too), have a time axis whose labels do not overlap and name the
//     time zone, and the history chart takes the page's full width;
//   - times say their zone; a tournament's state is the API's word; a
//     settled tournament's payouts show names; a current points board's
//     feed and ordering rule speak of points, not of eras and fixed-point
//     keys; the index's cards show leader, entries and resets, not ids.
//
// With PODIUM_TEST_SCREENSHOTS=dir it saves the screenshots the README
// shows (docs/img: the *-desktop.png and *-phone.png of each page).
func TestBrowserPhoneLayouts(t *testing.T) {
	chromium, chromedriver := browserBinaries(t)
	addr := "127.0.0.1:" + strconv.Itoa(browserFreePort(t))
	base := "http://" + addr
	var (
		mu  sync.Mutex
		now = time.Date(phoneDay.Year(), phoneDay.Month(), phoneDay.Day(), 9, 0, 0, 0, time.UTC)
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	at := func(hhmm string) {
		t.Helper()
		d, err := time.Parse("15:04", hhmm)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		now = time.Date(phoneDay.Year(), phoneDay.Month(), phoneDay.Day(), d.Hour(), d.Minute(), 0, 0, time.UTC)
		mu.Unlock()
	}
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
	seedPhoneData(t, api, at)

	driver := startChromedriver(t, chromedriver)
	shots := os.Getenv("PODIUM_TEST_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	desk := driver.newSession(t, chromium)
	phone := driver.newPhoneSession(t, chromium, 360, 760)
	wait := func(wd *wdSession, script, want string, within time.Duration) {
		t.Helper()
		if got, ok := wd.waitString(within, script, func(s string) bool { return s == want }); !ok {
			t.Fatalf("after %v: %q, want %q", within, got, want)
		}
	}
	fits := func(wd *wdSession, page string) {
		t.Helper()
		if got, _ := wd.waitString(2*time.Second, overflowScript, func(s string) bool { return s == "" }); got != "" {
			t.Errorf("%s on a 360 px phone: %s", page, got)
		}
	}
	chartOK := func(wd *wdSession, page, sel string) {
		t.Helper()
		script := strings.ReplaceAll(chartScript, "SELECTOR", strconv.Quote(sel))
		if got, _ := wd.waitString(5*time.Second, script, func(s string) bool { return s == "ok" }); got != "ok" {
			t.Errorf("%s %s: %s", page, sel, got)
		}
	}

	for _, wd := range []*wdSession{desk, phone} {
		kind := "desktop"
		if wd == phone {
			kind = "phone"
		}

		// The index: cards a player reads (no id, mode or period), the
		// tournament's state in the API's word.
		wd.open(base + "/")
		wait(wd, `const li = document.querySelector('#boards li[data-board="lbl"]');
			if (!li || !li.querySelector('[data-fact="leader"]')) return "";
			return Array.from(li.querySelectorAll("dt"), (d) => d.textContent).join("|") + " / " +
				li.querySelector('[data-fact="leader"]').textContent + " / " + li.querySelector('[data-fact="entries"]').textContent;`,
			"Leader|Entries|Resets / Team Alice · 41.000 s / 90 / 4", 10*time.Second)
		wait(wd, `const b = document.querySelector('#boards li[data-board="wk"] .badge'); return b ? b.textContent : "";`,
			"tournament · settled", 5*time.Second)
		wait(wd, `return String(/\bid:|mode:|period:/.test(document.getElementById("boards").innerText));`, "false", time.Second)
		wait(wd, onDay(`const w = document.querySelector('#contests li[data-contest="ctf:phone"] [data-fact="when"]');
			return w ? String(w.textContent.includes(PodiumPage.zone(Date.parse("2026-11-30T13:00:00Z")))) : "none";`), "true", 5*time.Second)
		if wd == phone {
			var width int
			if err := wd.exec(&width, `return document.documentElement.clientWidth;`); err != nil || width != 360 {
				t.Fatalf("the emulated phone is %d px wide (%v), want 360", width, err)
			}
			fits(wd, "/")
		}
		wd.screenshot(filepath.Join(shots, "index-"+kind+".png"))

		// A board: the history chart of the top 10, the page's full width,
		// with a time axis; the styled button.
		wd.open(base + "/boards/lbl")
		waitLive(t, wd, 10*time.Second)
		waitRows(t, wd, 5*time.Second, "alice:1,bob:2,carol:3,dave:4")
		// The section shows once history.js has read the board and listens.
		wait(wd, `const b = document.getElementById("history-top");
			return document.getElementById("history").hidden + "|" + b.className + "|" + getComputedStyle(b).borderTopLeftRadius;`,
			"false|btn|16px", 5*time.Second)
		if err := wd.exec(nil, `document.getElementById("history-top").click();`); err != nil {
			t.Fatal(err)
		}
		wait(wd, `return String(document.querySelectorAll("#history-chart path.line").length);`, "4", 5*time.Second)
		chartOK(wd, "/boards/lbl", "#history-chart")
		wait(wd, `const m = document.querySelector("main"), cs = getComputedStyle(m);
			const inner = m.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
			return String(Math.abs(document.getElementById("history-chart").getBoundingClientRect().width - inner) <= 1);`, "true", time.Second)
		wait(wd, `const t = document.querySelector('#rows tr[data-player="alice"] time');
			return String(t.title.endsWith(PodiumPage.zone(Date.parse(t.dateTime))));`, "true", time.Second)
		if wd == phone {
			fits(wd, "/boards/lbl")
			wd.exec(nil, `document.getElementById("history").scrollIntoView();`)
			wd.screenshot(filepath.Join(shots, "board-history-phone.png"))
			wd.exec(nil, `window.scrollTo(0, 0);`)
		} else {
			wd.screenshot(filepath.Join(shots, "board-desktop.png"))
			wd.exec(nil, `document.getElementById("history").scrollIntoView();`)
			wd.screenshot(filepath.Join(shots, "board-history-desktop.png"))
			wd.exec(nil, `window.scrollTo(0, 0);`)
		}
		if wd == phone {
			wd.screenshot(filepath.Join(shots, "board-phone.png"))
		}

		// The settled tournament: its title, the state in the API's word,
		// the payouts by name, the points boards by title.
		wd.open(base + "/boards/wk")
		waitLive(t, wd, 10*time.Second)
		wait(wd, `return document.getElementById("title").textContent;`, "Week 49 cup", 5*time.Second)
		wait(wd, `const d = document.querySelector('[data-fact="state"]'); return d ? d.textContent : "";`, "settled", 10*time.Second)
		wait(wd, `return Array.from(document.querySelectorAll("#payout-rows tr"),
			(tr) => Array.from(tr.children, (td) => td.textContent).join("|")).join(";");`, "1|Amy|50;2|bob|25;3|Cid|17", 5*time.Second)
		wait(wd, `return document.getElementById("points-boards").textContent;`, "Credited to Current points, All-time points.", 5*time.Second)
		wait(wd, `const t = document.querySelector('[data-fact="end"] time'); return String(t.textContent.includes(PodiumPage.zone(Date.parse(t.dateTime))));`,
			"true", time.Second)
		if wd == phone {
			fits(wd, "/boards/wk")
		}
		wd.screenshot(filepath.Join(shots, "tournament-"+kind+".png"))

		// The current points board: decayed points in the table, the
		// ordering rule and the feed.
		wd.open(base + "/boards/pts:current")
		waitLive(t, wd, 10*time.Second)
		waitRows(t, wd, 5*time.Second, "amy:1,bob:2,cid:3")
		wait(wd, `return document.getElementById("order-rule").textContent;`,
			"Ranked by points now (higher is better). Everyone's points halve every 730 days, so the decay never changes the order; an exact tie goes to whoever reached it first.", 5*time.Second)
		wait(wd, `const li = document.querySelector('#feed li[data-kind="new_leader"]'); return li ? li.firstChild.textContent : "";`,
			"\u2068Amy\u2069 took #1 with 50.00 points", 10*time.Second)
		if wd == phone {
			fits(wd, "/boards/pts:current")
		}
		wd.screenshot(filepath.Join(shots, "points-"+kind+".png"))

		// The contest: the challenges fit a phone, the chart has a time axis.
		wd.open(base + "/contests/ctf:phone")
		waitLive(t, wd, 10*time.Second)
		wait(wd, `return String(document.querySelectorAll("#challenges tr").length + "|" + document.querySelectorAll("#chart path").length);`, "6|4", 10*time.Second)
		chartOK(wd, "/contests/ctf:phone", "#chart")
		wait(wd, onDay(`return String(document.getElementById("window").textContent.includes(PodiumPage.zone(Date.parse("2026-11-30T09:00:00Z"))));`), "true", time.Second)
		if wd == phone {
			fits(wd, "/contests/ctf:phone")
			wait(wd, `const w = document.getElementById("challenges-table").parentElement; return w.dataset.overflow + "|" + (w.scrollWidth <= w.clientWidth);`,
				"false|true", time.Second)
			wd.screenshot(filepath.Join(shots, "contest-phone.png"))
			wd.exec(nil, `document.getElementById("chart").scrollIntoView();`)
			wd.screenshot(filepath.Join(shots, "contest-chart-phone.png"))
		} else {
			wd.screenshot(filepath.Join(shots, "contest-desktop.png"))
		}
		for _, e := range wd.consoleLog() {
			if e.Source == "javascript" || strings.Contains(e.Message, "Content Security Policy") {
				t.Errorf("%s browser console: %s %s: %s", kind, e.Level, e.Source, e.Message)
			}
		}
	}

	// A name of 60 letters without a space breaks where it must in the
	// standings, the feed and a chart's legend; in a first blood it
	// widens the challenges table, which then scrolls and says so; the
	// check catches that table once its hint is hidden.
	api.do("PUT", "/v1/players/dave", `{"name": "`+strings.Repeat("W", 60)+`"}`)
	for _, page := range []string{"/", "/boards/lbl", "/contests/ctf:phone"} {
		phone.open(base + page)
		wait(phone, `return String(document.body.textContent.includes("WWWWWWWWWW"));`, "true", 10*time.Second)
		fits(phone, page+" with a 60-letter name")
	}
	wait(phone, `const w = document.getElementById("challenges-table").parentElement;
		const h = w.previousElementSibling;
		return document.getElementById("legend").textContent.includes("WWWWWWWWWW") + "|" + w.dataset.overflow + "|" +
			(!!h && h.classList.contains("scroll-hint") && !h.hidden);`, "true|true|true", 10*time.Second)
	fits(phone, "/contests/ctf:phone with a 60-letter first blood")
	phone.exec(nil, `document.getElementById("challenges-table").scrollIntoView();`)
	phone.screenshot(filepath.Join(shots, "contest-phone-scroll-hint.png"))
	var none string
	if err := phone.exec(&none, `document.querySelector(".scroll-hint").hidden = true; return "";`); err != nil {
		t.Fatal(err)
	}
	if got, _ := phone.waitString(time.Second, overflowScript, func(string) bool { return true }); !strings.HasPrefix(got, "TABLE#challenges-table") {
		t.Errorf("without its hint, the wide table is not reported: %q", got)
	}
}

// seedPhoneData makes what the pages show: a labelled board with history,
// a tournament that pays a ladder's points boards and is settled, and a
// contest whose challenges have long names and first bloods.
// phoneDay is the day the phone test's server clock runs on: the real
// day (UTC), because the history chart runs its time axis to the
// browser's own clock (Date.now), which the test cannot set. On a fixed
// day the axis spanned days by the time the test ran, with one tick.
var phoneDay = time.Now().UTC().Truncate(24 * time.Hour)

// onDay puts the fixture's times (written on 2026-11-30) on phoneDay.
func onDay(s string) string {
	return strings.ReplaceAll(s, "2026-11-30", phoneDay.Format("2006-01-02"))
}

func seedPhoneData(t *testing.T, api browserAPI, at func(string)) {
	t.Helper()
	api.do("PUT", "/v1/players/alice", `{"name": "Team Alice"}`)
	api.do("PUT", "/v1/players/amy", `{"name": "Amy"}`)
	api.do("PUT", "/v1/players/cid", `{"name": "Cid"}`)
	api.do("PUT", "/v1/players/carol", `{"name": "Carol and the Overflowing Stack Frames"}`)
	api.do("PUT", "/v1/boards/lbl", `{"title": "Minesweeper expert", "public": true, "reset": {"every": "week"}, "keys": [
		{"name": "time_ms", "order": "asc", "label": "Time", "format": "duration_ms"},
		{"name": "bbbv", "order": "desc", "label": "3BV", "format": "integer"}]}`)
	api.do("PUT", "/v1/boards/pts:current", `{"title": "Current points", "public": true, "mode": "sum",
		"keys": [{"name": "era", "order": "desc"}, {"name": "points", "order": "desc"}],
		"points": {"ladder": "pts", "kind": "current"}}`)
	api.do("PUT", "/v1/boards/pts:total", `{"title": "All-time points", "public": true, "mode": "sum",
		"keys": [{"name": "points", "order": "desc"}], "points": {"ladder": "pts", "kind": "total"}}`)
	api.do("PUT", "/v1/boards/wk", onDay(`{"title": "Week 49 cup", "public": true, "keys": [{"name": "time_ms", "order": "asc"}],
		"tournament": {"start": "2026-11-30T09:00:00Z", "end": "2026-11-30T11:00:00Z", "weight": 50, "ladder": "pts"}}`))
	api.do("PUT", "/v1/contests/ctf:phone", onDay(`{"title": "Winter finals", "start": "2026-11-30T09:00:00Z",
		"end": "2026-11-30T13:00:00Z", "freeze": "2026-11-30T12:30:00Z", "first_blood": [10, 5, 3], "public": true}`))
	for _, c := range []struct{ id, name, cat string }{
		{"web1", "Cookie Monster's Revenge", "web"}, {"heap", "Return of the Heap Feng Shui", "pwn"},
		{"rsa", "Textbook RSA, Again", "crypto"}, {"fw", "Firmware of the Ancients", "reversing"},
		{"osint", "Where Was This Photo Taken", "osint"}, {"misc", "Sanity check", "misc"},
	} {
		api.do("PUT", "/v1/contests/ctf:phone/challenges/"+c.id, fmt.Sprintf(`{"name": %q, "category": %q,
			"scoring": {"function": "ctfd_logarithmic", "value": 500, "minimum": 100, "decay": 10}}`, c.name, c.cat))
	}
	solve := func(team, ch string) {
		b, _ := json.Marshal(map[string]any{"team": team, "challenge": ch, "correct": true})
		api.do("POST", "/v1/contests/ctf:phone/attempts", string(b))
	}
	steps := []struct {
		at string
		do func()
	}{
		{"09:10", func() { api.submit("lbl", "bob", 58000, 140); solve("carol", "misc"); solve("alice", "misc") }},
		{"09:20", func() { api.submit("wk", "amy", 30000); api.submit("wk", "bob", 35000); api.submit("wk", "cid", 40000) }},
		{"09:40", func() { api.submit("lbl", "alice", 52000, 120); solve("carol", "heap"); solve("bob", "misc") }},
		{"10:05", func() { api.submit("lbl", "carol", 65000, 150); solve("alice", "web1"); solve("dave", "misc") }},
		{"10:30", func() { api.submit("lbl", "alice", 44000, 110); solve("bob", "rsa"); solve("carol", "web1") }},
		{"10:50", func() {
			api.submit("lbl", "bob", 47000, 100)
			api.submit("lbl", "dave", 70000, 99)
			solve("alice", "rsa")
		}},
		// After the tournament's end the scheduler settles it (every second, by the server's clock).
		{"11:20", func() { api.submit("lbl", "alice", 41000, 90); solve("carol", "fw"); solve("bob", "web1") }},
		{"11:50", func() { solve("alice", "osint"); solve("dave", "heap") }},
	}
	for _, s := range steps {
		at(s.at)
		s.do()
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var st struct {
			State string `json:"state"`
		}
		json.Unmarshal(api.do("GET", "/v1/tournaments/wk", ""), &st)
		if st.State == "settled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tournament was not settled: %q", st.State)
		}
	}
}

// overflowScript returns "" when nothing sticks out of its card on the
// page, or the first offenders: an element whose box goes past the sides
// of the card around it (a table frame, the chart's, a list card, the page
// itself) is fine only inside a frame that scrolls sideways (overflow-x
// auto), knows it (data-overflow="true", page.js) and shows its hint.
const overflowScript = `
const CARDS = ".table-wrap, .chart-wrap, .format, .boards > li, .notice, .feed li, main, header.top, footer";
const name = (e) => e.tagName + (e.id ? "#" + e.id : "") + (e.classList.length ? "." + Array.from(e.classList).join(".") : "");
const bad = [];
const root = document.documentElement;
if (root.scrollWidth > root.clientWidth) bad.push("the page scrolls sideways: " + root.scrollWidth + " > " + root.clientWidth);
for (const e of document.querySelectorAll("body *")) {
	if (e.closest(".visually-hidden, [hidden], script, title")) continue;
	const r = e.getBoundingClientRect();
	if (r.width === 0 && r.height === 0) continue;
	const card = e.parentElement && e.parentElement.closest(CARDS);
	if (!card) continue;
	const c = card.getBoundingClientRect();
	if (r.right <= c.right + 1 && r.left >= c.left - 1) continue;
	let ok = false;
	for (let s = e.parentElement; s && s !== card.parentElement; s = s.parentElement) {
		const ox = getComputedStyle(s).overflowX;
		if (ox === "auto" || ox === "scroll") {
			const h = s.previousElementSibling;
			ok = s.dataset.overflow === "true" && !!h && h.classList.contains("scroll-hint") && !h.hidden && h.getBoundingClientRect().height > 0;
			break;
		}
	}
	if (!ok) bad.push(name(e) + " " + Math.round(r.left) + ".." + Math.round(r.right) + " outside " + name(card) + " " + Math.round(c.left) + ".." + Math.round(c.right));
}
return bad.slice(0, 4).join("; ");`

// chartScript returns "ok" when the chart SELECTOR is drawn one SVG unit to
// a CSS pixel with labels of 12 px or more, and has a time axis: two
// ticks or more, inside the chart, not overlapping, and a title naming the
// viewer's time zone; or what is wrong.
const chartScript = `
const s = document.querySelector(SELECTOR);
if (!s) return "no chart";
const scale = s.getScreenCTM().a;
if (Math.abs(scale - 1) > 0.01) return "drawn at scale " + scale;
const texts = Array.from(s.querySelectorAll("text"));
const small = texts.filter((x) => parseFloat(getComputedStyle(x).fontSize) * scale < 12);
if (small.length) return small.length + " labels under 12 px, e.g. " + small[0].textContent;
const ticks = Array.from(s.querySelectorAll(".time-axis text.tick"), (x) => x.getBoundingClientRect()).sort((a, b) => a.left - b.left);
if (ticks.length < 2) return ticks.length + " time ticks";
const box = s.getBoundingClientRect();
if (ticks.some((r) => r.left < box.left - 1 || r.right > box.right + 1)) return "a time tick outside the chart";
if (ticks.some((r, i) => i > 0 && r.left < ticks[i - 1].right)) return "time ticks overlap";
const title = s.querySelector(".time-axis .axis-title");
if (!title || !/^time \((UTC|GMT|[A-Z]{2,5}|GMT[+-][0-9:]+)\)$/.test(title.textContent)) return "axis title " + (title ? title.textContent : "missing");
return "ok";`
