package main

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/podiumhq/podium/internal/pgtest"
)

// TestRedisRateStoreTimeout: --rate-store-timeout bounds a decision on
// Redis too. The Redis limiter was opened with its own 200 ms default
// whatever the flag said, so under load its commands timed out and each
// node decided alone though the flag allowed more (TestClusterRateLimits
// passes 1m so that this never happens; CI saw its redis part refuse a
// submission under load).
func TestRedisRateStoreTimeout(t *testing.T) {
	redisURL := os.Getenv("PODIUM_TEST_REDIS")
	if redisURL == "" {
		t.Skip("PODIUM_TEST_REDIS is not set; skipping the Redis rate limit timeout test")
	}
	dsn, schema := pgtest.Schema(t)
	m := &Main{Config: Config{Addr: "127.0.0.1:0", DB: dsn, Redis: redisURL, Env: schema, AdminKey: "admin-secret", Shutdown: time.Second,
		MaxBody: 1 << 20, RateLimit: RateConfig{Submit: "100/1m", Key: "off", Anon: "off", AuthFail: "off", StoreTimeout: 7 * time.Second}},
		Stderr: io.Discard}
	if err := m.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if m.rates == nil || m.rates.redis == nil {
		t.Fatal("no Redis rate limiter with --redis")
	}
	if got := m.rates.redis.Timeout(); got != 7*time.Second {
		t.Fatalf("the Redis limiter's command timeout is %s, want --rate-store-timeout's 7s", got)
	}
}
