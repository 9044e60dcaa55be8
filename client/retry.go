package client

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"
)

// kind says what a retry of a request could do, which decides when it is
// retried.
type kind int

const (
	// read changes nothing: retried after a network error, 429 and 503.
	read kind = iota
	// idempotent is a write whose repetition has the effect of one (PUT,
	// DELETE, a join, a settlement run): retried as a read.
	idempotent
	// keyed is a write that carries an Idempotency-Key, the same on every
	// attempt, so a repeated one is answered from the first: retried after
	// a network error, 429, 503 unavailable and 503 outcome_unknown.
	keyed
	// once is a write that a repetition would apply again (a new API key,
	// a token refresh): retried only when the server says nothing was
	// applied (429, 503 unavailable), never after a network error.
	once
)

// RetryPolicy bounds the retries of one call. Waits grow exponentially
// with full jitter: before retry n (from 0) the client waits a random time
// in [0, min(MaxDelay, MinDelay×2^n)], or Retry-After when the server gave
// one, plus up to MinDelay of jitter. A call never retries a 4xx other
// than 429, never waits past its context's deadline, and gives up when
// the server asks for a wait longer than MaxRetryAfter.
type RetryPolicy struct {
	MaxAttempts   int           // attempts in all, the first included (default 4; 1: no retry)
	MinDelay      time.Duration // default 100ms
	MaxDelay      time.Duration // default 5s
	MaxRetryAfter time.Duration // default 30s
}

// DefaultRetry is the policy of a client made without WithRetry.
var DefaultRetry = RetryPolicy{MaxAttempts: 4, MinDelay: 100 * time.Millisecond, MaxDelay: 5 * time.Second, MaxRetryAfter: 30 * time.Second}

// NoRetry sends every request once.
var NoRetry = RetryPolicy{MaxAttempts: 1}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultRetry.MaxAttempts
	}
	if p.MinDelay <= 0 {
		p.MinDelay = DefaultRetry.MinDelay
	}
	if p.MaxDelay < p.MinDelay {
		p.MaxDelay = max(p.MinDelay, DefaultRetry.MaxDelay)
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultRetry.MaxRetryAfter
	}
	return p
}

// backoff is the full-jitter wait before retry n.
func (p RetryPolicy) backoff(n int) time.Duration {
	ceil := p.MinDelay << min(n, 30)
	if ceil > p.MaxDelay || ceil <= 0 {
		ceil = p.MaxDelay
	}
	return rand.N(ceil + 1)
}

// next says whether a request of kind k that failed with err on attempt n
// (from 0) is retried, and after how long.
func (p RetryPolicy) next(ctx context.Context, k kind, n int, err error) (time.Duration, bool) {
	if n+1 >= p.MaxAttempts || ctx.Err() != nil {
		return 0, false
	}
	var perm *permanent
	if errors.As(err, &perm) {
		return 0, false
	}
	wait := p.backoff(n)
	var e *Error
	if !errors.As(err, &e) {
		// No answer: the request may or may not have been applied.
		if k == once {
			return 0, false
		}
	} else {
		switch {
		case e.Status == http.StatusTooManyRequests:
		case e.Status == http.StatusServiceUnavailable && e.Code == "outcome_unknown":
			if k != keyed {
				return 0, false
			}
		case e.Status == http.StatusServiceUnavailable:
		default:
			return 0, false
		}
		if e.RetryAfter > 0 {
			if e.RetryAfter > p.MaxRetryAfter {
				return 0, false
			}
			wait = e.RetryAfter + rand.N(p.MinDelay+1)
		}
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		return 0, false // the answer we have beats a wait that cannot end in time
	}
	return wait, true
}

// NewIdempotencyKey returns a random key (128 bits from crypto/rand, in
// hex) for the Idempotency-Key header. The client makes one per keyed call
// by itself; pass one explicitly (SubmitOptions) to retry a call across
// process restarts.
func NewIdempotencyKey() string {
	var b [16]byte
	if _, err := crand.Read(b[:]); err != nil {
		panic("podium: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}
