package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// TestHarnessAgainstPodiumAndRedis runs every scenario briefly against a
// real podium (in this process, on SQLite) and the Redis named by
// PODIUM_TEST_REDIS, and checks that nothing failed, that both columns of
// the comparison are filled, and that the harness left no key behind.
func TestHarnessAgainstPodiumAndRedis(t *testing.T) {
	raw := os.Getenv("PODIUM_TEST_REDIS")
	if raw == "" {
		t.Skip("PODIUM_TEST_REDIS is not set (e.g. redis://127.0.0.1:6379/0); skipping the Redis comparison test")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		t.Fatalf("PODIUM_TEST_REDIS=%q is not a redis:// URL", raw)
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := modules.Engine(engine.Config{Store: st, Logger: log})
	eng.Keys().SetAdminSecret("harness-test")
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv := podiumhttp.New(podiumhttp.Config{Engine: eng, Store: st, Logger: log})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	defer srv.Hub().Close()

	cfg, err := parseFlags([]string{"--url", ts.URL, "--key", "harness-test", "--redis", u.Host, "--conns", "4",
		"--duration", "300ms", "--warmup", "50ms", "--players", "3000", "--batch", "100"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	failed, err := run(context.Background(), cfg, &out, io.Discard)
	if err != nil || failed {
		t.Fatalf("harness run failed (err %v):\n%s", err, out.String())
	}
	report := out.String()
	for _, want := range []string{"ZADD GT+ZREVRANK", "ZREVRANGE 0 99 WITHSCORES", "ZREVRANK", "podium/redis"} {
		if !strings.Contains(report, want) {
			t.Fatalf("report lacks %q:\n%s", want, report)
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: u.Host})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	keys, err := rdb.Keys(ctx, fmt.Sprintf("podiumbench:%d:*", os.Getpid())).Result()
	if err != nil || len(keys) != 0 {
		t.Fatalf("keys left in Redis: %v %v", keys, err)
	}
}
