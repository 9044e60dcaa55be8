package http_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium/stream"
)

// The JSON of best_k and aggregate boards: the board's keep and aggregate
// fields, an entry's results, and the errors of bad definitions.
func TestAggregateJSON(t *testing.T) {
	s := newServer(t)
	keys := `"keys":[{"name":"t","order":"asc"},{"name":"v","order":"desc"}]`
	b := s.must(201, s.do("PUT", "/v1/boards/beg", adminKey, `{`+keys+`,"mode":"best_k","keep":2,"public":true}`))
	if !strings.Contains(string(b.body), `"mode":"best_k","reset":{"every":"none","tz":"UTC"},"public":true,"meta":{},"keep":2,"created_at"`) {
		t.Fatalf("best_k board: %s", b.body)
	}
	a := s.must(201, s.do("PUT", "/v1/boards/tot", adminKey, `{`+keys+`,"public":true,
		"aggregate":{"kind":"best_k_sum","sources":[{"board":"beg","k":2,"fill":[100,0]}]}}`))
	if want := `"mode":"aggregate",`; !strings.Contains(string(a.body), want) ||
		!strings.Contains(string(a.body), `"aggregate":{"kind":"best_k_sum","sources":[{"board":"beg","k":2,"fill":[100,0]}],"require_all":false}`) {
		t.Fatalf("aggregate board: %s", a.body)
	}
	if g := s.must(200, s.do("GET", "/v1/boards/tot", "", nil)); !strings.Contains(string(g.body), `"fill":[100,0]`) {
		t.Fatalf("GET aggregate board: %s", g.body)
	}
	s.must(200, s.do("POST", "/v1/boards/beg/scores", adminKey, `{"player":"p","keys":[5,1]}`))
	r := s.must(200, s.do("POST", "/v1/boards/beg/scores", adminKey, `{"player":"p","keys":[4,1]}`))
	if !strings.Contains(string(r.body), `"results":[{"keys":[4,1],"at":"2026-11-30T10:00:00.000Z"},{"keys":[5,1],"at":"2026-11-30T10:00:00.000Z"}]`) {
		t.Fatalf("submit answer: %s", r.body)
	}
	e := s.must(200, s.do("GET", "/v1/boards/tot/entries", "", nil))
	if !strings.Contains(string(e.body), `"player":"p","name":"p","keys":[9,2]`) || strings.Contains(string(e.body), "results") {
		t.Fatalf("aggregate entries: %s", e.body)
	}
	for _, tc := range []struct{ body, code string }{
		{`{` + keys + `,"aggregate":{"kind":"sum_of_bests","sources":[{"board":"beg","weight":2}]}}`, "invalid_argument"},
		{`{` + keys + `,"aggregate":{"kind":"sum_of_bests","sources":[{"board":"nope"}]}}`, "invalid_argument"},
		{`{` + keys + `,"mode":"best_k"}`, "invalid_argument"},
		{`{` + keys + `,"mode":"best","keep":3}`, "invalid_argument"},
	} {
		r := s.must(400, s.do("PUT", "/v1/boards/bad", adminKey, tc.body))
		if c := r.errCode(t); c != tc.code {
			t.Errorf("%s: %s, want %s", tc.body, r.body, tc.code)
		}
	}
	s.must(404, s.do("GET", "/v1/boards/bad", "", nil))
	if r := s.must(409, s.do("POST", "/v1/boards/tot/scores", adminKey, `{"player":"p","keys":[1,1]}`)); r.errCode(t) != "conflict" {
		t.Fatalf("submit to an aggregate: %s", r.body)
	}
	if r := s.must(409, s.do("DELETE", "/v1/boards/beg", adminKey, nil)); r.errCode(t) != "conflict" {
		t.Fatalf("delete a source: %s", r.body)
	}
}

// An aggregate board streams like any board: a source write reaches the
// aggregate's stream as a delta, and a stream resumed from an event id
// gets the aggregate changes it missed.
func TestAggregateStream(t *testing.T) {
	s := newServerWith(t, stream.Config{History: 8, Coalesce: 20 * time.Millisecond}, false)
	for _, id := range []string{"a", "b"} {
		s.mkBoard(id, `{"keys":[{"name":"points","order":"desc"}],"mode":"best","public":true}`)
	}
	s.mkBoard("ab", `{"keys":[{"name":"points","order":"desc"}],"public":true,
		"aggregate":{"kind":"sum_of_bests","sources":[{"board":"a"},{"board":"b"}]}}`)
	keep := s.openSSE("/v1/boards/ab/stream?limit=10", "") // keeps the window alive
	var kb board
	kb.apply(t, keep.next(2*time.Second))
	c := s.openSSE("/v1/boards/ab/stream?limit=10", "")
	var b board
	b.apply(t, c.next(2*time.Second))
	s.score("a", "x", 10)
	ev := c.next(2 * time.Second)
	if ev.Type != "delta" {
		t.Fatalf("want a delta on the aggregate, got %+v", ev)
	}
	b.apply(t, ev)
	if got := fmt.Sprint(b.order()); got != "[001:x:[10]]" {
		t.Fatalf("aggregate window %s", got)
	}
	c.close()
	waitFor(t, s, keep, &kb, "ab", 10, 2*time.Second)
	s.score("b", "x", 5)
	waitFor(t, s, keep, &kb, "ab", 10, 2*time.Second)
	s.score("b", "y", 50)
	waitFor(t, s, keep, &kb, "ab", 10, 2*time.Second)
	c2 := s.openSSE("/v1/boards/ab/stream?limit=10", ev.ID)
	for range 2 {
		ev := c2.next(2 * time.Second)
		if ev.Type != "delta" {
			t.Fatalf("resume sent %s, want the missed deltas", ev.Type)
		}
		b.apply(t, ev)
	}
	if got, want := fmt.Sprint(b.order()), fmt.Sprint(s.restOrder("ab", 10)); got != want || got != "[001:y:[50] 002:x:[15]]" {
		t.Fatalf("resumed aggregate window %s, board %s", got, want)
	}
}
