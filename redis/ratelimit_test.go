package redis_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium/internal/testredis"
	"github.com/podiumhq/podium/ratelimit"
	"github.com/podiumhq/podium/ratelimit/ratelimittest"
	"github.com/podiumhq/podium/redis"
)

func TestLimiterContract(t *testing.T) {
	url := os.Getenv("PODIUM_TEST_REDIS")
	if url == "" {
		t.Skip("PODIUM_TEST_REDIS is not set; set it to a redis:// URL to run the Redis rate limit contract")
	}
	// A unique env: this test's keys never meet another's, and expire by
	// their TTL (nothing is flushed).
	ratelimittest.Run(t, func(t *testing.T) ratelimit.Store {
		l, err := redis.OpenLimiter(url, env(t), 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	})
}

// TestLimiterFallsBackWhileRedisIsDown: with its Redis killed, a limiter
// keeps deciding (in process), says so once in the log and in Status, and
// returns to Redis, whose buckets it then shares again, once Redis is back.
func TestLimiterFallsBackWhileRedisIsDown(t *testing.T) {
	srv := testredis.Start(t, os.Getenv("PODIUM_TEST_REDIS") != "")
	store, err := redis.OpenLimiter(srv.URL(), env(t), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var logs bytes.Buffer
	now := time.Now()
	l := ratelimit.New(ratelimit.Config{Shared: store, Name: "redis", Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Now: func() time.Time { return now }})
	lim := ratelimit.Limit{Quota: 2, Window: time.Hour}
	ctx := context.Background()
	if r := l.Take(ctx, "submit", "k", lim, 1); !r.Allowed || r.Remaining != 1 {
		t.Fatalf("first take: %+v", r)
	}
	srv.Stop()
	for i := range 3 {
		t0 := time.Now()
		r := l.Take(ctx, "submit", "k", lim, 1)
		if d := time.Since(t0); d > time.Second {
			t.Fatalf("a take while Redis is down took %s", d)
		}
		if r.Allowed != (i < 2) {
			t.Fatalf("take %d while down: %+v (the in-process buckets start full)", i, r)
		}
	}
	if l.Status() == "" {
		t.Fatal("Status is empty while Redis is down")
	}
	srv.Restart() // empty: the bucket starts over
	now = now.Add(2 * time.Second)
	if r := l.Take(ctx, "submit", "k", lim, 1); !r.Allowed || r.Remaining != 1 {
		t.Fatalf("after Redis came back: %+v", r)
	}
	if st := l.Status(); st != "" {
		t.Fatalf("Status after recovery: %q", st)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, logs.String())
	}
}

func BenchmarkLimiterTake(b *testing.B) {
	url := os.Getenv("PODIUM_TEST_REDIS")
	if url == "" {
		b.Skip("PODIUM_TEST_REDIS is not set")
	}
	l, err := redis.OpenLimiter(url, "bench-ratelimit", 0)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	lim := ratelimit.Limit{Quota: 1 << 30, Window: time.Second}
	ctx := context.Background()
	for b.Loop() {
		if _, err := l.Take(ctx, "bench", lim, 1, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}
