package ratelimit

import (
	"context"
	"time"
)

// Store keeps buckets and applies Decide to them atomically: two Takes of
// one key, from this process or another, never both see the same TAT.
//
// Take applies a request of cost (0: a peek, see Decide) to the bucket key
// under l at time now. The key is opaque to the store (Limiter builds it
// from the scope, the principal and the board). A store forgets a bucket
// once its TAT has passed (a full bucket is the same as no bucket).
type Store interface {
	Take(ctx context.Context, key string, l Limit, cost int, now time.Time) (Result, error)
}

// Sweeper is a Store whose forgotten buckets must be deleted by someone:
// Sweep deletes at most limit buckets whose TAT is before now and returns
// how many it deleted.
type Sweeper interface {
	Sweep(ctx context.Context, now time.Time, limit int) (int, error)
}

// Refunder is a Store that can give back part of what a Take charged:
// Refund moves the bucket's TAT back by cost·T, never before now (a full
// bucket gets nothing more). A refund of what an earlier Take of the same
// bucket charged undoes that Take exactly, and never gives back more. The
// evidence budgets charge ahead of reading a body and refund what was not
// read.
type Refunder interface {
	Refund(ctx context.Context, key string, l Limit, cost int, now time.Time) error
}
