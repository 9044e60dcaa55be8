package http_test

import (
	"fmt"
	"strings"
	"testing"
)

// POST /v1/boards/{board}/restore: admin only, strict JSON, per-item
// errors, exact entries with their original at, unchanged on repeat,
// refused on boards whose entries are derived.
func TestRestoreEndpoint(t *testing.T) {
	s := newServer(t) // the clock is 2026-11-30T10:00Z
	s.mkBoard("d", `{"keys":[{"name":"points","order":"desc"}],"mode":"sum","reset":{"every":"day"},"public":true}`)
	body := `{"entries":[
		{"period":"2026-11-29","player":"bob","keys":[7],"at":"2026-11-29T08:00:00.123Z","meta":{"map":"x"}},
		{"period":"2026-11-30","player":"amy","keys":[3],"at":"2026-11-30T09:00:00Z"},
		{"period":"2026-11-30","player":"amy","keys":[3],"at":"2026-12-01T09:00:00Z"},
		{"period":"2026-11-30","player":"","keys":[3],"at":"2026-11-30T09:00:00Z"},
		{"period":"2026-11-30","player":"cy","keys":[3,4],"at":"2026-11-30T09:00:00Z"},
		{"period":"2026-11-30","player":"cy","keys":[3],"at":"yesterday"}]}`
	got := s.must(200, s.do("POST", "/v1/boards/d/restore", adminKey, body)).json(t)
	res := got["results"].([]any)
	want := []string{"restored", "restored", "unprocessable", "invalid_argument", "invalid_argument", "invalid_argument"}
	for i, r := range res {
		m := r.(map[string]any)
		st, _ := m["status"].(string)
		if e, ok := m["error"].(map[string]any); ok {
			st = e["code"].(string)
		}
		if st != want[i] {
			t.Fatalf("item %d: %v, want %s", i, m, want[i])
		}
	}
	if fmt.Sprint(got["restored"], got["unchanged"], got["refused"]) != "2 0 4" {
		t.Fatalf("counts: %s", s.do("POST", "/v1/boards/d/restore", adminKey, body).body)
	}
	e := s.must(200, s.do("GET", "/v1/boards/d/entries/bob?period=2026-11-29", "", nil)).json(t)["entry"].(map[string]any)
	if fmt.Sprintf("%v %v %v", e["keys"], e["at"], e["meta"]) != "[7] 2026-11-29T08:00:00.123Z map[map:x]" {
		t.Fatalf("bob's restored entry: %v", e)
	}
	h := s.must(200, s.do("GET", "/v1/boards/d/entries/bob/history", adminKey, nil)).json(t)["items"].([]any)
	if len(h) != 1 || fmt.Sprintf("%v %v %v", h[0].(map[string]any)["kind"], h[0].(map[string]any)["keys"], h[0].(map[string]any)["at"]) != "restore [7] 2026-11-29T08:00:00.123Z" {
		t.Fatalf("bob's history: %v", h)
	}
	again := s.must(200, s.do("POST", "/v1/boards/d/restore", adminKey, body)).json(t)
	if fmt.Sprint(again["restored"], again["unchanged"], again["refused"]) != "0 2 4" {
		t.Fatalf("repeat: %v", again)
	}

	// Permissions: a key without admin, a board-limited admin key for
	// another board, no key.
	sub := s.must(201, s.do("POST", "/v1/keys", adminKey, `{"name":"gs","scopes":["submit","read"]}`)).json(t)["key"].(string)
	other := s.must(201, s.do("POST", "/v1/keys", adminKey, `{"name":"o","scopes":["admin"],"boards":["x:"]}`)).json(t)["key"].(string)
	one := `{"entries":[{"period":"2026-11-30","player":"amy","keys":[9],"at":"2026-11-30T09:00:00Z"}]}`
	s.must(403, s.do("POST", "/v1/boards/d/restore", sub, one))
	s.must(403, s.do("POST", "/v1/boards/d/restore", other, one))
	s.must(401, s.do("POST", "/v1/boards/d/restore", "", one))

	// Strict input: unknown fields, duplicates, wrong types, no entries,
	// too many; an unknown board; a board an aggregate... here best_k.
	for _, bad := range []string{
		`{"entries":[{"period":"2026-11-30","player":"amy","keys":[9],"at":"2026-11-30T09:00:00Z","seq":3}]}`,
		`{"entries":[],"entries":[]}`,
		`{"entries":[{"period":"2026-11-30","player":"amy","keys":["9"],"at":"2026-11-30T09:00:00Z"}]}`,
		`{}`,
		`{"entries":[` + strings.TrimSuffix(strings.Repeat(`{"period":"2026-11-30","player":"amy","keys":[9],"at":"2026-11-30T09:00:00Z"},`, 1001), ",") + `]}`,
		`[]`,
	} {
		r := s.do("POST", "/v1/boards/d/restore", adminKey, bad)
		if r.status != 400 && r.status != 413 {
			t.Fatalf("%.80s: %d %s", bad, r.status, r.body)
		}
		r.errCode(t)
	}
	s.must(404, s.do("POST", "/v1/boards/nope/restore", adminKey, one))
	s.mkBoard("k", `{"keys":[{"name":"points","order":"desc"}],"mode":"best_k","keep":3,"public":true}`)
	if c := s.must(409, s.do("POST", "/v1/boards/k/restore", adminKey, `{"entries":[{"period":"all","player":"amy","keys":[9],"at":"2026-11-30T09:00:00Z"}]}`)).errCode(t); c != "conflict" {
		t.Fatal(c)
	}
	// Nothing above changed amy's entry.
	a := s.must(200, s.do("GET", "/v1/boards/d/entries/amy", "", nil)).json(t)["entry"].(map[string]any)
	if fmt.Sprint(a["keys"]) != "[3]" {
		t.Fatalf("amy: %v", a)
	}
}
