package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/podiumhq/podium/client"
)

// leagueExportFixture restores into the league "lg" (daily) 20 settled
// periods with 20 results each and 15 tiers, 435 rows, and returns each
// period's players (byte order) and the tiers' players.
func leagueExportFixture(t *testing.T, s *server) (periods []string, results map[string][]string, tiers []string) {
	t.Helper()
	s.mkBoard("lg", `{"public":true,"mode":"sum","keys":[{"name":"xp","order":"desc"}],"reset":{"every":"day","tz":"UTC"},
		"league":{"cohort_size":30,"tiers":[{"name":"low","promote":1},{"name":"high","relegate":1}]}}`)
	players := []string{"Zed", "amy", "Amy", "é", "e", "a b", "a", "p100", "p9", "z"}
	for i := range 20 {
		players = append(players, fmt.Sprintf("p%02d", i))
	}
	results = map[string][]string{}
	var b strings.Builder
	b.WriteString(`{"tiers":[`)
	for i, p := range players {
		if i%2 == 0 {
			if len(tiers) > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"player":%q,"tier":"high"}`, p)
			tiers = append(tiers, p)
		}
	}
	b.WriteString(`],"periods":[`)
	for d := 1; d <= 20; d++ {
		day := fmt.Sprintf("2026-11-%02d", d)
		periods = append(periods, day)
		if d > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"period":%q,"start":"%sT00:00:00Z","settled_at":"2026-11-%02dT00:00:01Z","players":20,"promoted":0,"relegated":0,"results":[`, day, day, d+1)
		n := 0
		for i, p := range players {
			if (i+d)%3 == 0 {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			if i == d {
				fmt.Fprintf(&b, `{"player":%q,"tier":"high","cohort":null,"rank":null,"outcome":"absent","new_tier":"low"}`, p)
			} else {
				fmt.Fprintf(&b, `{"player":%q,"tier":"low","cohort":0,"rank":%d,"outcome":"stayed","new_tier":"low"}`, p, n+1)
			}
			results[day] = append(results[day], p)
			n++
		}
		b.WriteString("]}")
		sort.Strings(results[day])
	}
	b.WriteString("]}")
	s.must(200, s.do("POST", "/v1/leagues/lg/restore", adminKey, b.String()))
	sort.Strings(tiers)
	return periods, results, tiers
}

