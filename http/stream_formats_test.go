package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/stream"
	"github.com/podiumhq/podium/tournament"
)

// newFormatsServer is newTourneyServer on SQLite with a hub that sends
// its safety-net snapshot every 300 ms.
func newFormatsServer(t *testing.T, now time.Time) *server {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := &fakeClock{t: now}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := modules.Engine(engine.Config{Store: st, Now: clk.Now, Logger: log, PollEvery: 50 * time.Millisecond,
		Modules: modules.With(modules.Config{Store: st, Logger: log, Tournament: tournament.Config{SettleEvery: -1}})})
	eng.Keys().SetAdminSecret(adminKey)
	hub := stream.New(podiumhttp.StreamSource(eng), stream.Config{Logger: log, SnapshotEvery: 300 * time.Millisecond})
	eng.SetListener(hub)
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := podiumhttp.New(podiumhttp.Config{Engine: eng, Store: st, Logger: log, Hub: hub})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hub.Close()
		ts.Close()
		eng.Close()
	})
	return &server{t: t, url: ts.URL, clock: clk, eng: eng, hub: hub, srv: srv}
}

// TestStreamCurrentPointsValue: a current points board's stream entries
// carry "value", the decayed points the REST read shows, next to the
// exact keys; a stream opened a half-life later shows half of it, and so
// does the next periodic snapshot of a stream that stayed open, though
// no entry changed.
func TestStreamCurrentPointsValue(t *testing.T) {
	start := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	end := start.Add(7 * 24 * time.Hour)
	s := newFormatsServer(t, start)
	set := func(at time.Time) { s.clock.mu.Lock(); s.clock.t = at; s.clock.mu.Unlock() }
	s.mkBoard("pts:current", `{"keys": [{"name": "era", "order": "desc"}, {"name": "points", "order": "desc"}], "mode": "sum", "public": true,
		"points": {"ladder": "pts", "kind": "current"}}`)
	s.mkBoard("pts:total", `{"keys": [{"name": "points", "order": "desc"}], "mode": "sum", "public": true,
		"points": {"ladder": "pts", "kind": "total"}}`)
	s.must(201, s.do("PUT", "/v1/boards/wk", adminKey, fmt.Sprintf(`{"public": true, "keys": [{"name": "time_ms", "order": "asc"}],
		"tournament": {"start": %q, "end": %q, "weight": 50, "ladder": "pts"}}`, start.Format(time.RFC3339), end.Format(time.RFC3339))))
	for p, ms := range map[string]int{"amy": 30000, "bob": 35000, "cid": 40000} {
		s.must(200, s.do("POST", "/v1/boards/wk/scores", adminKey, fmt.Sprintf(`{"player": %q, "keys": [%d]}`, p, ms)))
	}
	set(end.Add(18 * 24 * time.Hour))
	s.must(200, s.do("POST", "/v1/tournaments/wk/settle", adminKey, nil))

	var checkEvent func(ev sseEvent, want map[string]float64)
	// rest maps player -> [keys, value] of the REST read.
	rest := func(board string) map[string][2]any {
		page := s.must(200, s.do("GET", "/v1/boards/"+board+"/entries", "", nil)).json(t)
		out := map[string][2]any{}
		for _, e := range page["entries"].([]any) {
			m := e.(map[string]any)
			out[m["player"].(string)] = [2]any{fmt.Sprint(m["keys"]), m["value"]}
		}
		return out
	}
	check := func(limit int, want map[string]float64) {
		t.Helper()
		c := s.openSSE(fmt.Sprintf("/v1/boards/pts:current/stream?limit=%d", limit), "")
		defer c.cancel()
		checkEvent(c.next(2*time.Second), want)
	}
	checkEvent = func(ev sseEvent, want map[string]float64) {
		t.Helper()
		if ev.Type != "snapshot" {
			t.Fatalf("want a snapshot, got %+v", ev)
		}
		r := rest("pts:current")
		es := ev.Data["entries"].([]any)
		if len(es) != 3 {
			t.Fatalf("snapshot entries %v", es)
		}
		for _, e := range es {
			m := e.(map[string]any)
			p := m["player"].(string)
			if got := [2]any{fmt.Sprint(m["keys"]), m["value"]}; got != r[p] {
				t.Fatalf("stream entry %s = %v, REST = %v", p, got, r[p])
			}
			if v := m["value"].(float64); v < want[p]-1e-6 || v > want[p]+1e-6 {
				t.Fatalf("value of %s = %v, want %v", p, v, want[p])
			}
		}
	}
	// Settled 18 days after the end: credits dated at the end, decayed
	// since (the numbers of docs/API.md's example for amy and bob).
	now := map[string]float64{"amy": 49.152696, "bob": 24.576348, "cid": 16.711917}
	half := map[string]float64{"amy": 49.152696 / 2, "bob": 24.576348 / 2, "cid": 16.711917 / 2}
	check(10, now)
	open := s.openSSE("/v1/boards/pts:current/stream?limit=12", "")
	defer open.cancel()
	checkEvent(open.next(2*time.Second), now)
	set(end.Add(18*24*time.Hour + 730*24*time.Hour))
	check(11, half)
	// The open stream: the next periodic snapshot has the values as they
	// are now, with the same keys (nothing moved, so no delta came).
	checkEvent(open.next(2*time.Second), half)

	// Other boards carry no value.
	c := s.openSSE("/v1/boards/pts:total/stream", "")
	defer c.cancel()
	ev := c.next(2 * time.Second)
	for _, e := range ev.Data["entries"].([]any) {
		if v, ok := e.(map[string]any)["value"]; ok {
			t.Fatalf("a total points board's entry has a value %v", v)
		}
	}
}

