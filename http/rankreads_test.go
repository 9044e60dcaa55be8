package http_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// rankRow is what the rank tests read of an entry.
type rankRow struct {
	Rank       int      `json:"rank"`
	Percentile *float64 `json:"percentile"`
	Shared     *int     `json:"rank_shared"`
	Player     string   `json:"player"`
}

type rankPage struct {
	Total      int      `json:"total"`
	TopPercent *float64 `json:"top_percent"`
	TopCount   *int     `json:"top_count"`
	Entries    []rankRow
}

func (s *server) rankPage(path, key string) rankPage {
	s.t.Helper()
	var p rankPage
	if err := json.Unmarshal(s.must(200, s.do("GET", path, key, nil)).body, &p); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// rows renders entries as "player rank percentile shared" for comparison.
func rows(es []rankRow) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s %d", e.Player, e.Rank)
		if e.Percentile != nil {
			fmt.Fprintf(&b, " %.2f", *e.Percentile)
		}
		if e.Shared != nil {
			fmt.Fprintf(&b, " s%d", *e.Shared)
		}
		b.WriteString("; ")
	}
	return b.String()
}

// TestRankReads: every ranking answer carries percentile (the share of
// the view's entries strictly behind, floored to hundredths), and a board
// with rank_style shared also rank_shared (1, 2, 2, 4), on every read: a
// page, around, one player, players=, a submit answer and its previous
// entry; hiding a player closes the ranks up.
func TestRankReads(t *testing.T) {
	s := newServer(t)
	s.mkBoard("r", `{"keys":[{"name":"points","order":"desc"}],"public":true}`)
	for _, sc := range []struct {
		p string
		v int
	}{{"ann", 50}, {"bob", 40}, {"cat", 40}, {"dan", 30}, {"eve", 40}, {"fay", 10}} {
		s.must(200, s.do("POST", "/v1/boards/r/scores", adminKey, fmt.Sprintf(`{"player":%q,"score":%d}`, sc.p, sc.v)))
	}
	// Unique ranks, no rank_shared: the board does not ask for it.
	p := s.rankPage("/v1/boards/r/entries", "")
	if got, want := rows(p.Entries), "ann 1 83.33; bob 2 66.66; cat 3 50.00; eve 4 33.33; dan 5 16.66; fay 6 0.00; "; got != want {
		t.Fatalf("unique board:\n got %s\nwant %s", got, want)
	}
	tag := s.must(200, s.do("GET", "/v1/boards/r/entries", "", nil)).header.Get("ETag")

	r := s.must(200, s.do("PUT", "/v1/boards/r", adminKey, `{"rank_style":"shared"}`))
	if !strings.Contains(string(r.body), `"rank_style":"shared"`) {
		t.Fatalf("board answer without rank_style: %s", r.body)
	}
	// The style is part of the page: the old tag no longer matches and
	// the cached page is not served.
	if r := s.do("GET", "/v1/boards/r/entries", "", nil, "If-None-Match", tag); r.status != 200 {
		t.Fatalf("after rank_style changed, If-None-Match with the old tag: %d", r.status)
	}
	want := "ann 1 83.33 s1; bob 2 66.66 s2; cat 3 50.00 s2; eve 4 33.33 s2; dan 5 16.66 s5; fay 6 0.00 s6; "
	if got := rows(s.rankPage("/v1/boards/r/entries", "").Entries); got != want {
		t.Fatalf("shared board:\n got %s\nwant %s", got, want)
	}
	// A page that starts inside a tie asks the index for the first one.
	if got := rows(s.rankPage("/v1/boards/r/entries?offset=2&limit=3", "").Entries); got != "cat 3 50.00 s2; eve 4 33.33 s2; dan 5 16.66 s5; " {
		t.Fatalf("page from rank 3: %s", got)
	}
	if got := rows(s.rankPage("/v1/boards/r/entries/eve/around?radius=1", "").Entries); got != "cat 3 50.00 s2; eve 4 33.33 s2; dan 5 16.66 s5; " {
		t.Fatalf("around eve: %s", got)
	}
	if got := rows(s.rankPage("/v1/boards/r/entries?players=fay,eve,ann", "").Entries); got != "ann 1 83.33 s1; eve 4 33.33 s2; fay 6 0.00 s6; " {
		t.Fatalf("players=: %s", got)
	}
	var one struct {
		rankRow
		Entry rankRow `json:"entry"`
	}
	json.Unmarshal(s.must(200, s.do("GET", "/v1/boards/r/entries/cat", "", nil)).body, &one)
	if got := rows([]rankRow{one.rankRow, one.Entry}); got != "cat 3 50.00 s2; cat 3 50.00 s2; " {
		t.Fatalf("one entry: %s", got)
	}
	// A submit answer: dan ties with the 40s (6 entries: rank 5 -> 5,
	// sharing 2), previous at 5 of 6.
	var sub struct {
		Entry, Previous rankRow
	}
	json.Unmarshal(s.must(200, s.do("POST", "/v1/boards/r/scores", adminKey, `{"player":"dan","score":40}`)).body, &sub)
	if got := rows([]rankRow{sub.Entry, sub.Previous}); got != " 5 16.66 s2;  5 16.66 s5; " {
		t.Fatalf("submit answer: %s", got)
	}
	// Hiding bob closes up the public ranks; include_hidden counts him.
	s.must(200, s.do("PUT", "/v1/players/bob", adminKey, `{"hidden":true}`))
	if got := rows(s.rankPage("/v1/boards/r/entries", "").Entries); got != "ann 1 80.00 s1; cat 2 60.00 s2; eve 3 40.00 s2; dan 4 20.00 s2; fay 5 0.00 s5; " {
		t.Fatalf("bob hidden: %s", got)
	}
	if got := rows(s.rankPage("/v1/boards/r/entries?include_hidden=true&limit=3", adminKey).Entries); got != "ann 1 83.33 s1; bob 2 66.66 s2; cat 3 50.00 s2; " {
		t.Fatalf("include_hidden: %s", got)
	}
	// Back to unique: rank_shared is gone, percentile stays.
	s.must(200, s.do("PUT", "/v1/boards/r", adminKey, `{"rank_style":"unique"}`))
	if got := rows(s.rankPage("/v1/boards/r/entries?limit=2", "").Entries); got != "ann 1 80.00; cat 2 60.00; " {
		t.Fatalf("unique again: %s", got)
	}
	if r := s.do("PUT", "/v1/boards/r", adminKey, `{"rank_style":"dense"}`); r.status != 400 || r.errCode(t) != "invalid_argument" {
		t.Fatalf("rank_style dense: %d %s", r.status, r.body)
	}
}

