package main

import (
	"testing"

	"github.com/podiumhq/podium/engine"
)

// TestOldPeriodsFlag: --old-periods-bytes defaults to the engine's
// default, comes from PODIUM_OLD_PERIODS_BYTES too, 0 reaches the engine
// as "keep none", and a negative size is refused.
func TestOldPeriodsFlag(t *testing.T) {
	c, err := parseServe()
	if err != nil || c.oldPeriodsBytes() != engine.DefaultOldPeriodsBytes {
		t.Fatalf("default: %d (%v)", c.oldPeriodsBytes(), err)
	}
	if c, err = parseServe("--old-periods-bytes", "0"); err != nil || c.oldPeriodsBytes() >= 0 {
		t.Fatalf("0 keeps none: engine gets %d (%v)", c.oldPeriodsBytes(), err)
	}
	t.Setenv("PODIUM_OLD_PERIODS_BYTES", "1048576")
	if c, err = parseServe(); err != nil || c.oldPeriodsBytes() != 1<<20 {
		t.Fatalf("from the environment: %d (%v)", c.oldPeriodsBytes(), err)
	}
	if c, err = parseServe("--old-periods-bytes", "-1"); err != nil {
		t.Fatal(err)
	}
	if err := c.validate(); err == nil {
		t.Fatal("a negative --old-periods-bytes was taken")
	}
}
