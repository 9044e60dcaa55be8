package main

import (
	"testing"
	"time"

	"github.com/podiumhq/podium/engine"
)

// TestIdempotencyFlags: --idempotency-ttl defaults to 48h and is refused
// under 24h (the API promises a day); --idempotency-bytes defaults to the
// engine's budget, 0 reaches the engine as "keep none", and a negative
// size is refused. Both come from the environment too.
func TestIdempotencyFlags(t *testing.T) {
	c, err := parseServe()
	if err != nil || c.IdempotencyTTL != 48*time.Hour || c.idempotencyBytes() != engine.DefaultIdempotencyBytes || c.validate() != nil {
		t.Fatalf("defaults: %v %d (%v, %v)", c.IdempotencyTTL, c.idempotencyBytes(), err, c.validate())
	}
	if c, err = parseServe("--idempotency-bytes", "0"); err != nil || c.idempotencyBytes() >= 0 {
		t.Fatalf("0 keeps none: engine gets %d (%v)", c.idempotencyBytes(), err)
	}
	for _, bad := range [][]string{{"--idempotency-ttl", "23h"}, {"--idempotency-bytes", "-1"}} {
		if c, err = parseServe(bad...); err != nil {
			t.Fatal(err)
		}
		if err := c.validate(); err == nil {
			t.Fatalf("%v was taken", bad)
		}
	}
	t.Setenv("PODIUM_IDEMPOTENCY_TTL", "72h")
	t.Setenv("PODIUM_IDEMPOTENCY_BYTES", "1048576")
	if c, err = parseServe(); err != nil || c.IdempotencyTTL != 72*time.Hour || c.idempotencyBytes() != 1<<20 || c.validate() != nil {
		t.Fatalf("from the environment: %v %d (%v)", c.IdempotencyTTL, c.idempotencyBytes(), err)
	}
}
