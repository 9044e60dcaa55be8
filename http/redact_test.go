package http

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestErrorLogRedacts: what net/http logs through ErrorLog, such as the
// value of a panic that quotes a request, never shows an API key.
func TestErrorLogRedacts(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, nil))
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic("cannot serve " + r.URL.String() + " for " + r.Header.Get("Authorization"))
	}))
	ts.Config.ErrorLog = ErrorLog(l)
	ts.Start()
	defer ts.Close()
	req, _ := http.NewRequest("GET", ts.URL+"/v1/stream?limit=5&key=pdm_Sup3rSecret-1&KEY=other-secret", nil)
	req.Header.Set("Authorization", "Bearer admin-secret-2")
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
	ts.Close() // waits for the handler, so the log line is written
	out := buf.String()
	if !strings.Contains(out, "panic serving") || !strings.Contains(out, "limit=5&key=REDACTED&KEY=REDACTED") || !strings.Contains(out, "Bearer REDACTED") {
		t.Fatalf("the panic was not logged as expected: %s", out)
	}
	for _, secret := range []string{"Sup3rSecret", "other-secret", "admin-secret-2"} {
		if strings.Contains(out, secret) {
			t.Fatalf("%s reached the log: %s", secret, out)
		}
	}
	if got := redactText("token pdm_AbCd_9-x in text"); got != "token pdm_REDACTED in text" {
		t.Fatalf("a bare podium secret: %q", got)
	}
}

// TestInternalErrorLogRedacts: an error from beneath the stores (a 503,
// logged as a storage failure) is logged with its query, less the secrets,
// and never with the Authorization header.
func TestInternalErrorLogRedacts(t *testing.T) {
	var buf bytes.Buffer
	s := &Server{log: slog.New(slog.NewTextHandler(&buf, nil))}
	r := httptest.NewRequest("GET", "/v1/stream?limit=5&k%65y=url-secret&last_event_id=a.1", nil)
	r.Header.Set("Authorization", "Bearer header-secret")
	w := httptest.NewRecorder()
	s.writeError(w, r, errors.New("disk on fire"))
	out := buf.String()
	if w.Code != 503 || strings.Contains(w.Body.String(), "disk on fire") {
		t.Fatalf("answer: %d %s", w.Code, w.Body)
	}
	if !strings.Contains(out, "limit=5&k%65y=REDACTED&last_event_id=a.1") || !strings.Contains(out, "disk on fire") {
		t.Fatalf("log line: %s", out)
	}
	if strings.Contains(out, "url-secret") || strings.Contains(out, "header-secret") {
		t.Fatalf("a secret reached the log: %s", out)
	}
}
