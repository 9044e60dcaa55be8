package webhooks_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium/webhooks"
)

var testKey, _ = webhooks.ParseSecret(vecSecret)

// The receiver verifies a delivery with the published snippet (Verify).
func TestClientSigned(t *testing.T) {
	got := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- webhooks.Verify(vecSecret, r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"),
			r.Header.Get("webhook-signature"), body, time.Now(), 0)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	c := webhooks.NewClient(webhooks.Guard{AllowPrivate: true}, 0)
	res := c.Send(context.Background(), srv.URL, [][]byte{testKey}, webhooks.Message{ID: "evt_1", Body: []byte(`{"a":1}`)}, time.Now())
	if res.Err != nil || res.Status != http.StatusNoContent {
		t.Fatalf("Send = %+v", res)
	}
	if err := <-got; err != nil {
		t.Fatalf("receiver's Verify = %v", err)
	}
}

// Loopback is refused at dial time, also behind a name (as a rebound
// name would resolve), and nothing reaches the receiver.
func TestClientRefusesLoopback(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	c := webhooks.NewClient(webhooks.Guard{}, 0)
	for _, u := range []string{srv.URL, "http://localhost:" + port + "/"} {
		res := c.Send(context.Background(), u, [][]byte{testKey}, webhooks.Message{ID: "evt_1", Body: []byte(`{}`)}, time.Now())
		if res.Err == nil || !strings.Contains(res.Err.Error(), "loopback") {
			t.Errorf("Send(%s) = %+v, want a loopback refusal", u, res)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("receiver got %d requests", n)
	}
}

// A redirect is an error and is not followed; a long error body is cut.
func TestClientRedirectAndBody(t *testing.T) {
	var followed atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/target", func(http.ResponseWriter, *http.Request) { followed.Add(1) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte(strings.Repeat("x", 1<<20)))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := webhooks.NewClient(webhooks.Guard{AllowPrivate: true}, 0)
	res := c.Send(context.Background(), srv.URL+"/moved", [][]byte{testKey}, webhooks.Message{ID: "e", Body: []byte(`{}`)}, time.Now())
	if res.Err == nil || res.Status != http.StatusTemporaryRedirect || followed.Load() != 0 {
		t.Fatalf("redirect: %+v, followed %d", res, followed.Load())
	}
	res = c.Send(context.Background(), srv.URL+"/big", [][]byte{testKey}, webhooks.Message{ID: "e", Body: []byte(`{}`)}, time.Now())
	if res.Err == nil || res.Status != http.StatusBadGateway || len(res.Err.Error()) > 300 {
		t.Fatalf("big body: status %d, error of %d bytes", res.Status, len(res.Err.Error()))
	}
}

// A receiver that never answers costs one timeout, reported as such.
func TestClientTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c := webhooks.NewClient(webhooks.Guard{AllowPrivate: true}, 50*time.Millisecond)
	res := c.Send(context.Background(), srv.URL, [][]byte{testKey}, webhooks.Message{ID: "e", Body: []byte(`{}`)}, time.Now())
	if res.Err == nil || !strings.Contains(res.Err.Error(), "timeout") || strings.Contains(res.Err.Error(), srv.URL) {
		t.Fatalf("Send to a hanging receiver = %+v", res)
	}
}
