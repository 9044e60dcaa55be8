package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBodyTimeoutFlag: --body-timeout (here from PODIUM_BODY_TIMEOUT)
// reaches the server: a body that stalls is cut within it.
func TestBodyTimeoutFlag(t *testing.T) {
	t.Setenv("PODIUM_BODY_TIMEOUT", "200ms")
	var c Config
	fs := newFlagSet("serve", "", io.Discard)
	c.flags(fs)
	if err := parse(fs, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--sync", "normal"}); err != nil {
		t.Fatal(err)
	}
	if c.BodyTimeout != 200*time.Millisecond || c.RequestTimeout != time.Minute {
		t.Fatalf("body timeout %s, request timeout %s", c.BodyTimeout, c.RequestTimeout)
	}
	c.AdminKey = "admin-secret"
	m := &Main{Config: c, Stderr: io.Discard}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	conn, err := net.Dial("tcp", m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /v1/scores HTTP/1.1\r\nHost: podium\r\nAuthorization: Bearer admin-secret\r\n"+
		"Content-Length: 5000\r\n\r\n{\"scores\":[")
	// Well under the 10s default: only the flag can make the server cut it.
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(conn)
	if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 408 ") {
		t.Fatalf("stalled body: %v %q", err, b)
	}
}

// TestServerErrorLogRedacts: the HTTP server's own error log (panics, bad
// responses) goes to podium's log without API keys.
func TestServerErrorLogRedacts(t *testing.T) {
	var buf syncBuffer
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: t.TempDir(), Sync: "normal", AdminKey: "admin-secret"}, Stderr: &buf}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.srv.ErrorLog.Printf("http: panic serving 10.0.0.1:1: GET /v1/stream?key=pdm_Leak1 Authorization: Bearer admin-secret")
	out := buf.String()
	if !strings.Contains(out, "key=REDACTED") || strings.Contains(out, "pdm_Leak1") || strings.Contains(out, "Bearer admin-secret") {
		t.Fatalf("server error log: %s", out)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestH2CFlag: --h2c (here from PODIUM_H2C) makes the port answer HTTP/2
// with prior knowledge; without it such a request is not served.
func TestH2CFlag(t *testing.T) {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	for _, on := range []bool{false, true} {
		if on {
			t.Setenv("PODIUM_H2C", "true")
		}
		var c Config
		fs := newFlagSet("serve", "", io.Discard)
		c.flags(fs)
		if err := parse(fs, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--sync", "normal"}); err != nil {
			t.Fatal(err)
		}
		c.AdminKey = "admin-secret"
		m := &Main{Config: c, Stderr: io.Discard}
		if err := m.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		tr := &http.Transport{Protocols: &p}
		res, err := (&http.Client{Transport: tr}).Get(m.URL() + "/healthz")
		if err == nil {
			res.Body.Close()
		}
		tr.CloseIdleConnections()
		m.Close()
		switch {
		case on && (err != nil || res.StatusCode != 200 || res.ProtoMajor != 2):
			t.Fatalf("--h2c: %v %v", err, res)
		case !on && err == nil:
			t.Fatalf("h2c served without --h2c: %d over %s", res.StatusCode, res.Proto)
		}
	}
}
