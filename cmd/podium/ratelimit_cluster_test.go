package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestClusterRateLimits: a limit consumed on node A is enforced on node B,
// with the buckets in PostgreSQL, and in Redis when it is given.
func TestClusterRateLimits(t *testing.T) {
	t.Parallel() // its own schema, env and processes; mostly waiting
	t.Run("postgres", func(t *testing.T) { testClusterRateLimits(t, "", "postgres") })
	t.Run("redis", func(t *testing.T) {
		url := os.Getenv("PODIUM_TEST_REDIS")
		if url == "" {
			t.Skip("PODIUM_TEST_REDIS is not set; skipping the rate limit cluster test with Redis")
		}
		testClusterRateLimits(t, url, "redis")
	})
}

func testClusterRateLimits(t *testing.T, redisURL, store string) {
	c := newClusterWith(t, 2, redisURL, func(int, string) []string {
		// The shared store's decisions are what is tested: a slow one on a
		// loaded machine (the race detector, parallel tests) must not hand
		// the decision to each node alone, as the 200ms default would.
		return []string{"--rate-submit", "3/1h", "--rate-anon", "2/1h", "--rate-auth-fail", "2/1h", "--rate-key", "1000/1h",
			"--rate-store-timeout", "1m"}
	})
	a, b := c.nodes[0].url, c.nodes[1].url
	if st, body, _ := do(a, "PUT", "/v1/boards/rl", clusterKey, `{"keys":[{"name":"n","order":"desc"}],"public":true}`); st != 201 {
		t.Fatalf("create board: %d %s", st, body)
	}
	eventually(t, 10*time.Second, "node B knows the board", func() string {
		if st, body, _ := do(b, "GET", "/v1/boards/rl", clusterKey, ""); st != 200 {
			return fmt.Sprintf("%d %s", st, body)
		}
		return ""
	})
	submit := func(base string, n int) (int, string) {
		st, body, h := do(base, "POST", "/v1/boards/rl/scores", clusterKey, fmt.Sprintf(`{"player":"p","keys":[%d]}`, n))
		return st, fmt.Sprintf("%s RateLimit=%q Retry-After=%q", body, h.Get("RateLimit"), h.Get("Retry-After"))
	}
	for i, base := range []string{a, a, b} {
		if st, info := submit(base, i); st != 200 {
			t.Fatalf("submission %d: %d %s", i, st, info)
		}
	}
	for _, base := range []string{b, a} {
		st, info := submit(base, 9)
		if st != 429 {
			t.Fatalf("4th submission of a 3/1h limit: %d %s", st, info)
		}
	}
	// Anonymous reads, per address, across nodes.
	for i, base := range []string{a, b, a} {
		st, _, h := do(base, "GET", "/v1/boards/rl/entries", "", "")
		if want := []int{200, 200, 429}[i]; st != want {
			t.Fatalf("anonymous read %d: %d, want %d", i, st, want)
		}
		if i == 2 && h.Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	}
	// Failed authentications, per address, across nodes.
	for i, base := range []string{a, b, a} {
		st, _, _ := do(base, "GET", "/v1/keys", "wrong", "")
		if want := []int{401, 401, 429}[i]; st != want {
			t.Fatalf("failed authentication %d: %d, want %d", i, st, want)
		}
	}
	st, body, _ := do(b, "GET", "/readyz", "", "")
	if st != 200 || !strings.Contains(string(body), `"rate_limits":"`+store+`"`) {
		t.Fatalf("readyz on node B: %d %s", st, body)
	}
	if redisURL == "" {
		return
	}
	// The buckets this traffic wrote (submit, request, anon, auth) are
	// keys the keyspace documents: check finds nothing to report, and so
	// rebuild --redis deletes none of them.
	env := c.args[slices.Index(c.args, "--env")+1]
	code, out, errs := runCLI(t, "check", "--redis", redisURL, "--env", env)
	if code != 0 || !strings.Contains(out, "ok    redis keyspace podium:"+env+":* (4 documented keys") {
		t.Fatalf("check --redis after rate-limited traffic: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = runCLI(t, "rebuild", "--redis", redisURL, "--env", env, "--dry-run")
	if code != 0 || !strings.Contains(out, "redis holds no stale key") {
		t.Fatalf("rebuild --redis --dry-run after rate-limited traffic: exit %d\n%s", code, out)
	}
}
