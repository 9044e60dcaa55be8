package http_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/stream"
)

// Webhook endpoints through the API: the secret shows once (and again at
// a rotation), never in a list or a read; every string and list is
// bounded, and bad input is a 4xx JSON error.
func TestWebhookEndpoints(t *testing.T) {
	s := newServer(t)
	m := s.must(201, s.do("POST", "/v1/webhooks", adminKey, `{"url":"https://hooks.example.com/a","types":["leader.changed"]}`)).json(t)
	id, secret := m["id"].(string), m["secret"].(string)
	if !strings.HasPrefix(id, "wh_") || !strings.HasPrefix(secret, "whsec_") || m["prefix"] != "" || m["disabled"] != false {
		t.Fatalf("created %v", m)
	}
	for _, path := range []string{"/v1/webhooks", "/v1/webhooks/" + id} {
		if body := string(s.must(200, s.do("GET", path, adminKey, nil)).body); strings.Contains(body, "whsec_") {
			t.Fatalf("GET %s shows a secret: %s", path, body)
		}
	}
	m = s.must(200, s.do("PATCH", "/v1/webhooks/"+id, adminKey, `{"prefix":"weekly-"}`)).json(t)
	if m["prefix"] != "weekly-" || m["url"] != "https://hooks.example.com/a" || m["secret"] != nil {
		t.Fatalf("updated %v", m)
	}
	m = s.must(200, s.do("POST", "/v1/webhooks/"+id+"/rotate", adminKey, nil)).json(t)
	if m["secret"] == secret || !strings.HasPrefix(m["secret"].(string), "whsec_") {
		t.Fatalf("rotated %v", m)
	}
	long := strings.Repeat("a", 2100)
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"LongURL", "POST", "/v1/webhooks", `{"url":"https://example.com/` + long + `","types":["leader.changed"]}`, 400, "invalid_argument"},
		{"ManyTypes", "POST", "/v1/webhooks", `{"url":"https://example.com/","types":["leader.changed","personal_best","tournament.settled","board.created","board.deleted","leader.changed"]}`, 400, "invalid_argument"},
		{"NoURL", "POST", "/v1/webhooks", `{"types":["leader.changed"]}`, 400, "invalid_argument"},
		{"UnknownField", "POST", "/v1/webhooks", `{"url":"https://example.com/","types":["leader.changed"],"secret":"x"}`, 400, ""},
		{"LongPrefix", "PATCH", "/v1/webhooks/" + id, `{"prefix":"` + long + `"}`, 400, "invalid_argument"},
		{"PrivateURL", "PATCH", "/v1/webhooks/" + id, `{"url":"http://192.168.0.10/hook"}`, 400, "invalid_argument"},
		{"LongID", "GET", "/v1/webhooks/" + long, "", 400, "invalid_argument"},
		{"Unknown", "GET", "/v1/webhooks/wh_nope", "", 404, "not_found"},
		{"LongEvent", "POST", "/v1/webhooks/" + id + "/redeliver", `{"event":"` + long + `"}`, 400, "invalid_argument"},
		{"BadRange", "POST", "/v1/webhooks/" + id + "/redeliver", `{"from":"2026-12-02T00:00:00Z","to":"2026-12-01T00:00:00Z"}`, 400, "invalid_argument"},
		{"BadTime", "POST", "/v1/webhooks/" + id + "/redeliver", `{"from":"yesterday","to":"2026-12-01T00:00:00Z"}`, 400, "invalid_argument"},
		{"BadStatus", "GET", "/v1/webhooks/" + id + "/deliveries?status=lost", "", 400, "invalid_argument"},
		{"NotAdmin", "GET", "/v1/webhooks", "", 401, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := adminKey
			if c.name == "NotAdmin" {
				key = ""
			}
			var body any
			if c.body != "" {
				body = c.body
			}
			r := s.do(c.method, c.path, key, body)
			if r.status != c.status {
				t.Fatalf("%s %s = %d %s, want %d", c.method, c.path, r.status, r.body, c.status)
			}
			if c.code != "" && r.errCode(t) != c.code {
				t.Fatalf("code %s, want %s", r.errCode(t), c.code)
			}
		})
	}
	s.must(204, s.do("DELETE", "/v1/webhooks/"+id, adminKey, nil))
	s.must(404, s.do("GET", "/v1/webhooks/"+id, adminKey, nil))
}

// A board change whose webhook event cannot be stored (a trigger makes the
// outbox refuse rows) is answered 503 unavailable and changes nothing: the
// event rides the board's transaction. No event is ever stored, so nothing
// is delivered (the endpoint's host is not resolved).
func TestWebhookBoardEventFails(t *testing.T) {
	var path string
	s := newServerAt(t, stream.Config{}, false, nil, sqlite.Options{Sync: "normal"}, func(p string) { path = p })
	body := `{"keys":[{"name":"score","order":"desc"}],"mode":"best","public":true}`
	s.must(201, s.do("PUT", "/v1/boards/kept", adminKey, body)) // before any endpoint: no event
	s.must(201, s.do("POST", "/v1/webhooks", adminKey, `{"url":"https://hooks.example.com/a","types":["board.created","board.deleted"]}`))
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TRIGGER outbox_fault BEFORE INSERT ON webhook_events BEGIN SELECT RAISE(ABORT, 'injected outbox fault'); END"); err != nil {
		t.Fatal(err)
	}
	if r := s.must(503, s.do("PUT", "/v1/boards/made", adminKey, body)); r.errCode(t) != "unavailable" {
		t.Fatalf("PUT: code %s, want unavailable", r.errCode(t))
	}
	s.must(404, s.do("GET", "/v1/boards/made", adminKey, nil))
	if r := s.must(503, s.do("DELETE", "/v1/boards/kept", adminKey, nil)); r.errCode(t) != "unavailable" {
		t.Fatalf("DELETE: code %s, want unavailable", r.errCode(t))
	}
	s.must(200, s.do("GET", "/v1/boards/kept", adminKey, nil))
	var n int
	if err := db.QueryRow("SELECT count(*) FROM webhook_events").Scan(&n); err != nil || n != 0 {
		t.Fatalf("webhook events stored: %d, %v", n, err)
	}
}
