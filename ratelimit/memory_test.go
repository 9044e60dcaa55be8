package ratelimit_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium/ratelimit"
	"github.com/podiumhq/podium/ratelimit/ratelimittest"
)

func TestMemoryContract(t *testing.T) {
	ratelimittest.Run(t, func(t *testing.T) ratelimit.Store { return ratelimit.NewMemory(0) })
}

func TestMemoryBounded(t *testing.T) {
	m := ratelimit.NewMemory(640)
	lim := ratelimit.Limit{Quota: 1, Window: time.Hour}
	now := time.Now()
	for i := range 10_000 {
		m.Take(context.Background(), "ip:"+strconv.Itoa(i), lim, 1, now)
	}
	if n := m.Len(); n > 640 {
		t.Fatalf("a store bounded at 640 buckets holds %d", n)
	}
}

// failing is a shared store that fails while down is set.
type failing struct {
	down bool
	mem  *ratelimit.Memory
}

func (f *failing) Take(ctx context.Context, key string, l ratelimit.Limit, cost int, now time.Time) (ratelimit.Result, error) {
	if f.down {
		return ratelimit.Result{}, errors.New("connection refused")
	}
	return f.mem.Take(ctx, key, l, cost, now)
}

func TestLimiterFallback(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var logs strings.Builder
	shared := &failing{mem: ratelimit.NewMemory(0)}
	reg := prometheus.NewRegistry()
	l := ratelimit.New(ratelimit.Config{Shared: shared, Name: "redis", Now: func() time.Time { return now },
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Registerer: reg})
	lim := ratelimit.Limit{Quota: 2, Window: time.Minute}
	ctx := context.Background()

	l.Take(ctx, "submit", "k", lim, 1) // on the shared store
	shared.down = true
	// Down: decided in process, where the bucket is still full.
	for i := range 2 {
		if r := l.Take(ctx, "submit", "k", lim, 1); !r.Allowed {
			t.Fatalf("take %d while the store is down was refused: %+v", i, r)
		}
	}
	if r := l.Take(ctx, "submit", "k", lim, 1); r.Allowed {
		t.Fatal("the in-process fallback did not limit")
	}
	if st := l.Status(); !strings.Contains(st, "connection refused") {
		t.Fatalf("Status while down = %q", st)
	}
	if g := gauge(t, reg, "podium_ratelimit_fallback"); g != 1 {
		t.Fatalf("fallback gauge = %v", g)
	}
	// Back up, but within RetryEvery: still in process.
	shared.down = false
	now = now.Add(500 * time.Millisecond)
	l.Take(ctx, "submit", "other", lim, 1)
	if l.Status() == "" {
		t.Fatal("the shared store was tried again before RetryEvery")
	}
	now = now.Add(time.Second)
	// A readiness check alone sees the recovery.
	if st := l.Check(ctx); st != "" {
		t.Fatalf("Check after recovery = %q", st)
	}
	if r := l.Take(ctx, "submit", "k", lim, 1); !r.Allowed || r.Remaining != 0 {
		t.Fatalf("back on the shared store (1 of 2 used): %+v", r)
	}
	if st := l.Status(); st != "" {
		t.Fatalf("Status after recovery = %q", st)
	}
	if n := strings.Count(logs.String(), "the shared store fails"); n != 1 {
		t.Fatalf("the failure was logged %d times, want once:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "answers again"); n != 1 {
		t.Fatalf("the recovery was logged %d times, want once:\n%s", n, logs.String())
	}
}

func BenchmarkMemoryTake(b *testing.B) {
	m := ratelimit.NewMemory(0)
	lim := ratelimit.Limit{Quota: 1 << 30, Window: time.Second}
	ctx := context.Background()
	now := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Take(ctx, "submit:key:abc:board", lim, 1, now)
		}
	})
}

func BenchmarkLimiterTakeMemory(b *testing.B) {
	l := ratelimit.New(ratelimit.Config{})
	lim := ratelimit.Limit{Quota: 1 << 30, Window: time.Second}
	ctx := context.Background()
	for b.Loop() {
		l.Take(ctx, "submit", "submit:key:abc:board", lim, 1)
	}
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
