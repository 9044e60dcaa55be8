package http_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/ratelimit"
	"github.com/podiumhq/podium/stream"
)

// newLimitedServer starts a server whose limiter runs on the server's fake
// clock with limits rl (Limiter filled in) and trusted proxies.
func newLimitedServer(t *testing.T, rl podiumhttp.RateLimits, trusted string, sc stream.Config) *server {
	t.Helper()
	var s *server
	proxies, err := podiumhttp.ParseTrustedProxies(trusted)
	if err != nil {
		t.Fatal(err)
	}
	s = newServerOpts(t, sc, false, func(c *podiumhttp.Config) {
		rl.Limiter = ratelimit.New(ratelimit.Config{Now: func() time.Time { return s.clock.Now() },
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		c.RateLimits = &rl
		c.TrustedProxies = proxies
	})
	return s
}

func lim(s string) ratelimit.Limit {
	l, err := ratelimit.ParseLimit(s)
	if err != nil {
		panic(err)
	}
	return l
}

func TestRateLimitSubmit(t *testing.T) {
	s := newLimitedServer(t, podiumhttp.RateLimits{Submit: lim("3/1m"), Boards: map[string]ratelimit.Limit{"tight": lim("1/1m")}}, "", stream.Config{})
	s.mkBoard("free", oneKey)
	s.mkBoard("tight", oneKey)
	for i := range 3 {
		r := s.must(200, s.do("POST", "/v1/boards/free/scores", adminKey, `{"player":"a","keys":[1]}`))
		if p := r.header.Get("RateLimit-Policy"); p != `"submit";q=3;w=60` {
			t.Fatalf("RateLimit-Policy %q", p)
		}
		if got, want := r.header.Get("RateLimit"), `"submit";r=`+string(rune('2'-i))+`;t=`+[]string{"20", "40", "60"}[i]; got != want {
			t.Fatalf("submit %d: RateLimit %q, want %q", i, got, want)
		}
	}
	r := s.must(429, s.do("POST", "/v1/boards/free/scores", adminKey, `{"player":"a","keys":[2]}`))
	if c := r.errCode(t); c != "rate_limited" || r.header.Get("Retry-After") != "20" || r.header.Get("RateLimit") != `"submit";r=0;t=60` {
		t.Fatalf("4th submit: %s %v %s", c, r.header, r.body)
	}
	// The refused submission changed nothing.
	if e := s.must(200, s.do("GET", "/v1/boards/free/entries/a", "", nil)).json(t); e["keys"].([]any)[0].(float64) != 1 {
		t.Fatalf("entry after a refused submission: %v", e)
	}
	// Another board has a bucket of its own, with its override.
	s.must(200, s.do("POST", "/v1/boards/tight/scores", adminKey, `{"player":"a","keys":[1]}`))
	if r := s.must(429, s.do("POST", "/v1/boards/tight/scores", adminKey, `{"player":"a","keys":[1]}`)); r.header.Get("Retry-After") != "60" {
		t.Fatalf("tight board: Retry-After %q", r.header.Get("Retry-After"))
	}
	s.clock.Add(20 * time.Second)
	s.must(200, s.do("POST", "/v1/boards/free/scores", adminKey, `{"player":"a","keys":[3]}`))
	s.must(429, s.do("POST", "/v1/boards/free/scores", adminKey, `{"player":"a","keys":[4]}`))
}

func TestRateLimitAnonymousPerIP(t *testing.T) {
	s := newLimitedServer(t, podiumhttp.RateLimits{Anon: lim("2/1m")}, "127.0.0.1/32", stream.Config{})
	s.mkBoard("pub", oneKey)
	get := func(xff string) resp {
		return s.do("GET", "/v1/boards/pub/entries", "", nil, "X-Forwarded-For", xff)
	}
	s.must(200, get("203.0.113.1"))
	s.must(200, get("203.0.113.1"))
	r := s.must(429, get("203.0.113.1"))
	if r.header.Get("RateLimit-Policy") != `"anon";q=2;w=60` || r.header.Get("Retry-After") != "30" {
		t.Fatalf("anonymous 429: %v", r.header)
	}
	// Behind the trusted proxy, another client has a bucket of its own;
	// the leftmost entries are the client's to forge and are ignored.
	s.must(200, get("203.0.113.1, 203.0.113.2"))
	s.must(200, get("198.51.100.7, 203.0.113.2"))
	s.must(429, get("203.0.113.2"))
	// Requests with a key are not anonymous.
	s.must(200, s.do("GET", "/v1/boards/pub/entries", adminKey, nil, "X-Forwarded-For", "203.0.113.1"))
}

func TestRateLimitIgnoresForwardedForFromUntrustedPeers(t *testing.T) {
	s := newLimitedServer(t, podiumhttp.RateLimits{Anon: lim("2/1m")}, "10.0.0.0/8", stream.Config{})
	s.mkBoard("pub", oneKey)
	for i, xff := range []string{"203.0.113.1", "203.0.113.2", "203.0.113.3"} {
		r := s.do("GET", "/v1/boards/pub/entries", "", nil, "X-Forwarded-For", xff)
		if want := []int{200, 200, 429}[i]; r.status != want {
			t.Fatalf("request %d from 127.0.0.1 claiming %s: %d, want %d", i, xff, r.status, want)
		}
	}
}

func TestRateLimitFailedAuthentications(t *testing.T) {
	s := newLimitedServer(t, podiumhttp.RateLimits{AuthFail: lim("2/1m")}, "", stream.Config{})
	s.mkBoard("pub", oneKey)
	s.must(401, s.do("GET", "/v1/keys", "wrong-1", nil))
	s.must(401, s.do("GET", "/v1/keys", "wrong-2", nil))
	r := s.must(429, s.do("GET", "/v1/keys", "wrong-3", nil))
	if r.header.Get("RateLimit-Policy") != `"auth";q=2;w=60` || r.header.Get("Retry-After") != "30" {
		t.Fatalf("429 after failed authentications: %v", r.header)
	}
	// While the address's bucket is empty even a valid key is refused, so
	// guessing keys gains nothing; requests without credentials go on.
	s.must(429, s.do("GET", "/v1/keys", adminKey, nil))
	s.must(200, s.do("GET", "/v1/boards/pub/entries", "", nil))
	s.clock.Add(30 * time.Second)
	s.must(200, s.do("GET", "/v1/keys", adminKey, nil))
	// Valid keys never spend the bucket.
	for range 5 {
		s.must(200, s.do("GET", "/v1/keys", adminKey, nil))
	}
	s.must(401, s.do("GET", "/v1/keys", "wrong-4", nil))
	s.must(429, s.do("GET", "/v1/keys", "wrong-5", nil))
}

func TestRateLimitReadyzAndOff(t *testing.T) {
	s := newLimitedServer(t, podiumhttp.RateLimits{}, "", stream.Config{})
	s.mkBoard("pub", oneKey)
	r := s.must(200, s.do("GET", "/v1/boards/pub/entries", "", nil))
	if r.header.Get("RateLimit") != "" {
		t.Fatalf("a server without limits sent RateLimit %q", r.header.Get("RateLimit"))
	}
	rz := s.must(200, s.do("GET", "/readyz", "", nil)).json(t)
	if rz["checks"].(map[string]any)["rate_limits"] != "memory" || rz["status"] != "ready" {
		t.Fatalf("readyz: %v", rz)
	}
}

// TestStreamCapPerIPBehindProxy: behind a trusted proxy the per-IP stream
// cap counts the clients, not the proxy.
func TestStreamCapPerIPBehindProxy(t *testing.T) {
	s := newLimitedServer(t, podiumhttp.RateLimits{}, "127.0.0.0/8", stream.Config{MaxPerIP: 1})
	s.mkBoard("cap", oneKey)
	open := func(xff string) int {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/boards/cap/stream", nil)
		req.Header.Set("X-Forwarded-For", xff)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res.StatusCode
	}
	if a, b, c := open("203.0.113.1"), open("203.0.113.2"), open("203.0.113.1"); a != 200 || b != 200 || c != 429 {
		t.Fatalf("streams from two clients behind one proxy (cap 1 each): %d %d %d, want 200 200 429", a, b, c)
	}
}

// TestRateLimitSessionsSharePlayerBucket: a player's sessions are charged
// to the player, so a second device does not double the player's limit,
// and another player has a bucket of their own.
func TestRateLimitSessionsSharePlayerBucket(t *testing.T) {
	s := newLimitedServer(t, podiumhttp.RateLimits{Submit: lim("2/1m")}, "", stream.Config{})
	s.mkBoard("open", sessionBoard)
	phone, _ := s.issue("alice", "phone", adminKey)
	laptop, _ := s.issue("alice", "laptop", adminKey)
	bob, _ := s.issue("bob", "phone", adminKey)
	s.must(200, s.do("POST", "/v1/boards/open/scores", phone, `{"player":"alice","keys":[1]}`))
	s.must(200, s.do("POST", "/v1/boards/open/scores", laptop, `{"player":"alice","keys":[2]}`))
	if r := s.must(429, s.do("POST", "/v1/boards/open/scores", phone, `{"player":"alice","keys":[3]}`)); r.header.Get("RateLimit-Policy") != `"submit";q=2;w=60` {
		t.Fatalf("third submission of alice: %v", r.header)
	}
	s.must(200, s.do("POST", "/v1/boards/open/scores", bob, `{"player":"bob","keys":[1]}`))
}

// TestQuotaRefusalHeaders: a submission refused by the board's quota,
// while the rate limit has room, carries rate-limit headers that describe
// the quota that refused it (spent, resetting with Retry-After), not the
// submit bucket's room ("submit";r=5999 beside a 429). A batch's quota
// refusal is an item error in a 200: its headers stay the bucket's.
func TestQuotaRefusalHeaders(t *testing.T) {
	s := newLimitedServer(t, podiumhttp.RateLimits{Submit: lim("6000/1m")}, "", stream.Config{})
	// 10:00 UTC: the day's window has 14 hours left.
	s.must(201, s.do("PUT", "/v1/boards/daily", adminKey, `{"keys": [{"name": "t", "order": "asc"}], "reset": {"every": "day"}, "quota": {"max": 2}}`))
	for i := range 2 {
		r := s.must(200, s.do("POST", "/v1/boards/daily/scores", adminKey, `{"player":"a","keys":[5]}`))
		if got := r.header.Get("RateLimit"); got != `"submit";r=`+[]string{"5999", "5998"}[i]+`;t=1` {
			t.Fatalf("accepted submission %d: RateLimit %q", i, got)
		}
	}
	r := s.must(429, s.do("POST", "/v1/boards/daily/scores", adminKey, `{"player":"a","keys":[4]}`))
	if c := r.errCode(t); c != "quota_exceeded" {
		t.Fatalf("over the quota: %s", r.body)
	}
	for h, want := range map[string]string{
		"Retry-After":      "50400",
		"RateLimit-Policy": `"quota";q=2;w=86400`,
		"RateLimit":        `"quota";r=0;t=50400`,
	} {
		if got := r.header.Values(h); len(got) != 1 || got[0] != want {
			t.Errorf("quota refusal: %s %q, want %q", h, got, want)
		}
	}
	r = s.must(200, s.do("POST", "/v1/scores", adminKey, `{"scores": [{"board": "daily", "player": "a", "keys": [3]}]}`))
	if !strings.Contains(string(r.body), "quota_exceeded") || !strings.HasPrefix(r.header.Get("RateLimit"), `"submit";`) {
		t.Fatalf("batch over the quota: %v %s", r.header, r.body)
	}
}
