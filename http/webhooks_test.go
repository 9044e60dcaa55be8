package http_test

import (
	"strings"
	"testing"
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
