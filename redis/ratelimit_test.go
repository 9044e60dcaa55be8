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
	counted := &countingStore{Store: store}
	l := ratelimit.New(ratelimit.Config{Shared: counted, Name: "redis", Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Now: func() time.Time { return now }})
	lim := ratelimit.Limit{Quota: 2, Window: time.Hour}
	ctx := context.Background()
	if r := l.Take(ctx, "submit", "k", lim, 1); !r.Allowed || r.Remaining != 1 {
		t.Fatalf("first take: %+v", r)
	}
	srv.Stop()
	counted.calls, counted.errs = 0, nil
	for i := range 3 {
		r := l.Take(ctx, "submit", "k", lim, 1)
		if r.Allowed != (i < 2) {
			t.Fatalf("take %d while down: %+v (the in-process buckets start full)", i, r)
		}
	}
	// Takes while Redis is down do not each wait for it: the first one
	// asks Redis under a deadline (the limiter's Timeout), fails, and the
	// others, on the same (fake) clock, are decided without asking again.
	if counted.calls != 1 || len(counted.errs) != 1 || counted.undated != 0 {
		t.Fatalf("while down: %d takes on Redis (%d without a deadline), errors %v; want 1 take that failed",
			counted.calls, counted.undated, counted.errs)
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

// countingStore counts the takes on a store and keeps their errors.
type countingStore struct {
	ratelimit.Store
	calls   int
	undated int // takes whose context had no deadline
	errs    []error
}

func (c *countingStore) Take(ctx context.Context, key string, lim ratelimit.Limit, cost int, now time.Time) (ratelimit.Result, error) {
	c.calls++
	if _, ok := ctx.Deadline(); !ok {
		c.undated++
	}
	r, err := c.Store.Take(ctx, key, lim, cost, now)
	if err != nil {
		c.errs = append(c.errs, err)
	}
	return r, err
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
