package redis_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/podiumhq/podium/ratelimit"
	"github.com/podiumhq/podium/redis"
)

func TestClassify(t *testing.T) {
	ks, err := redis.NewKeyspace("prod")
	if err != nil {
		t.Fatal(err)
	}
	if ks.Deployment() != "podium:prod:" {
		t.Fatalf("Deployment() = %q", ks.Deployment())
	}
	for _, tc := range []struct {
		key  string
		want redis.KeyStatus
	}{
		{"podium:prod:v1:whatever", redis.Undocumented},
		// The notices channel is documented as a channel: a data key with
		// its name is not podium's.
		{ks.Notices(), redis.Undocumented},
		{"podium:prod:junk", redis.Undocumented},
		{"podium:prod:v0:notices", redis.Older},
		{"podium:prod:v2:anything", redis.Newer},
		{"podium:prod:v10:anything", redis.Newer},
		// What the writers write: one key per bucket family, built the way
		// the HTTP server and the evidence budgets build them.
		{ks.RateLimit(ratelimit.AuthFail.Name("203.0.113.7")), redis.Documented},
		{ks.RateLimit(ratelimit.Anon.Name("2001:db8::/64")), redis.Documented},
		{ks.RateLimit(ratelimit.Submit.Name("key", "k_12", "chess")), redis.Documented},
		{ks.RateLimit(ratelimit.Submit.Name("player", "p1", "*")), redis.Documented},
		{ks.RateLimit(ratelimit.Request.Name("key", "k_12")), redis.Documented},
		{ks.RateLimit(ratelimit.EvidencePlayer.Name("p1")), redis.Documented},
		{ks.RateLimit(ratelimit.EvidenceGlobal.Name()), redis.Documented},
		{ks.RateLimit("nosuchscope:x"), redis.Undocumented},
	} {
		if got := ks.Classify(tc.key); got != tc.want {
			t.Errorf("Classify(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

// TestKeysCoverEveryBucket: every bucket family the writers use has its
// documented key, and a bucket of each is documented.
func TestKeysCoverEveryBucket(t *testing.T) {
	ks, _ := redis.NewKeyspace("prod")
	docs := map[string]bool{}
	for _, d := range ks.Keys() {
		docs[d.Name] = true
	}
	for _, b := range ratelimit.Buckets() {
		if !docs[ks.RateLimit(b.Pattern)] {
			t.Errorf("bucket family %q has no documented key", b.Pattern)
		}
	}
}

// TestAdminScanAndDelete runs against the Redis in PODIUM_TEST_REDIS, in a
// deployment of its own: SCAN finds exactly the deployment's keys (every
// version, not another deployment's), stops at the maximum, and Delete
// removes what it is given.
func TestAdminScanAndDelete(t *testing.T) {
	url := os.Getenv("PODIUM_TEST_REDIS")
	if url == "" {
		t.Skip("PODIUM_TEST_REDIS is not set; skipping the Redis admin test (e.g. PODIUM_TEST_REDIS=redis://127.0.0.1:6379/0)")
	}
	ctx := context.Background()
	e := env(t)
	a, err := redis.OpenAdmin(url, e)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	o, _ := goredis.ParseURL(url)
	rdb := goredis.NewClient(o)
	defer rdb.Close()
	var want []string
	for i := range 2500 { // more than one SCAN batch
		want = append(want, fmt.Sprintf("podium:%s:v1:junk:%04d", e, i))
	}
	want = append(want, "podium:"+e+":v0:old", "podium:"+e+":v2:new")
	others := []string{"podium:" + e + "x:v1:other", "other:" + e}
	t.Cleanup(func() { rdb.Unlink(context.Background(), append(slices.Clone(want), others...)...) })
	for _, k := range append(slices.Clone(want), others...) {
		if err := rdb.Set(ctx, k, "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	keys, complete, err := a.Scan(ctx, 100000)
	if err != nil || !complete || !slices.Equal(keys, want) {
		t.Fatalf("Scan: complete %v, %d keys (want %d), err %v", complete, len(keys), len(want), err)
	}
	keys, complete, err = a.Scan(ctx, 100)
	if err != nil || complete || len(keys) != 100 {
		t.Fatalf("Scan bounded at 100: complete %v, %d keys, err %v", complete, len(keys), err)
	}
	if typ, err := a.Type(ctx, want[0]); err != nil || typ != "string" {
		t.Fatalf("Type: %q %v", typ, err)
	}
	n, err := a.Delete(ctx, want[:len(want)-1])
	if err != nil || n != len(want)-1 {
		t.Fatalf("Delete: %d %v", n, err)
	}
	keys, complete, err = a.Scan(ctx, 100000)
	if err != nil || !complete || !slices.Equal(keys, want[len(want)-1:]) {
		t.Fatalf("after Delete: %v %v %v", keys, complete, err)
	}
}
