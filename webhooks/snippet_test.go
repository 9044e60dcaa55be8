package webhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium/webhooks"
)

// verify is docs/API.md's Go snippet, as published there (keep them the
// same): a receiver that copies it verifies podium's deliveries.
func verify(secret string, h http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	ts, terr := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	if err != nil || terr != nil || math.Abs(time.Since(time.Unix(ts, 0)).Seconds()) > 300 {
		return false
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.%s", h.Get("webhook-id"), ts, body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}

func TestPublishedSnippet(t *testing.T) {
	secret := webhooks.NewSecret()
	key, _ := webhooks.ParseSecret(secret)
	other, _ := webhooks.ParseSecret(webhooks.NewSecret())
	got := make(chan bool, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- verify(secret, r.Header, body)
	}))
	defer srv.Close()
	c := webhooks.NewClient(webhooks.Guard{AllowPrivate: true}, 0)
	for _, tc := range []struct {
		name string
		keys [][]byte
		want bool
	}{{"Signed", [][]byte{key}, true}, {"Rotating", [][]byte{other, key}, true}, {"OtherKey", [][]byte{other}, false}} {
		c.Send(context.Background(), srv.URL, tc.keys, webhooks.Message{ID: "evt_1", Body: []byte(`{"id":"evt_1"}`)}, time.Now())
		if ok := <-got; ok != tc.want {
			t.Errorf("%s: the snippet says %v, want %v", tc.name, ok, tc.want)
		}
	}
}
