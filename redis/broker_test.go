package redis_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/testredis"
	"github.com/podiumhq/podium/redis"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// inbox collects the notices a subscription receives.
type inbox struct {
	mu sync.Mutex
	ns []podium.Notice
}

func (b *inbox) add(n podium.Notice) { b.mu.Lock(); b.ns = append(b.ns, n); b.mu.Unlock() }

func (b *inbox) waitFor(t *testing.T, board string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		b.mu.Lock()
		for _, n := range b.ns {
			if n.Board == board {
				b.mu.Unlock()
				return
			}
		}
		b.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no notice for board %s within %s", board, within)
}

func env(t *testing.T) string {
	var b [4]byte
	rand.Read(b[:])
	return "test-" + hex.EncodeToString(b[:])
}

// waitErr waits until the broker's Err matches want (nil or not).
func waitErr(t *testing.T, b *redis.Broker, wantNil bool, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if (b.Err() == nil) == wantNil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("broker Err() = %v after %s; want nil: %v", b.Err(), within, wantNil)
}

// TestBrokerDeliversNotices: a notice published by one broker reaches the
// subscribers of another on the same deployment, not those of another
// deployment sharing the Redis.
func TestBrokerDeliversNotices(t *testing.T) {
	url := os.Getenv("PODIUM_TEST_REDIS")
	if url == "" {
		t.Skip("PODIUM_TEST_REDIS is not set (e.g. redis://127.0.0.1:6379/0); skipping the Redis broker test")
	}
	e := env(t)
	pub, err := redis.Open(url, redis.Options{Env: e, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	sub, err := redis.Open(url, redis.Options{Env: e, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	other, err := redis.Open(url, redis.Options{Env: e + "x", Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if !strings.HasPrefix(sub.Keyspace().Notices(), "podium:"+e+":v1:") {
		t.Fatalf("channel %q is outside the keyspace", sub.Keyspace().Notices())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got, stray inbox
	go sub.Subscribe(ctx, got.add)
	go other.Subscribe(ctx, stray.add)
	waitErr(t, pub, true, 5*time.Second)
	// A subscription may still be settling: publish until it arrives.
	deadline := time.Now().Add(5 * time.Second)
	for {
		pub.Publish(ctx, podium.Notice{Node: "a", Board: "b1", Seq: 7})
		got.mu.Lock()
		n := len(got.ns)
		got.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	got.waitFor(t, "b1", time.Second)
	got.mu.Lock()
	n := got.ns[0]
	got.mu.Unlock()
	if n.Node != "a" || n.Seq != 7 {
		t.Fatalf("notice: %+v", n)
	}
	stray.mu.Lock()
	defer stray.mu.Unlock()
	if len(stray.ns) != 0 {
		t.Fatalf("another deployment received %+v", stray.ns)
	}
}

// TestBrokerSurvivesRedisRestart stops a Redis of the test's own: the
// broker reports it, publishing neither blocks nor fails the caller, and
// once Redis is back (empty) the broker recovers by itself and delivers
// again.
func TestBrokerSurvivesRedisRestart(t *testing.T) {
	srv := testredis.Start(t, os.Getenv("PODIUM_TEST_REDIS") != "")
	e := env(t)
	b, err := redis.Open(srv.URL(), redis.Options{Env: e, Logger: quiet(), Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got inbox
	go b.Subscribe(ctx, got.add)
	waitErr(t, b, true, 5*time.Second)
	publishUntil := func(board string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			b.Publish(ctx, podium.Notice{Node: "x", Board: board, Seq: 1})
			time.Sleep(50 * time.Millisecond)
			got.mu.Lock()
			for _, n := range got.ns {
				if n.Board == board {
					got.mu.Unlock()
					return
				}
			}
			got.mu.Unlock()
		}
		t.Fatalf("notice for %s never arrived", board)
	}
	publishUntil("before")

	srv.Stop()
	waitErr(t, b, false, 5*time.Second)
	// Publishing while Redis is down returns at once: each notice is
	// queued or refused, never waited on, and every one is dropped and
	// counted (none is kept for later, none is sent). The deadline is a
	// failure timeout only: a Publish that blocked would never return.
	before := b.Dropped()
	published := make(chan struct{})
	go func() {
		defer close(published)
		for i := 0; i < 10000; i++ {
			b.Publish(ctx, podium.Notice{Node: "x", Board: "down", Seq: uint64(i)})
		}
	}()
	select {
	case <-published:
	case <-time.After(30 * time.Second):
		t.Fatal("publishing while Redis is down blocked")
	}
	deadline := time.Now().Add(30 * time.Second)
	for b.Dropped()-before < 10000 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 10,000 notices published while Redis was down were counted as dropped", b.Dropped()-before)
		}
		time.Sleep(5 * time.Millisecond)
	}
	srv.Restart()
	waitErr(t, b, true, 10*time.Second)
	publishUntil("after")
}

// TestBrokerSubscribeEndsWithContext: Subscribe returns once its context
// ends, while Redis answers. Its receive loop pinged on each quiet spell
// and went on, so it never returned, and a node on --db and --redis never
// finished Close (TestRedisRateStoreTimeout in cmd/podium hung on it).
func TestBrokerSubscribeEndsWithContext(t *testing.T) {
	url := os.Getenv("PODIUM_TEST_REDIS")
	if url == "" {
		t.Skip("PODIUM_TEST_REDIS is not set (e.g. redis://127.0.0.1:6379/0); skipping the Redis broker test")
	}
	e := env(t)
	b, err := redis.Open(url, redis.Options{Env: e, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var got inbox
	ended := make(chan struct{})
	go func() { b.Subscribe(ctx, got.add); close(ended) }()
	deadline := time.Now().Add(5 * time.Second)
	for { // subscribed once a notice arrives
		b.Publish(ctx, podium.Notice{Node: "a", Board: "b1", Seq: 1})
		got.mu.Lock()
		n := len(got.ns)
		got.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the subscription delivered nothing")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	select {
	case <-ended:
	case <-time.After(15 * time.Second): // a receive waits 2 s at most, then sees ctx
		t.Fatal("Subscribe did not return after its context ended")
	}
}