// TestTopPercent: top_percent=P answers the first ceil(n * P / 100)
// entries, paged by offset and limit like any page, with top_count saying
// how many there are; bad values are 400 and change nothing.
func TestTopPercent(t *testing.T) {
	s := newServer(t)
	s.mkBoard("t", `{"keys":[{"name":"points","order":"desc"}],"public":true}`)
	if p := s.rankPage("/v1/boards/t/entries?top_percent=10", ""); p.TopCount == nil || *p.TopCount != 0 || len(p.Entries) != 0 {
		t.Fatalf("an empty board's top 10%%: %+v", p)
	}
	var batch []string
	for i := range 7 {
		batch = append(batch, fmt.Sprintf(`{"board":"t","player":"p%d","score":%d}`, i, 100-i))
	}
	s.must(200, s.do("POST", "/v1/scores", adminKey, `{"scores":[`+strings.Join(batch, ",")+`]}`))
	for _, c := range []struct {
		query, players string
		pct            float64
		count          int
	}{
		{"top_percent=10", "p0", 10, 1},       // 0.7 of an entry: the leader
		{"top_percent=14.28", "p0", 14.28, 1}, // 0.9996
		{"top_percent=14.29", "p0,p1", 14.29, 2},
		{"top_percent=50", "p0,p1,p2,p3", 50, 4},
		{"top_percent=0.01", "p0", 0.01, 1},
		{"top_percent=100", "p0,p1,p2,p3,p4,p5,p6", 100, 7},
		{"top_percent=100.00&offset=5", "p5,p6", 100, 7},
		{"top_percent=50&limit=3", "p0,p1,p2", 50, 4},    // the read limit bounds it
		{"top_percent=50&offset=3&limit=3", "p3", 50, 4}, // and the next page ends at the cut
		{"top_percent=50&offset=4", "", 50, 4},           // past the cut
		{"top_percent=99.9&period=current&include_hidden=false", "p0,p1,p2,p3,p4,p5,p6", 99.9, 7},
	} {
		p := s.rankPage("/v1/boards/t/entries?"+c.query, "")
		var got []string
		for _, e := range p.Entries {
			got = append(got, e.Player)
		}
		if strings.Join(got, ",") != c.players || p.TopPercent == nil || *p.TopPercent != c.pct || p.TopCount == nil || *p.TopCount != c.count || p.Total != 7 {
			t.Errorf("%s: entries %v, top_percent %v, top_count %v, total %d; want %s, %v, %d, 7", c.query, got, p.TopPercent, p.TopCount, p.Total, c.players, c.pct, c.count)
		}
	}
	// The same page twice comes from the page cache: the cut is part of
	// its key, so another cut of the same state is not served for it.
	a := s.must(200, s.do("GET", "/v1/boards/t/entries?top_percent=20", "", nil)).body
	b := s.must(200, s.do("GET", "/v1/boards/t/entries?top_percent=40", "", nil)).body
	if string(a) == string(b) || !strings.Contains(string(b), `"top_count":3`) {
		t.Fatalf("two cuts of the same state:\n%s\n%s", a, b)
	}
	if p := s.rankPage("/v1/boards/t/entries", ""); p.TopPercent != nil || p.TopCount != nil || len(p.Entries) != 7 {
		t.Fatalf("without top_percent: %+v", p)
	}
	for _, bad := range []string{"0", "0.00", "100.01", "101", "-5", "1e1", "10.123", ".5", "5.", "abc", "", "1000", "50&players=p1"} {
		r := s.do("GET", "/v1/boards/t/entries?top_percent="+bad, "", nil)
		if r.status != 400 || r.errCode(t) != "invalid_argument" {
			t.Errorf("top_percent=%s: %d %s, want 400 invalid_argument", bad, r.status, r.body)
		}
	}
}
