// Package ratelimittest is the contract every ratelimit.Store passes: the
// memory store, and the Redis and PostgreSQL adapters against live
// servers.
package ratelimittest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium/ratelimit"
)

// Run runs the contract on the store that open returns; each subtest uses
// keys of its own prefix, so one store may serve them all.
func Run(t *testing.T, open func(t *testing.T) ratelimit.Store) {
	s := open(t)
	ctx := context.Background()
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	prefix := fmt.Sprintf("contract-%d-", time.Now().UnixNano())
	lim := ratelimit.Limit{Quota: 3, Window: 3 * time.Second} // T = 1s

	t.Run("BurstThenRefill", func(t *testing.T) {
		key := prefix + "burst"
		for i := range 3 {
			r, err := s.Take(ctx, key, lim, 1, base)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Allowed || r.Remaining != 2-i {
				t.Fatalf("take %d: %+v, want allowed with %d remaining", i, r, 2-i)
			}
		}
		r, err := s.Take(ctx, key, lim, 1, base)
		if err != nil {
			t.Fatal(err)
		}
		want := ratelimit.Result{Remaining: 0, Reset: 3 * time.Second, RetryAfter: time.Second}
		if r != want {
			t.Fatalf("4th take: %+v, want %+v", r, want)
		}
		// The denied take stored nothing: 1s later exactly one more fits.
		r, _ = s.Take(ctx, key, lim, 1, base.Add(time.Second))
		if !r.Allowed || r.Remaining != 0 || r.Reset != 3*time.Second {
			t.Fatalf("after 1s: %+v, want allowed, 0 remaining, reset 3s", r)
		}
		r, _ = s.Take(ctx, key, lim, 1, base.Add(1500*time.Millisecond))
		if r.Allowed || r.RetryAfter != 500*time.Millisecond {
			t.Fatalf("after 1.5s: %+v, want denied, retry after 500ms", r)
		}
	})
	t.Run("Peek", func(t *testing.T) {
		key := prefix + "peek"
		for range 3 {
			if r, _ := s.Take(ctx, key, lim, 0, base); !r.Allowed || r.Remaining != 3 {
				t.Fatalf("peek on a full bucket: %+v", r)
			}
		}
		for range 3 {
			s.Take(ctx, key, lim, 1, base)
		}
		if r, _ := s.Take(ctx, key, lim, 0, base); r.Allowed || r.RetryAfter != time.Second {
			t.Fatalf("peek on an empty bucket: %+v, want denied, retry after 1s", r)
		}
	})
	t.Run("Cost", func(t *testing.T) {
		key := prefix + "cost"
		if r, _ := s.Take(ctx, key, lim, 2, base); !r.Allowed || r.Remaining != 1 {
			t.Fatalf("cost 2: %+v", r)
		}
		if r, _ := s.Take(ctx, key, lim, 2, base); r.Allowed || r.Remaining != 1 || r.RetryAfter != time.Second {
			t.Fatalf("cost 2 with 1 left: %+v", r)
		}
	})
	t.Run("KeysAreIndependent", func(t *testing.T) {
		for range 3 {
			s.Take(ctx, prefix+"a", lim, 1, base)
		}
		if r, _ := s.Take(ctx, prefix+"b", lim, 1, base); !r.Allowed {
			t.Fatalf("another key was limited: %+v", r)
		}
	})
	t.Run("LimitChangeAppliesAtOnce", func(t *testing.T) {
		key := prefix + "change"
		for range 3 {
			s.Take(ctx, key, lim, 1, base)
		}
		wider := ratelimit.Limit{Quota: 6, Window: 6 * time.Second}
		if r, _ := s.Take(ctx, key, wider, 1, base); !r.Allowed || r.Remaining != 2 {
			t.Fatalf("after raising the quota: %+v, want allowed with 2 remaining", r)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		key := prefix + "concurrent"
		big := ratelimit.Limit{Quota: 50, Window: time.Hour}
		var ok atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 20 {
					r, err := s.Take(ctx, key, big, 1, base)
					if err != nil {
						t.Error(err)
						return
					}
					if r.Allowed {
						ok.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if ok.Load() != 50 {
			t.Fatalf("160 concurrent takes on a quota of 50 admitted %d", ok.Load())
		}
	})
	if rf, ok := s.(ratelimit.Refunder); ok {
		t.Run("Refund", func(t *testing.T) {
			key := prefix + "refund"
			if r, _ := s.Take(ctx, key, lim, 3, base); !r.Allowed || r.Remaining != 0 {
				t.Fatalf("take 3: %+v", r)
			}
			// Two of the three given back: two fit again, not three.
			if err := rf.Refund(ctx, key, lim, 2, base); err != nil {
				t.Fatal(err)
			}
			if r, _ := s.Take(ctx, key, lim, 2, base); !r.Allowed || r.Remaining != 0 {
				t.Fatalf("after a refund of 2, take 2: %+v", r)
			}
			if r, _ := s.Take(ctx, key, lim, 1, base); r.Allowed {
				t.Fatalf("after a refund of 2, a third take: %+v", r)
			}
			// A refund never fills past full: 1s later one has refilled,
			// and a refund of 10 gives back only the other two.
			rf.Refund(ctx, key, lim, 10, base.Add(time.Second))
			if r, _ := s.Take(ctx, key, lim, 3, base.Add(time.Second)); !r.Allowed {
				t.Fatalf("after a large refund, take 3: %+v", r)
			}
			if r, _ := s.Take(ctx, key, lim, 1, base.Add(time.Second)); r.Allowed {
				t.Fatalf("a refund filled past full: %+v", r)
			}
			// A refund of an unknown or full bucket changes nothing.
			if err := rf.Refund(ctx, prefix+"refund-none", lim, 1, base); err != nil {
				t.Fatal(err)
			}
			if r, _ := s.Take(ctx, prefix+"refund-none", lim, 3, base); !r.Allowed {
				t.Fatalf("take 3 after refunding an unknown bucket: %+v", r)
			}
		})
	}
	if sw, ok := s.(ratelimit.Sweeper); ok {
		t.Run("Sweep", func(t *testing.T) {
			key := prefix + "sweep"
			s.Take(ctx, key, lim, 1, base)
			later := base.Add(time.Hour)
			total := 0
			for {
				n, err := sw.Sweep(ctx, later, 2)
				if err != nil {
					t.Fatal(err)
				}
				if n > 2 {
					t.Fatalf("a sweep of at most 2 deleted %d", n)
				}
				total += n
				if n < 2 {
					break
				}
			}
			if total == 0 {
				t.Fatal("the sweep deleted nothing")
			}
			// A swept bucket is a full one.
			if r, _ := s.Take(ctx, key, lim, 1, later); !r.Allowed || r.Remaining != 2 {
				t.Fatalf("after the sweep: %+v", r)
			}
		})
	}
}
