package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/podiumhq/podium/postgres"
)

// TestCheckRebuildDB: podium check --db finds an entry changed behind
// podium's back in PostgreSQL, rebuild --db refuses while a node is
// connected and otherwise repairs it with progress, and check --url, given
// once per node, checks every node (a node that does not answer is a
// failure); rebuild --url reloads every node.
func TestCheckRebuildDB(t *testing.T) {
	dsn, _ := targetDSN(t)
	s := buildSource(t)
	if code, out, errs := runCLI(t, "migrate", "--from", s.dir, "--db", dsn); code != 0 {
		t.Fatalf("migrate: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs := runCLI(t, "check", "--db", dsn)
	if code != 0 || !strings.Contains(out, "ok    database: entries vs log (5 boards, ") || !strings.Contains(out, "check: ok") {
		t.Fatalf("check --db of a good database: exit %d\n%s\n%s", code, out, errs)
	}
	sqlExec(t, dsn, `UPDATE entries SET k1 = k1 + 1 WHERE (board, period, player) IN
		(SELECT board, period, player FROM entries WHERE board = 'm:sum' ORDER BY player LIMIT 1)`)
	code, out, _ = runCLI(t, "check", "--db", dsn)
	if code != 1 || !strings.Contains(out, "FAIL  database: entries vs log") || !strings.Contains(out, "board m:sum period all player") {
		t.Fatalf("check --db after an entry was changed: exit %d, want 1\n%s", code, out)
	}

	node, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "rebuild", "--db", dsn)
	node.Close()
	if code != 1 || !strings.Contains(errs, "stop every node first") || !strings.Contains(errs, "podium rebuild --url") {
		t.Fatalf("rebuild --db with a node connected: exit %d, want 1\n%s", code, errs)
	}
	// The node's connections leave pg_stat_activity shortly after it hung up.
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, out, errs = runCLI(t, "rebuild", "--db", dsn)
		if code == 0 || !strings.Contains(errs, "stop every node first") || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code != 0 {
		t.Fatalf("rebuild --db: exit %d\n%s\n%s", code, out, errs)
	}
	for _, w := range []string{"rebuild: board 1/5 m:best: ", " submissions replayed, writing ", "rebuild: board 5/5 m:sum: done in ", "entries recomputed from the log"} {
		if !strings.Contains(out, w) {
			t.Errorf("rebuild --db output does not say %q:\n%s", w, out)
		}
	}
	if code, out, _ := runCLI(t, "check", "--db", dsn); code != 0 {
		t.Fatalf("check --db after rebuild: exit %d\n%s", code, out)
	}

	// Two nodes on the database, and one address where nobody answers.
	t.Setenv("PODIUM_ADMIN_KEY", s.adminKey)
	var urls []string
	for range 2 {
		m := &Main{Config: Config{Addr: "127.0.0.1:0", DB: dsn, AdminKey: s.adminKey, Shutdown: time.Second}, Now: s.clock.Now, Stderr: io.Discard}
		if err := m.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		urls = append(urls, m.URL())
	}
	code, out, _ = runCLI(t, "check", "--db", dsn, "--url", urls[0], "--url", urls[1])
	if code != 0 || !strings.Contains(out, "ok    server "+urls[0]+": indexes vs database") || !strings.Contains(out, "ok    server "+urls[1]+": indexes vs database") {
		t.Fatalf("check --db --url --url: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "check", "--url", urls[0], "--url", "http://127.0.0.1:1", "--url", urls[1])
	if code != 1 || !strings.Contains(out, "FAIL  server http://127.0.0.1:1") || !strings.Contains(out, "ok    server "+urls[1]+": indexes vs database") {
		t.Fatalf("check with a node that does not answer: exit %d, want 1, and the other nodes checked\n%s", code, out)
	}
	t.Setenv("PODIUM_URL", urls[0]+","+urls[1])
	code, out, errs = runCLI(t, "rebuild")
	if code != 0 || strings.Count(out, "reloaded its indexes") != 2 {
		t.Fatalf("rebuild with PODIUM_URL naming two nodes: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestCheckRebuildRedis: check --redis finds the keys under the
// deployment's prefix that the keyspace does not document and those of an
// older version (a newer version's are only noted), says when it stopped at
// --redis-max-keys, and fails when Redis does not answer; rebuild --redis
// --dry-run deletes nothing, and rebuild --redis deletes exactly the stale
// keys.
func TestCheckRebuildRedis(t *testing.T) {
	url := os.Getenv("PODIUM_TEST_REDIS")
	if url == "" {
		t.Skip("PODIUM_TEST_REDIS is not set; skipping the Redis check test (e.g. PODIUM_TEST_REDIS=redis://127.0.0.1:6379/0)")
	}
	ctx := context.Background()
	var rnd [4]byte
	rand.Read(rnd[:])
	env := "test-" + hex.EncodeToString(rnd[:])
	p := "podium:" + env + ":"
	o, _ := goredis.ParseURL(url)
	rdb := goredis.NewClient(o)
	defer rdb.Close()
	stale := []string{p + "v1:junk", p + "v0:old"}
	newer := p + "v2:new"
	t.Cleanup(func() { rdb.Unlink(context.Background(), append(stale, newer, p+"v1:h")...) })
	for _, k := range append(stale, newer) {
		if err := rdb.Set(ctx, k, "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.HSet(ctx, p+"v1:h", "f", "v").Err(); err != nil {
		t.Fatal(err)
	}
	stale = append(stale, p+"v1:h")

	code, out, errs := runCLI(t, "check", "--redis", url, "--env", env)
	if code != 1 || !strings.Contains(out, "FAIL  redis keyspace "+p+"* (0 documented keys; version v1): 3 difference(s)") ||
		!strings.Contains(out, p+"v1:junk (string): not in the keyspace") || !strings.Contains(out, p+"v1:h (hash): not in the keyspace") ||
		!strings.Contains(out, p+"v0:old (string): older keyspace version") || !strings.Contains(out, "note  1 keys of a newer keyspace version") {
		t.Fatalf("check --redis: exit %d, want 1 and the stale keys\n%s\n%s", code, out, errs)
	}
	if code, out, _ := runCLI(t, "check", "--redis", url, "--env", env, "--redis-max-keys", "2"); code != 1 || !strings.Contains(out, "stopped after 2 keys") {
		t.Errorf("check --redis --redis-max-keys 2: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "rebuild", "--redis", url, "--env", env, "--dry-run")
	if n, _ := rdb.Exists(ctx, append(stale, newer)...).Result(); code != 0 || !strings.Contains(out, "would delete 3 stale keys") || n != 4 {
		t.Fatalf("rebuild --redis --dry-run: exit %d, %d of 4 keys left\n%s", code, n, out)
	}
	code, out, _ = runCLI(t, "rebuild", "--redis", url, "--env", env)
	if code != 0 || !strings.Contains(out, "deleted 3 stale keys") || !strings.Contains(out, "1 keys of a newer keyspace version left alone") {
		t.Fatalf("rebuild --redis: exit %d\n%s", code, out)
	}
	if n, _ := rdb.Exists(ctx, stale...).Result(); n != 0 {
		t.Errorf("%d stale keys left after rebuild --redis", n)
	}
	if n, _ := rdb.Exists(ctx, newer).Result(); n != 1 {
		t.Errorf("rebuild --redis deleted the newer version's key")
	}
	if code, out, _ := runCLI(t, "check", "--redis", url, "--env", env); code != 0 || !strings.Contains(out, "ok    redis keyspace") {
		t.Errorf("check --redis after rebuild: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "check", "--redis", "redis://127.0.0.1:1/0", "--env", env); code != 1 || !strings.Contains(out, "FAIL  redis redis://127.0.0.1:1/0") {
		t.Errorf("check --redis of a Redis that does not answer: exit %d\n%s", code, out)
	}
}
