package http_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/stream"
)

// reviewBoard is the board of the moderation scenario: best points,
// public; its review setting is put once it has entries.
const reviewBoard = `{"title":"mod","keys":[{"name":"points","order":"desc"}],"public":true}`

func ranking(t *testing.T, s *server, board string) string {
	t.Helper()
	m := s.must(200, s.do("GET", "/v1/boards/"+board+"/entries?limit=50", "", nil)).json(t)
	var out []string
	for _, e := range m["entries"].([]any) {
		en := e.(map[string]any)
		out = append(out, fmt.Sprintf("%s:%v", en["player"], en["keys"]))
	}
	return strings.Join(out, " ")
}

// rankedEventually waits until both nodes rank the board as want.
func rankedEventually(t *testing.T, a, b *server, board, want string) {
	t.Helper()
	sessionsEventually(t, "ranking "+want, func() bool { return ranking(t, a, board) == want && ranking(t, b, board) == want })
}

// knownKey makes a key on a and waits until b knows it too.
func knownKey(t *testing.T, a, b *server, body string) string {
	t.Helper()
	k := a.key(body)
	sessionsEventually(t, "node b knows the key", func() bool { return b.do("GET", "/v1/boards", k, nil).status == 200 })
	return k
}

// TestModeration (issue 9 section 5): on SQLite and on two PostgreSQL
// nodes, a held submission answers 202 pending (the same on an
// Idempotency-Key retry on the other node), is not ranked or streamed
// until approved on one node, then ranks on both; a second decision is
// 409; a rejection keeps the previous entry; top-N, threshold and a
// frozen player hold; only review keys and admins see the queue and
// decide; history pages from the log.
func TestModeration(t *testing.T) {
	feedBackends(t, func(t *testing.T, a, b *server) {
		a.mkBoard("mod", reviewBoard)
		for _, s := range []string{`{"player":"alice","score":100}`, `{"player":"bob","score":90}`, `{"player":"carol","score":80}`} {
			a.must(200, a.do("POST", "/v1/boards/mod/scores", adminKey, s))
		}
		// Bad settings are refused; a good one is shown with the board.
		for _, bad := range []string{`{"review":{"hold":"top"}}`, `{"review":{"hold":"top","top":2,"threshold":[1]}}`,
			`{"review":{"hold":"threshold","threshold":[1,2]}}`, `{"review":{"hold":"some"}}`, `{"review":{"hold":"all","extra":1}}`} {
			if r := a.do("PUT", "/v1/boards/mod", adminKey, bad); r.status != 400 {
				t.Fatalf("PUT %s: %d %s", bad, r.status, r.body)
			}
		}
		a.must(200, a.do("PUT", "/v1/boards/mod", adminKey, `{"review":{"hold":"top","top":2}}`))
		sessionsEventually(t, "node b has the setting", func() bool {
			return strings.Contains(string(b.do("GET", "/v1/boards/mod", "", nil).body), `"review":{"hold":"top","top":2}`)
		})
		sse := b.openSSE("/v1/boards/mod/stream", "")
		defer sse.close()
		if ev := sse.next(5 * time.Second); ev.Type != "snapshot" {
			t.Fatalf("first event %+v", ev)
		}

		// dave's 95 would be second: held, on node b, and retried on a.
		sub := knownKey(t, a, b, `{"name":"game","scopes":["submit"]}`)
		r := b.must(202, b.do("POST", "/v1/boards/mod/scores", sub, `{"player":"dave","score":95}`, "Idempotency-Key", "d1"))
		held := r.json(t)
		if held["status"] != "pending" || held["reason"] != "top" || held["player"] != "dave" {
			t.Fatalf("held answer %s", r.body)
		}
		daveID := held["id"].(string)
		retry := a.must(202, a.do("POST", "/v1/boards/mod/scores", sub, `{"player":"dave","score":95}`, "Idempotency-Key", "d1"))
		if string(retry.body) != string(r.body) || retry.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry on the other node: %s (replayed %q), want %s", retry.body, retry.header.Get("Idempotent-Replayed"), r.body)
		}
		// Not held: 10 is nowhere near the top 2. The stream shows erin,
		// never dave.
		a.must(200, a.do("POST", "/v1/boards/mod/scores", sub, `{"player":"erin","score":10}`))
		if ev := sse.next(5 * time.Second); ev.Type != "delta" || !contains(fmt.Sprint(ev.Data), "erin") || contains(fmt.Sprint(ev.Data), "dave") {
			t.Fatalf("stream after a held and an applied score: %+v", ev)
		}
		rankedEventually(t, a, b, "mod", "alice:[100] bob:[90] carol:[80] erin:[10]")

		// Who may see the queue and decide.
		rev := knownKey(t, a, b, `{"name":"mod","scopes":["review"],"boards":["mod"]}`)
		other := knownKey(t, a, b, `{"name":"other","scopes":["review"],"boards":["x"]}`)
		for _, c := range []struct {
			method, path, key string
			status            int
		}{
			{"GET", "/v1/review", "", 401}, {"GET", "/v1/review", sub, 403}, {"GET", "/v1/review", rev, 403},
			{"GET", "/v1/review?board=mod", other, 403}, {"POST", "/v1/review/" + daveID + "/approve", sub, 403},
			{"POST", "/v1/review/" + daveID + "/approve", other, 403}, {"GET", "/v1/review/rv_0000000000000000", adminKey, 404},
			{"GET", "/v1/review?status=maybe", adminKey, 400}, {"GET", "/v1/review?cursor=zz", adminKey, 400},
			{"GET", "/v1/review?limit=101", adminKey, 400}, {"GET", "/v1/review?nope=1", adminKey, 400},
			{"POST", "/v1/players/dave/freeze", rev, 403}, {"POST", "/v1/players/dave/unfreeze", sub, 403},
			{"GET", "/v1/players/dave/freeze", rev, 200}, {"GET", "/v1/players/dave/freeze", sub, 403},
		} {
			if r := b.do(c.method, c.path, c.key, nil); r.status != c.status {
				t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, r.status, r.body, c.status)
			}
		}
		q := b.must(200, b.do("GET", "/v1/review?board=mod", rev, nil)).json(t)
		items := q["items"].([]any)
		if len(items) != 1 || q["next_cursor"] != nil {
			t.Fatalf("queue %v", q)
		}
		it := items[0].(map[string]any)
		if it["id"] != daveID || it["status"] != "pending" || it["entry"] != nil || it["decision"] != nil || it["evidence"] != nil ||
			fmt.Sprint(it["keys"]) != "[95]" || len(it["history"].([]any)) != 0 || it["submitted_at"] != "2026-11-30T10:00:00.000Z" {
			t.Fatalf("queue item %v", it)
		}

		// Approve on a: ranked on both, streamed; decided twice is 409.
		a.clock.Add(time.Minute)
		ap := a.must(200, a.do("POST", "/v1/review/"+daveID+"/approve", rev, `{"reason":"video checked"}`)).json(t)
		dec := ap["decision"].(map[string]any)
		res := ap["result"].(map[string]any)
		if ap["status"] != "approved" || dec["reason"] != "video checked" || dec["at"] != "2026-11-30T10:01:00.000Z" ||
			res["entry"].(map[string]any)["rank"] != 2.0 || dec["seq"] != res["seq"] {
			t.Fatalf("approval %v", ap)
		}
		rankedEventually(t, a, b, "mod", "alice:[100] dave:[95] bob:[90] carol:[80] erin:[10]")
		if ev := sse.next(5 * time.Second); ev.Type != "delta" || !contains(fmt.Sprint(ev.Data), "dave") {
			t.Fatalf("stream after the approval: %+v", ev)
		}
		// Evidence attached to the approved row shows in the item.
		up := newUpload(t, events(3, "dave"), uint64(res["seq"].(float64)))
		b.must(201, b.putEvidence("mod", "dave", adminKey, up))
		if ev := a.must(200, a.do("GET", "/v1/review/"+daveID, rev, nil)).json(t)["evidence"].(map[string]any); ev["events"] != 3.0 || ev["content_sha256"] != sha([]byte(up.plain)) {
			t.Fatalf("evidence of the approved item %v", ev)
		}
		for _, path := range []string{"/approve", "/reject"} {
			if r := b.do("POST", "/v1/review/"+daveID+path, adminKey, `{"reason":"again"}`); r.status != 409 || r.errCode(t) != "conflict" {
				t.Fatalf("deciding %s twice: %d %s", path, r.status, r.body)
			}
		}

		// Rejection keeps carol's 80.
		carol := a.must(202, a.do("POST", "/v1/boards/mod/scores", sub, `{"player":"carol","score":99}`)).json(t)["id"].(string)
		for _, body := range []string{`{}`, `{"reason":"  "}`, `{"reason":"` + strings.Repeat("x", 501) + `"}`, `{"reason":1}`, `{"why":"x"}`} {
			if r := b.do("POST", "/v1/review/"+carol+"/reject", adminKey, body); r.status != 400 {
				t.Fatalf("reject with %s: %d %s", body, r.status, r.body)
			}
		}
		rj := b.must(200, b.do("POST", "/v1/review/"+carol+"/reject", adminKey, `{"reason":"spliced replay"}`)).json(t)
		if rj["status"] != "rejected" || rj["decision"].(map[string]any)["by"] != "admin" || rj["result"] != nil {
			t.Fatalf("rejection %v", rj)
		}
		if fmt.Sprint(rj["entry"].(map[string]any)["keys"]) != "[80]" {
			t.Fatalf("the rejected item's entry %v, want carol's 80", rj["entry"])
		}
		rankedEventually(t, a, b, "mod", "alice:[100] dave:[95] bob:[90] carol:[80] erin:[10]")

		// Threshold.
		a.clock.Add(time.Second) // the queue is in submission order
		a.must(200, a.do("PUT", "/v1/boards/mod", adminKey, `{"review":{"hold":"threshold","threshold":[1000]}}`))
		a.must(202, a.do("POST", "/v1/boards/mod/scores", sub, `{"player":"erin","score":1001}`))
		a.must(200, a.do("POST", "/v1/boards/mod/scores", sub, `{"player":"erin","score":1000}`))

		// Freeze on a holds on b at once; unfreeze.
		a.clock.Add(time.Second)
		a.must(200, a.do("PUT", "/v1/boards/mod", adminKey, `{"review":{"hold":"none"}}`))
		fz := a.must(200, a.do("POST", "/v1/players/bob/freeze", adminKey, `{"reason":"reports"}`)).json(t)
		if fz["frozen"] != true || fz["reason"] != "reports" || fz["by"] != "admin" {
			t.Fatalf("freeze %v", fz)
		}
		fr := b.must(202, b.do("POST", "/v1/boards/mod/scores", sub, `{"player":"bob","score":1}`)).json(t)
		if fr["reason"] != "frozen" {
			t.Fatalf("frozen player's score %v", fr)
		}
		if g := b.must(200, b.do("GET", "/v1/players/bob/freeze", adminKey, nil)).json(t); g["frozen"] != true {
			t.Fatalf("freeze on b %v", g)
		}
		b.must(200, b.do("POST", "/v1/players/bob/unfreeze", adminKey, nil))
		if r := a.do("POST", "/v1/players/bob/unfreeze", adminKey, nil); r.status != 404 {
			t.Fatalf("unfreeze twice: %d %s", r.status, r.body)
		}
		a.must(200, a.do("POST", "/v1/boards/mod/scores", sub, `{"player":"bob","score":2}`))

		// One item approved on both nodes at once: one approval wins, the
		// other is 409, and the log holds the score once.
		a.must(200, a.do("PUT", "/v1/boards/mod", adminKey, `{"review":{"hold":"all"}}`))
		a.clock.Add(time.Second)
		race := a.must(202, a.do("POST", "/v1/boards/mod/scores", sub, `{"player":"gus","score":7}`)).json(t)["id"].(string)
		statuses := make(chan int, 2)
		var wg sync.WaitGroup
		for _, n := range []*server{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses <- n.do("POST", "/v1/review/"+race+"/approve", adminKey, nil).status
			}()
		}
		wg.Wait()
		close(statuses)
		got := map[int]int{}
		for s := range statuses {
			got[s]++
		}
		if got[200] != 1 || got[409] != 1 {
			t.Fatalf("two approvals at once: %v, want one 200 and one 409", got)
		}
		if h := b.must(200, b.do("GET", "/v1/boards/mod/entries/gus/history", "", nil)).json(t); len(h["items"].([]any)) != 1 {
			t.Fatalf("gus's history after two approvals %v", h)
		}
		a.must(200, a.do("PUT", "/v1/boards/mod", adminKey, `{"review":{"hold":"none"}}`))

		// The queue pages in submission order; status=all shows decided ones.
		seen := []string{}
		cursor := ""
		for range 10 {
			q := b.must(200, b.do("GET", "/v1/review?status=all&limit=1"+cursor, adminKey, nil)).json(t)
			for _, x := range q["items"].([]any) {
				it := x.(map[string]any)
				seen = append(seen, fmt.Sprintf("%s:%s:%s", it["player"], it["reason"], it["status"]))
			}
			if q["next_cursor"] == nil {
				break
			}
			cursor = "&cursor=" + q["next_cursor"].(string)
		}
		if want := "dave:top:approved carol:top:rejected erin:threshold:pending bob:frozen:pending gus:all:approved"; strings.Join(seen, " ") != want {
			t.Fatalf("queue pages %v, want %s", seen, want)
		}

		// History: public on a public board, newest first, paged; the
		// admin sees which row an approval wrote.
		pub := b.must(200, b.do("GET", "/v1/boards/mod/entries/dave/history", "", nil)).json(t)
		rows := pub["items"].([]any)
		if len(rows) != 1 || rows[0].(map[string]any)["review"] != nil || fmt.Sprint(rows[0].(map[string]any)["keys"]) != "[95]" {
			t.Fatalf("public history %v", pub)
		}
		adm := b.must(200, b.do("GET", "/v1/boards/mod/entries/dave/history", adminKey, nil)).json(t)
		if rv := adm["items"].([]any)[0].(map[string]any)["review"].(map[string]any); rv["id"] != daveID || rv["status"] != "approved" {
			t.Fatalf("admin history %v", adm)
		}
		var seqs []string
		cursor = ""
		for range 10 {
			h := a.must(200, a.do("GET", "/v1/boards/mod/entries/erin/history?limit=1"+cursor, "", nil)).json(t)
			for _, x := range h["items"].([]any) {
				seqs = append(seqs, fmt.Sprint(x.(map[string]any)["keys"]))
			}
			if h["next_cursor"] == nil {
				break
			}
			cursor = "&cursor=" + h["next_cursor"].(string)
		}
		if strings.Join(seqs, " ") != "[1000] [10]" {
			t.Fatalf("erin's history pages %v", seqs)
		}
		for _, path := range []string{"?cursor=0", "?cursor=x", "?limit=0", "?period=all"} {
			if r := a.do("GET", "/v1/boards/mod/entries/erin/history"+path, "", nil); r.status != 400 {
				t.Fatalf("history%s: %d %s", path, r.status, r.body)
			}
		}
		// A private board: a read key, or the player's own session.
		a.mkBoard("priv", privateBoard)
		a.must(200, a.do("POST", "/v1/boards/priv/scores", adminKey, `{"player":"pam","score":3}`))
		if r := a.do("GET", "/v1/boards/priv/entries/pam/history", "", nil); r.status != 404 {
			t.Fatalf("private history without a key: %d %s", r.status, r.body)
		}
		rd := knownKey(t, a, b, `{"name":"reader","scopes":["read"]}`)
		if h := b.must(200, b.do("GET", "/v1/boards/priv/entries/pam/history", rd, nil)).json(t); len(h["items"].([]any)) != 1 {
			t.Fatalf("private history with a read key %v", h)
		}
		// The player's own session reads its history on a private board
		// that takes player submissions; any other private board is, to a
		// session, unknown (404), so that a session cannot probe ids.
		a.mkBoard("privps", `{"keys":[{"name":"points","order":"desc"}],"public":false,"player_submit":true}`)
		a.must(200, a.do("POST", "/v1/boards/privps/scores", adminKey, `{"player":"pam","score":4}`))
		gk := knownKey(t, a, b, `{"name":"sessions","scopes":["sessions"]}`)
		tok, _ := a.issue("pam", "phone", gk)
		sessionsEventually(t, "node b knows pam's session", func() bool {
			return b.do("GET", "/v1/boards/privps/entries/pam/history", tok, nil).status == 200
		})
		for _, path := range []string{"/v1/boards/privps/entries/bob/history", "/v1/boards/priv/entries/pam/history"} {
			if r := b.do("GET", path, tok, nil); r.status != 404 || r.errCode(t) != "board_not_found" {
				t.Fatalf("a session reads %s: %d %s", path, r.status, r.body)
			}
		}
	})
}

