package http_test

import (
	"strings"
	"testing"
)

// TestBoardUpdateKeepsStoredEntries replays the reproduction: a sum
// board with an entry may not switch to daily resets (409, the stored "all"
// period would drop out of view), a PUT that leaves reset out keeps the
// board's cadence, and the next score adds to the stored total.
func TestBoardUpdateKeepsStoredEntries(t *testing.T) {
	s := newServer(t)
	s.mkBoard("s", `{"keys":[{"name":"points","order":"desc"}],"mode":"sum","public":true}`)
	s.must(200, s.do("POST", "/v1/boards/s/scores", adminKey, `{"player":"alice","score":10}`))
	r := s.do("PUT", "/v1/boards/s", adminKey, `{"keys":[{"name":"points","order":"desc"}],"mode":"sum","reset":{"every":"day"}}`)
	if r.status != 409 || r.errCode(t) != "conflict" {
		t.Fatalf("cadence change on a board with entries: %d %s", r.status, r.body)
	}
	got := s.must(200, s.do("PUT", "/v1/boards/s", adminKey, `{"title":"Points"}`)).json(t)
	if got["title"] != "Points" || got["mode"] != "sum" || got["public"] != true || got["reset"].(map[string]any)["every"] != "none" {
		t.Fatalf("a PUT of the title changed other fields: %v", got)
	}
	res := s.must(200, s.do("POST", "/v1/boards/s/scores", adminKey, `{"player":"alice","score":5}`)).json(t)
	if keys := res["entry"].(map[string]any)["keys"].([]any); keys[0] != float64(15) {
		t.Fatalf("sum after the updates: %v, want 15", keys)
	}

	// A daily board updated without reset stays daily.
	s.mkBoard("d", `{"keys":[{"name":"points","order":"desc"}],"reset":{"every":"day","tz":"Asia/Shanghai"}}`)
	got = s.must(200, s.do("PUT", "/v1/boards/d", adminKey, `{"keys":[{"name":"points","order":"desc"}],"public":true}`)).json(t)
	if rs := got["reset"].(map[string]any); rs["every"] != "day" || rs["tz"] != "Asia/Shanghai" {
		t.Fatalf("a PUT without reset changed the cadence: %v", rs)
	}
	// A bad field is refused before anything changes.
	r = s.do("PUT", "/v1/boards/d", adminKey, `{"mode":"most"}`)
	if r.status != 400 {
		t.Fatalf("bad mode: %d %s", r.status, r.body)
	}
	// A new board still needs its keys.
	r = s.do("PUT", "/v1/boards/n", adminKey, `{"title":"no keys"}`)
	if r.status != 400 || r.errCode(t) != "invalid_argument" {
		t.Fatalf("new board without keys: %d %s", r.status, r.body)
	}
}

// TestKeyLabelsAndFormats: a key's label and format are stored and shown,
// a bad one is refused with 400 and changes nothing, and changing them on a
// board with entries keeps the entries (they do not rank).
func TestKeyLabelsAndFormats(t *testing.T) {
	s := newServer(t)
	s.mkBoard("m", `{"keys":[{"name":"time_ms","order":"asc","label":"Time","format":"duration_ms"},{"name":"bbbv","order":"desc"}],"public":true}`)
	s.must(200, s.do("POST", "/v1/boards/m/scores", adminKey, `{"player":"alice","keys":[41234,120]}`))
	got := s.must(200, s.do("GET", "/v1/boards/m", "", "")).json(t)
	k0 := got["keys"].([]any)[0].(map[string]any)
	if k0["label"] != "Time" || k0["format"] != "duration_ms" {
		t.Fatalf("first key: %v", k0)
	}
	if _, ok := got["keys"].([]any)[1].(map[string]any)["format"]; ok {
		t.Fatalf("a key without a format shows one: %v", got["keys"])
	}
	for _, bad := range []string{
		`{"keys":[{"name":"time_ms","order":"asc","format":"hours"},{"name":"bbbv","order":"desc"}]}`,
		`{"keys":[{"name":"time_ms","order":"asc","label":"` + string(make([]byte, 0)) + `T\u0007"},{"name":"bbbv","order":"desc"}]}`,
		`{"keys":[{"name":"time_ms","order":"asc","label":"` + strings.Repeat("x", 65) + `"},{"name":"bbbv","order":"desc"}]}`,
	} {
		r := s.do("PUT", "/v1/boards/m", adminKey, bad)
		if r.status != 400 || r.errCode(t) != "invalid_argument" {
			t.Fatalf("PUT %s: %d %s", bad, r.status, r.body)
		}
	}
	got = s.must(200, s.do("PUT", "/v1/boards/m", adminKey,
		`{"keys":[{"name":"time_ms","order":"asc","label":"Clear time","format":"duration_ms"},{"name":"bbbv","order":"desc","label":"3BV","format":"integer"}]}`)).json(t)
	if k := got["keys"].([]any)[1].(map[string]any); k["label"] != "3BV" || k["format"] != "integer" {
		t.Fatalf("after the relabel: %v", got["keys"])
	}
	page := s.must(200, s.do("GET", "/v1/boards/m/entries", "", "")).json(t)
	if es := page["entries"].([]any); len(es) != 1 || es[0].(map[string]any)["player"] != "alice" {
		t.Fatalf("a relabel lost the entries: %v", page)
	}
}