// TestLeagueExportPages: the export's pages walk every period, every
// period's results and every tier exactly once, in order, with limits
// 1, 2 and 3 (a page holds at most limit rows; next_after is null on the
// last); the Go client's Export, paging, writes the rows the whole
// answer holds; bad parts, cursors and limits are 400, an unknown period
// 404; while the store fails every part is 503.
func TestLeagueExportPages(t *testing.T) {
	var failing *atomic.Bool
	s := newSpecServerAt(t, func(path string) { failing = failSQLite(path) })
	periods, results, tiers := leagueExportFixture(t, s)
	walk := func(what, query, rows string, limit int) []string {
		t.Helper()
		var got []string
		after := ""
		for calls := 0; ; calls++ {
			if calls > 500 {
				t.Fatalf("%s: more pages than rows", what)
			}
			q := query + "&limit=" + fmt.Sprint(limit)
			if after != "" {
				q += "&after=" + url.QueryEscape(after)
			}
			page := s.must(200, s.do("GET", "/v1/leagues/lg/export?"+q, adminKey, nil)).json(t)
			list := page[rows].([]any)
			if len(list) > limit {
				t.Fatalf("%s limit %d: a page of %d", what, limit, len(list))
			}
			for _, r := range list {
				m := r.(map[string]any)
				if rows == "periods" {
					got = append(got, m["period"].(string))
				} else {
					got = append(got, m["player"].(string))
				}
			}
			next, ok := page["next_after"].(string)
			if !ok {
				return got
			}
			if len(list) == 0 || next != got[len(got)-1] {
				t.Fatalf("%s: next_after %q after a page ending at %q", what, next, got[len(got)-1])
			}
			after = next
		}
	}
	for _, limit := range []int{1, 2, 3} {
		if got := walk("periods", "part=periods", "periods", limit); fmt.Sprint(got) != fmt.Sprint(periods) {
			t.Fatalf("periods limit %d: %q, want %q", limit, got, periods)
		}
		for i, p := range periods {
			if limit < 3 && i%5 != 0 {
				continue // limits 1 and 2 on every fifth period: each page is a request (the store's contract walks them all)
			}
			if got := walk("results "+p, "part=results&period="+p, "results", limit); fmt.Sprint(got) != fmt.Sprint(results[p]) {
				t.Fatalf("results of %s limit %d: %q, want %q", p, limit, got, results[p])
			}
		}
		if got := walk("tiers", "part=tiers", "tiers", limit); fmt.Sprint(got) != fmt.Sprint(tiers) {
			t.Fatalf("tiers limit %d: %q, want %q", limit, got, tiers)
		}
	}
	// A full last page says so: next_after null, no empty page after it.
	if p := s.must(200, s.do("GET", "/v1/leagues/lg/export?part=tiers&limit=15", adminKey, nil)).json(t); p["next_after"] != nil || len(p["tiers"].([]any)) != 15 {
		t.Fatalf("15 tiers, limit 15: %v", p)
	}

	// The client's paged Export holds the rows of the whole answer (in
	// its own order: periods with their results, then tiers).
	norm := func(text []byte) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(string(text)), "\n") {
			var x client.LeagueExportLine
			if err := json.Unmarshal([]byte(l), &x); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			b, _ := json.Marshal(x)
			out = append(out, string(b))
		}
		sort.Strings(out)
		return out
	}
	whole := s.must(200, s.do("GET", "/v1/leagues/lg/export", adminKey, nil)).body
	c := client.New(s.url, client.WithKey(adminKey))
	for _, limit := range []int{1, 3, 0} {
		var buf bytes.Buffer
		if err := c.Leagues().Export(context.Background(), "lg", &buf, limit); err != nil {
			t.Fatal(err)
		}
		got, want := norm(buf.Bytes()), norm(whole)
		if len(want) != 20+20*20+15 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("client export limit %d: %d lines, want %d", limit, len(got), len(want))
		}
	}

	for _, c := range []struct {
		query  string
		status int
		code   string
	}{
		{"part=tiers&limit=0", 400, "invalid_argument"},
		{"part=tiers&limit=10001", 400, "invalid_argument"},
		{"part=tiers&limit=x", 400, "invalid_argument"},
		{"part=bogus", 400, "invalid_argument"},
		{"part=results", 400, "invalid_argument"},
		{"part=tiers&period=2026-11-01", 400, "invalid_argument"},
		{"after=amy", 400, "invalid_argument"},
		{"limit=5", 400, "invalid_argument"},
		{"part=tiers&after=%01", 400, "invalid_argument"},
		{"part=tiers&after=" + strings.Repeat("x", 129), 400, "invalid_argument"},
		{"part=periods&after=2026-12-25", 400, "invalid_argument"},
		{"part=results&period=2026-11-30", 404, "not_found"},
		{"part=results&period=2026-11-01&after=%01", 400, "invalid_argument"},
		{"part=tiers&cursor=x", 400, "invalid_argument"},
	} {
		r := s.do("GET", "/v1/leagues/lg/export?"+c.query, adminKey, nil)
		if r.status != c.status || r.errCode(t) != c.code {
			t.Errorf("?%s: %d %s, want %d %s", c.query, r.status, r.body, c.status, c.code)
		}
	}
	if r := s.do("GET", "/v1/leagues/lg/export?part=tiers", "", nil); r.status != 401 && r.status != 403 {
		t.Errorf("without a key: %d %s", r.status, r.body)
	}

	failing.Store(true)
	defer failing.Store(false)
	for _, q := range []string{"part=periods", "part=results&period=2026-11-01", "part=tiers", "part=tiers&after=amy", ""} {
		r := s.do("GET", "/v1/leagues/lg/export?"+q, adminKey, nil)
		if r.status != 503 || r.errCode(t) != "unavailable" {
			t.Errorf("?%s while the store fails: %d %s", q, r.status, r.body)
		}
	}
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestLeagueExportSettledMeanwhile: a period settled (here: restored)
// between the client's listing of the periods and the end of its tiers
// makes Export fail with ErrLeagueSettled, after writing; the next
// Export, undisturbed, holds the new period.
func TestLeagueExportSettledMeanwhile(t *testing.T) {
	s := newSpecServerAt(t, nil)
	leagueExportFixture(t, s)
	var once sync.Once
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Query().Get("part") == "tiers" {
			once.Do(func() {
				s.must(200, s.do("POST", "/v1/leagues/lg/restore", adminKey, `{"periods":[{"period":"2026-11-25","start":"2026-11-25T00:00:00Z",
					"settled_at":"2026-11-26T00:00:01Z","players":1,"promoted":0,"relegated":0,
					"results":[{"player":"late","tier":"low","cohort":0,"rank":1,"outcome":"stayed","new_tier":"low"}]}]}`))
			})
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := client.New(s.url, client.WithKey(adminKey), client.WithHTTPClient(hc))
	var buf bytes.Buffer
	if err := c.Leagues().Export(context.Background(), "lg", &buf, 7); !errors.Is(err, client.ErrLeagueSettled) {
		t.Fatalf("Export while a period settles: %v", err)
	}
	buf.Reset()
	if err := c.Leagues().Export(context.Background(), "lg", &buf, 7); err != nil || !strings.Contains(buf.String(), `"period":"2026-11-25","player":"late"`) {
		t.Fatalf("Export again: %v", err)
	}
}
