package http_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestContestExport: the standings export equals the standings read, in
// CSV and JSON Lines; hidden teams only with include_hidden in the live
// view; bad parameters are refused before anything is written.
func TestContestExport(t *testing.T) {
	s, _ := newContestServer(t)
	s.must(201, s.do("PUT", "/v1/contests/ctf:x", adminKey, `{"title":"X","start":"2026-11-30T11:00:00Z","end":"2026-11-30T13:00:00Z","public":true}`))
	s.must(201, s.do("PUT", "/v1/contests/ctf:x/challenges/web", adminKey, `{"scoring":{"value":300}}`))
	s.must(201, s.do("PUT", "/v1/contests/ctf:x/challenges/pwn", adminKey, `{"scoring":{"value":200}}`))
	s.must(200, s.do("PUT", "/v1/players/staff", adminKey, `{"name":"Organisers","hidden":true}`))
	s.must(200, s.do("PUT", "/v1/players/alice", adminKey, `{"name":"Team \"A\", first"}`))
	s.clock.Add(90 * time.Minute)
	for _, a := range [][2]string{{"alice", "web"}, {"bob", "pwn"}, {"staff", "web"}, {"carol", "web"}, {"carol", "pwn"}} {
		s.clock.Add(time.Minute)
		s.must(200, s.do("POST", "/v1/contests/ctf:x/attempts", adminKey, fmt.Sprintf(`{"team":%q,"challenge":%q,"correct":true}`, a[0], a[1])))
	}
	std := s.must(200, s.do("GET", "/v1/contests/ctf:x/standings", "", nil)).json(t)

	r := s.must(200, s.do("GET", "/v1/contests/ctf:x/export", "", nil))
	if r.header.Get("Content-Type") != "text/csv; charset=utf-8" || r.header.Get("Content-Disposition") != `attachment; filename="ctf_x-standings-public.csv"` {
		t.Fatalf("headers: %v", r.header)
	}
	rows, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, row := range rows {
		got = append(got, strings.Join(row, "|"))
	}
	want = append(want, "rank|team|name|score|solved|last_solve_at")
	for _, v := range std["standings"].([]any) {
		m := v.(map[string]any)
		want = append(want, fmt.Sprintf("%v|%v|%v|%v|%v|%v", m["rank"], m["team"], m["name"], m["score"], m["solved"], m["last_solve_at"]))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) != 4 {
		t.Fatalf("CSV export:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	r = s.must(200, s.do("GET", "/v1/contests/ctf:x/export?format=jsonl&view=live&include_hidden=true", adminKey, nil))
	ls := strings.Split(strings.TrimSpace(string(r.body)), "\n")
	if len(ls) != 1+4+1 || !strings.Contains(ls[0], `"export":"podium.standings"`) || !strings.Contains(ls[0], `"view":"live"`) ||
		ls[len(ls)-1] != `{"end":true,"teams":4}` {
		t.Fatalf("JSON Lines export:\n%s", r.body)
	}
	var staff map[string]any
	for _, l := range ls[1:5] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m["team"] == "staff" {
			staff = m
		}
	}
	if staff == nil || staff["hidden"] != true || staff["rank"] != nil {
		t.Fatalf("the hidden team in the live export: %v", staff)
	}

	for _, c := range []struct {
		path, key string
		status    int
	}{
		{"/v1/contests/ctf:x/export?format=pdf", "", 400},
		{"/v1/contests/ctf:x/export?include_hidden=true", "", 403},
		{"/v1/contests/ctf:x/export?view=live", "", 401},
		{"/v1/contests/nope/export", adminKey, 404},
	} {
		if r := s.do("GET", c.path, c.key, nil); r.status != c.status {
			t.Errorf("GET %s: %d %s, want %d", c.path, r.status, r.body, c.status)
		}
	}
}

// TestContestExportFormulas: team ids and names that a spreadsheet would
// run as formulas get a leading apostrophe in CSV; scores stay numbers.
func TestContestExportFormulas(t *testing.T) {
	s, _ := newContestServer(t)
	s.must(201, s.do("PUT", "/v1/contests/ctf:f", adminKey, `{"title":"F","start":"2026-11-30T11:00:00Z","end":"2026-11-30T13:00:00Z","public":true}`))
	s.must(201, s.do("PUT", "/v1/contests/ctf:f/challenges/web", adminKey, `{"scoring":{"value":300}}`))
	s.must(200, s.do("PUT", "/v1/players/@team", adminKey, `{"name":"=1+2"}`))
	s.clock.Add(90 * time.Minute)
	s.must(200, s.do("POST", "/v1/contests/ctf:f/attempts", adminKey, `{"team":"@team","challenge":"web","correct":true}`))
	r := s.must(200, s.do("GET", "/v1/contests/ctf:f/export", "", nil))
	rows, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || strings.Join(rows[1][:5], "|") != "1|'@team|'=1+2|300|1" {
		t.Fatalf("CSV rows: %q", rows)
	}
	r = s.must(200, s.do("GET", "/v1/contests/ctf:f/export?format=jsonl", "", nil))
	if !strings.Contains(string(r.body), `"team":"@team","name":"=1+2"`) {
		t.Fatalf("JSON Lines keeps the text exact:\n%s", r.body)
	}
}
