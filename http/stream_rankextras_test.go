package http_test

import (
	"fmt"
	"math"
	"sort"
	"testing"
	"time"
)

// extras renders a window as "rank:player:rank_shared:percentile", the
// percentile computed from rank and total as docs/API.md tells clients to.
func (b *board) extras(total float64) []string {
	var out []string
	for _, m := range b.entries {
		rank := m["rank"].(float64)
		pct := math.Floor(10000*(total-rank)/total) / 100
		out = append(out, fmt.Sprintf("%03.0f:%s:%v:%.2f", rank, m["player"], m["rank_shared"], pct))
	}
	sort.Strings(out)
	return out
}

// restExtras is the same from the REST read, whose entries carry both.
func (s *server) restExtras(board string, n int) ([]string, float64) {
	s.t.Helper()
	r := s.must(200, s.do("GET", fmt.Sprintf("/v1/boards/%s/entries?limit=%d", board, n), adminKey, nil)).json(s.t)
	var out []string
	for _, e := range r["entries"].([]any) {
		m := e.(map[string]any)
		out = append(out, fmt.Sprintf("%03.0f:%s:%v:%.2f", m["rank"], m["player"], m["rank_shared"], m["percentile"]))
	}
	return out, r["total"].(float64)
}

// A stream of a board with rank_style shared carries rank_shared in its
// snapshots and deltas, exactly: an entry whose shared rank moves while
// its rank does not is in the delta. With rank and the event's total a
// client gets the REST read's percentile. A board without the style
// carries no rank_shared, and switching the style restates the window.
func TestStreamRankShared(t *testing.T) {
	s := newServer(t)
	s.mkBoard("tie", `{"keys":[{"name":"points","order":"desc"}],"mode":"latest","public":true,"rank_style":"shared"}`)
	for _, p := range []struct {
		player string
		v      int
	}{{"a", 50}, {"b", 40}, {"c", 40}, {"d", 30}} {
		s.score("tie", p.player, p.v)
	}
	c := s.openSSE("/v1/boards/tie/stream?limit=3", "")
	first := c.next(2 * time.Second)
	if first.Type != "snapshot" {
		t.Fatalf("first event: %+v", first)
	}
	var b board
	b.apply(t, first)
	total := first.Data["total"].(float64)
	want, wantTotal := s.restExtras("tie", 3)
	if got := b.extras(total); fmt.Sprint(got) != fmt.Sprint(want) || total != wantTotal {
		t.Fatalf("snapshot: %v (total %v), REST %v (total %v)", got, total, want, wantTotal)
	}
	// b moves ahead of c without changing rank: c's shared rank goes from
	// 2 to 3, and the delta must say so.
	s.score("tie", "b", 45)
	ev := c.next(2 * time.Second)
	if ev.Type != "delta" {
		t.Fatalf("want a delta, got %+v", ev)
	}
	var sawC bool
	for _, e := range ev.Data["changes"].([]any) {
		m := e.(map[string]any)
		if m["player"] == "c" {
			sawC = m["rank_shared"] == float64(3) && m["rank"] == float64(3)
		}
	}
	if !sawC {
		t.Fatalf("the delta leaves out c, whose shared rank moved: %v", ev.Data)
	}
	b.apply(t, ev)
	total = ev.Data["total"].(float64)
	want, _ = s.restExtras("tie", 3)
	if got := b.extras(total); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the delta: %v, REST %v", got, want)
	}
	// A new player below the window: only total moves, and every
	// percentile with it; the client's, computed, matches.
	s.score("tie", "e", 1)
	ev = c.next(2 * time.Second)
	b.apply(t, ev)
	total = ev.Data["total"].(float64)
	want, _ = s.restExtras("tie", 3)
	if got := b.extras(total); total != 5 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a new last player: %v (total %v), REST %v", got, total, want)
	}
	// Unique again: the window is restated without rank_shared.
	s.must(200, s.do("PUT", "/v1/boards/tie", adminKey, `{"rank_style":"unique"}`))
	ev = c.next(2 * time.Second)
	if ev.Type != "snapshot" {
		t.Fatalf("after the style changed: %+v", ev)
	}
	for _, e := range ev.Data["entries"].([]any) {
		if _, ok := e.(map[string]any)["rank_shared"]; ok {
			t.Fatalf("a unique board's snapshot carries rank_shared: %v", ev.Data)
		}
	}
}
