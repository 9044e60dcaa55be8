package main

import (
	"testing"
	"time"
)

// TestRateStoreTimeoutFlag: --rate-store-timeout defaults to the 200ms the
// limiter always had, reaches the limiter's config, comes from the
// environment too, and is refused outside 1ms-1m (0, as in a zero
// Config, is the default).
func TestRateStoreTimeoutFlag(t *testing.T) {
	c, err := parseServe()
	if err != nil || c.RateLimit.StoreTimeout != 200*time.Millisecond {
		t.Fatalf("default: %v (%v)", c.RateLimit.StoreTimeout, err)
	}
	if _, _, err := c.RateLimit.parsed(); err != nil {
		t.Fatalf("default refused: %v", err)
	}
	if c, err = parseServe("--rate-store-timeout", "30s"); err != nil || c.RateLimit.StoreTimeout != 30*time.Second {
		t.Fatalf("30s: %v (%v)", c.RateLimit.StoreTimeout, err)
	}
	for _, bad := range []string{"500us", "2m", "-1s"} {
		if c, err = parseServe("--rate-store-timeout", bad); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.RateLimit.parsed(); err == nil {
			t.Fatalf("--rate-store-timeout %s was taken", bad)
		}
	}
	t.Setenv("PODIUM_RATE_STORE_TIMEOUT", "5s")
	if c, err = parseServe(); err != nil || c.RateLimit.StoreTimeout != 5*time.Second {
		t.Fatalf("from the environment: %v (%v)", c.RateLimit.StoreTimeout, err)
	}
}
