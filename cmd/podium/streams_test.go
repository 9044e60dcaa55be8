package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStreamFlags: --allowed-origins and --stream-memory come from flags
// or PODIUM_* variables, and a malformed origin stops serve before it
// touches the data directory.
func TestStreamFlags(t *testing.T) {
	t.Setenv("PODIUM_ALLOWED_ORIGINS", "https://a.example, https://*.b.example")
	t.Setenv("PODIUM_STREAM_MEMORY", "1048576")
	t.Setenv("PODIUM_STREAM_MEMORY_PER_IP", "65536")
	var c Config
	fs := newFlagSet("serve", "", io.Discard)
	c.flags(fs)
	if err := parse(fs, nil); err != nil {
		t.Fatal(err)
	}
	if got := c.allowedOrigins(); !slices.Equal(got, []string{"https://a.example", "https://*.b.example"}) || c.StreamMemory != 1<<20 || c.StreamMemoryPerIP != 64<<10 {
		t.Fatalf("origins %q, stream memory %d, per address %d", got, c.StreamMemory, c.StreamMemoryPerIP)
	}
	var d Config
	fs = newFlagSet("serve", "", io.Discard)
	d.flags(fs)
	os.Unsetenv("PODIUM_ALLOWED_ORIGINS")
	if err := parse(fs, nil); err != nil || !slices.Equal(d.allowedOrigins(), []string{"*"}) {
		t.Fatalf("default origins %q (%v)", d.allowedOrigins(), err)
	}

	dir := filepath.Join(t.TempDir(), "data")
	err := serveCmd(context.Background(), []string{"--data", dir, "--allowed-origins", "example.com"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "allowed-origins") {
		t.Fatalf("a malformed origin: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("serve created the data directory before refusing its flags: %v", err)
	}
}
