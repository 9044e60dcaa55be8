package http_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestLeagueExportWholeTooLarge: the export without part holds its answer
// whole, so a league with more rows than one page may hold (10,000) is
// 413 too_large, naming the pages, while its pages still read it all; at
// the bound it is answered whole.
func TestLeagueExportWholeTooLarge(t *testing.T) {
	s := newServer(t)
	s.mkBoard("lg", `{"public":true,"mode":"sum","keys":[{"name":"xp","order":"desc"}],"reset":{"every":"day","tz":"UTC"},
		"league":{"cohort_size":30,"tiers":[{"name":"low","promote":1},{"name":"high","relegate":1}]}}`)
	restore := func(from, to int) {
		var b strings.Builder
		b.WriteString(`{"tiers":[`)
		for i := from; i < to; i++ {
			if i > from {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"player":"p%05d","tier":"high"}`, i)
		}
		b.WriteString(`]}`)
		s.must(200, s.do("POST", "/v1/leagues/lg/restore", adminKey, b.String()))
	}
	for i := 0; i < 10000; i += 1000 {
		restore(i, i+1000)
	}
	whole := s.must(200, s.do("GET", "/v1/leagues/lg/export", adminKey, nil))
	if n := strings.Count(string(whole.body), "\n"); n != 10000 {
		t.Fatalf("the whole export at the bound has %d lines, want 10000", n)
	}
	restore(10000, 10001)
	r := s.do("GET", "/v1/leagues/lg/export", adminKey, nil)
	if r.status != 413 || r.errCode(t) != "too_large" || !strings.Contains(string(r.body), "?part=") {
		t.Fatalf("the whole export past the bound: %d %s, want 413 too_large naming the pages", r.status, r.body)
	}
	page := s.must(200, s.do("GET", "/v1/leagues/lg/export?part=tiers&after=p09999&limit=10", adminKey, nil))
	if !strings.Contains(string(page.body), `"p10000"`) || !strings.Contains(string(page.body), `"next_after":null`) {
		t.Fatalf("the last page of tiers: %s", page.body)
	}
}
