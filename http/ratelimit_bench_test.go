package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/ratelimit"
	"github.com/podiumhq/podium/redis"
	"github.com/podiumhq/podium/sqlite"
)

// BenchmarkSubmitRateLimit measures POST /v1/boards/{board}/scores through
// the handler (SQLite, sync=normal, group commit, 8 goroutines per CPU)
// without a limiter, then with the limiter on each backend available, in
// one run, and reports each as a ratio to the run without (x_off). The
// limit is never reached: this is the cost of deciding, not of refusing.
//
//	go test ./http/ -run '^$' -bench SubmitRateLimit -benchtime 2s
func BenchmarkSubmitRateLimit(b *testing.B) {
	var offNs atomic.Int64
	big := ratelimit.Limit{Quota: 1 << 30, Window: time.Second}
	run := func(name string, shared func(b *testing.B) (ratelimit.Store, string)) {
		b.Run(name, func(b *testing.B) {
			var rl *podiumhttp.RateLimits
			if shared != nil {
				st, n := shared(b)
				rl = &podiumhttp.RateLimits{Submit: big, Key: big, Anon: big, AuthFail: big,
					Limiter: ratelimit.New(ratelimit.Config{Shared: st, Name: n, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})}
			}
			h := benchServer(b, rl)
			var n atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					req := httptest.NewRequest("POST", "/v1/boards/bench/scores", strings.NewReader(fmt.Sprintf(`{"player":"p%d","keys":[%d]}`, i%1000, i)))
					req.Header.Set("Authorization", "Bearer "+adminKey)
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != 200 {
						b.Errorf("status %d: %s", w.Code, w.Body)
						return
					}
				}
			})
			ns := b.Elapsed().Nanoseconds() / int64(b.N)
			if shared == nil {
				offNs.Store(ns)
			} else if off := offNs.Load(); off > 0 {
				b.ReportMetric(float64(ns)/float64(off), "x_off")
			}
		})
	}
	run("off", nil)
	run("memory", func(b *testing.B) (ratelimit.Store, string) { return nil, "memory" })
	run("postgres", func(b *testing.B) (ratelimit.Store, string) {
		if os.Getenv("PODIUM_TEST_POSTGRES") == "" {
			b.Skip("PODIUM_TEST_POSTGRES is not set")
		}
		dsn, _ := pgtest.Schema(b)
		st, err := postgres.Open(context.Background(), dsn, postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return st.RateLimits(), "postgres"
	})
	run("redis", func(b *testing.B) (ratelimit.Store, string) {
		url := os.Getenv("PODIUM_TEST_REDIS")
		if url == "" {
			b.Skip("PODIUM_TEST_REDIS is not set")
		}
		l, err := redis.OpenLimiter(url, fmt.Sprintf("bench-%d", time.Now().UnixNano()), 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { l.Close() })
		return l, "redis"
	})
}

func benchServer(b *testing.B, rl *podiumhttp.RateLimits) http.Handler {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := modules.Engine(engine.Config{Store: st, Logger: log})
	eng.Keys().SetAdminSecret(adminKey)
	if err := eng.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	srv := podiumhttp.New(podiumhttp.Config{Engine: eng, Store: st, Logger: log, RateLimits: rl})
	b.Cleanup(func() { srv.Hub().Close(); eng.Close(); st.Close() })
	h := srv.Handler()
	req := httptest.NewRequest("PUT", "/v1/boards/bench", strings.NewReader(oneKey))
	req.Header.Set("Authorization", "Bearer "+adminKey)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 201 {
		b.Fatalf("create board: %d %s", w.Code, w.Body)
	}
	return h
}
