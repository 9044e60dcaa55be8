package http_test

import (
	"testing"
	"time"
)

// keep_periods: stored and shown, a bad value refused with 400 and
// nothing changed, and a period past it listed nowhere and read as a
// period without entries (the same answer, the same 404 for an entry),
// while the current and previous periods read as before.
func TestKeepPeriods(t *testing.T) {
	s := newServer(t)
	s.mkBoard("d", `{"keys":[{"name":"points","order":"desc"}],"reset":{"every":"day"},"public":true}`)
	for _, bad := range []string{`{"keep_periods":-1}`, `{"keep_periods":3661}`, `{"keep_periods":1.5}`, `{"keep_periods":"2"}`} {
		r := s.do("PUT", "/v1/boards/d", adminKey, bad)
		if r.status != 400 {
			t.Errorf("PUT %s: %d %s, want 400", bad, r.status, r.body)
		}
	}
	if got := s.must(200, s.do("GET", "/v1/boards/d", "", "")).json(t); got["keep_periods"] != nil {
		t.Fatalf("a refused keep_periods was stored: %v", got["keep_periods"])
	}
	var periods []string
	for d := range 4 {
		s.must(200, s.do("POST", "/v1/boards/d/scores", adminKey, `{"player":"alice","score":10}`))
		periods = append(periods, s.must(200, s.do("GET", "/v1/boards/d", "", "")).json(t)["period"].(string))
		if d < 3 {
			s.clock.Add(24 * time.Hour)
		}
	}
	got := s.must(200, s.do("PUT", "/v1/boards/d", adminKey, `{"keep_periods":1}`)).json(t)
	if got["keep_periods"] != float64(1) {
		t.Fatalf("keep_periods after the PUT: %v", got["keep_periods"])
	}
	list := s.must(200, s.do("GET", "/v1/boards/d/periods", "", "")).json(t)
	ps := list["periods"].([]any)
	if len(ps) != 2 || ps[0].(map[string]any)["id"] != periods[3] || ps[1].(map[string]any)["id"] != periods[2] {
		t.Fatalf("periods with keep_periods 1: %v, want %s and %s", ps, periods[3], periods[2])
	}
	never := s.must(200, s.do("GET", "/v1/boards/d/entries?period=2000-01-01", "", "")).json(t)
	gone := s.must(200, s.do("GET", "/v1/boards/d/entries?period="+periods[0], "", "")).json(t)
	if gone["total"] != never["total"] || len(gone["entries"].([]any)) != 0 {
		t.Fatalf("an expired period's page: %v; a period that never had entries: %v", gone, never)
	}
	if r := s.do("GET", "/v1/boards/d/entries/alice?period="+periods[0], "", ""); r.status != 404 || r.errCode(t) != "entry_not_found" {
		t.Fatalf("an entry of an expired period: %d %s", r.status, r.body)
	}
	// A player's history leaves the expired periods out too.
	hist := s.must(200, s.do("GET", "/v1/boards/d/entries/alice/history", adminKey, "")).json(t)["items"].([]any)
	if len(hist) != 2 || hist[0].(map[string]any)["period"] != periods[3] || hist[1].(map[string]any)["period"] != periods[2] {
		t.Fatalf("history with keep_periods 1: %v", hist)
	}
	for _, p := range []string{"current", "previous"} {
		page := s.must(200, s.do("GET", "/v1/boards/d/entries?period="+p, "", "")).json(t)
		if page["total"] != float64(1) {
			t.Fatalf("the %s period: %v", p, page)
		}
	}
	// 0 keeps every period from now on; what went stays gone.
	got = s.must(200, s.do("PUT", "/v1/boards/d", adminKey, `{"keep_periods":0}`)).json(t)
	if _, ok := got["keep_periods"]; ok {
		t.Fatalf("keep_periods 0 is shown: %v", got)
	}
	s.clock.Add(72 * time.Hour)
	ps = s.must(200, s.do("GET", "/v1/boards/d/periods", "", "")).json(t)["periods"].([]any)
	if len(ps) != 2 {
		t.Fatalf("periods after keep_periods 0: %v", ps)
	}
}