// On a board without the player index (no quota, no review holds) a
// history page scans the log a stretch at a time: a page may come back
// short of its limit with a cursor where the scan stopped, and following
// the cursors lists every row once, newest first.
func TestHistoryScanPages(t *testing.T) {
	s := newServerStore(t, stream.Config{}, false, nil, sqlite.Options{Sync: "normal", HistoryScan: 5})
	s.mkBoard("plain", `{"keys":[{"name":"points","order":"desc"}],"mode":"latest","public":true}`)
	var items []string
	var want []string
	for i := 1; i <= 60; i++ {
		p := "bob"
		if i%9 == 0 {
			p = "alice"
			want = append([]string{fmt.Sprint(i)}, want...)
		}
		items = append(items, fmt.Sprintf(`{"board":"plain","player":%q,"score":%d}`, p, i))
	}
	s.must(200, s.do("POST", "/v1/scores", adminKey, `{"scores":[`+strings.Join(items, ",")+`]}`))
	var got []string
	short := false
	cursor := ""
	for range 40 {
		h := s.must(200, s.do("GET", "/v1/boards/plain/entries/alice/history?limit=3"+cursor, "", nil)).json(t)
		page := h["items"].([]any)
		for _, x := range page {
			got = append(got, fmt.Sprint(x.(map[string]any)["keys"].([]any)[0]))
		}
		if h["next_cursor"] == nil {
			break
		}
		if len(page) < 3 {
			short = true
		}
		cursor = "&cursor=" + h["next_cursor"].(string)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("alice's history %v, want %v", got, want)
	}
	if !short {
		t.Errorf("no page stopped short of its limit: the scan was not bounded")
	}
}