// TestStreamBestKResults: a best_k board's stream entries carry the kept
// results (best first, at most stream.MaxResults), and a result kept
// below the best, which leaves the ranking keys as they were, is a delta.
func TestStreamBestKResults(t *testing.T) {
	s := newServer(t)
	s.mkBoard("bk", `{"keys": [{"name": "time_ms", "order": "asc"}], "mode": "best_k", "keep": 12, "public": true}`)
	submit := func(p string, ms int) {
		s.must(200, s.do("POST", "/v1/boards/bk/scores", adminKey, fmt.Sprintf(`{"player": %q, "keys": [%d]}`, p, ms)))
	}
	for i := 0; i < 12; i++ {
		submit("amy", 1000+100*i)
	}
	submit("bob", 5000)
	c := s.openSSE("/v1/boards/bk/stream?limit=5", "")
	defer c.cancel()
	ev := c.next(2 * time.Second)
	results := func(m map[string]any) string {
		var out []any
		rs, _ := m["results"].([]any)
		for _, r := range rs {
			out = append(out, r.(map[string]any)["keys"].([]any)[0])
		}
		return fmt.Sprint(out)
	}
	es := ev.Data["entries"].([]any)
	amy, bob := es[0].(map[string]any), es[1].(map[string]any)
	if stream.MaxResults != 10 || results(amy) != "[1000 1100 1200 1300 1400 1500 1600 1700 1800 1900]" || results(bob) != "[5000]" {
		t.Fatalf("snapshot results: amy %s, bob %s", results(amy), results(bob))
	}
	if at := amy["results"].([]any)[0].(map[string]any)["at"]; at != amy["at"] {
		t.Fatalf("the first result is the entry itself: at %v, entry at %v", at, amy["at"])
	}
	// bob keeps 6000 below his best 5000: his keys stay, his results move.
	submit("bob", 6000)
	ev = c.next(2 * time.Second)
	if ev.Type != "delta" {
		t.Fatalf("want a delta, got %+v", ev)
	}
	ch := ev.Data["changes"].([]any)
	if len(ch) != 1 || results(ch[0].(map[string]any)) != "[5000 6000]" || fmt.Sprint(ch[0].(map[string]any)["keys"]) != "[5000]" {
		t.Fatalf("delta changes %v", ch)
	}
}
