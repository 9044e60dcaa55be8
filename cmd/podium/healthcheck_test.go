package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// podium healthcheck, the image's HEALTHCHECK: 0 for a ready server (found
// through PODIUM_ADDR or --addr, a wildcard host meaning this machine), 1
// for one that answers 503, does not answer or answers too late, 2 for a
// mistake on the command line.
func TestHealthcheck(t *testing.T) {
	m, err := openMain(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(m.Addr())

	t.Run("Ready", func(t *testing.T) {
		code, out, errs := runCLI(t, "healthcheck", "--addr", ":"+port)
		if code != 0 || !strings.Contains(out, "/readyz: 200 ready") {
			t.Fatalf("healthcheck of a ready server: %d %q %q", code, out, errs)
		}
	})
	t.Run("Environment", func(t *testing.T) {
		t.Setenv("PODIUM_ADDR", "0.0.0.0:"+port)
		if code, out, errs := runCLI(t, "healthcheck"); code != 0 || !strings.Contains(out, "127.0.0.1:"+port) {
			t.Fatalf("healthcheck with PODIUM_ADDR: %d %q %q", code, out, errs)
		}
	})
	t.Run("Unavailable", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/readyz" {
				http.NotFound(w, r)
				return
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"status":"unavailable","checks":{"indexes":"loading","storage":"ok","writes":"ok"}}`))
		}))
		defer srv.Close()
		code, out, errs := runCLI(t, "healthcheck", "--addr", strings.TrimPrefix(srv.URL, "http://"))
		if code != 1 || out != "" || !strings.Contains(errs, "503 unavailable (indexes: loading)") {
			t.Fatalf("healthcheck of a loading server: %d %q %q", code, out, errs)
		}
	})
	t.Run("Slow", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(release)
		start := time.Now()
		code, _, errs := runCLI(t, "healthcheck", "--addr", strings.TrimPrefix(srv.URL, "http://"), "--timeout", "200ms")
		if code != 1 || time.Since(start) > 5*time.Second || !strings.Contains(errs, "deadline exceeded") {
			t.Fatalf("healthcheck of a server that does not answer: %d %q after %v", code, errs, time.Since(start))
		}
	})
	t.Run("NoServer", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		if code, _, errs := runCLI(t, "healthcheck", "--addr", addr); code != 1 || !strings.Contains(errs, "refused") {
			t.Fatalf("healthcheck with nothing listening: %d %q", code, errs)
		}
	})
	t.Run("Usage", func(t *testing.T) {
		for _, args := range [][]string{{"--addr", "8080"}, {"--timeout", "0s"}, {"--timeout", "soon"}, {"extra"}} {
			if code, _, errs := runCLI(t, append([]string{"healthcheck"}, args...)...); code != 2 || !strings.Contains(errs, "podium healthcheck:") {
				t.Errorf("healthcheck %v: %d %q", args, code, errs)
			}
		}
	})
}
