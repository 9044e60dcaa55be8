package main

import (
	"strings"
	"testing"
)

// TestSessionFlags: the session flags refuse a TTL under a minute, a
// longest TTL under the default, and a cap past 1000, naming the flag.
func TestSessionFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--session-ttl", "30s"},
		{"--session-ttl", "48h", "--session-max-ttl", "24h"},
		{"--session-cap", "5000"},
	} {
		code, _, errs := runCLI(t, append([]string{"serve", "--data", t.TempDir()}, args...)...)
		if code != 2 || !strings.Contains(errs, "--session-") {
			t.Fatalf("%v: %d %q", args, code, errs)
		}
	}
}
