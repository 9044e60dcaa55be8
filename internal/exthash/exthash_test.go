package exthash

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

func mix(x uint64) uint64 { return x * 0x9E3779B97F4A7C15 }

// TestGrowAndSplit adds random distinct words one at a time, growing or
// splitting a full segment as the callers do, checks the directory after
// every growth, and finds every word afterwards.
func TestGrowAndSplit(t *testing.T) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("SEED=%d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	for _, maxDepth := range []uint8{32, 2} { // 2: segments grow past MaxSeg
		var d Dir
		d.Size(0)
		words := map[uint64]bool{}
		for len(words) < 60_000 {
			x := r.Uint64() | 1 // never 0, the empty slot
			if words[x] {
				continue
			}
			words[x] = true
			h := mix(x)
			if s := d.Seg(h); s.Full() {
				d.Grow(s, h, maxDepth, mix)
				if _, err := d.Check(mix); err != nil {
					t.Fatalf("SEED=%d: after a growth at %d words: %v", seed, len(words), err)
				}
			}
			d.Seg(h).Put(x, h)
		}
		n, err := d.Check(mix)
		if err != nil || n != len(words) {
			t.Fatalf("SEED=%d: %d words, check %v; want %d", seed, n, err, len(words))
		}
		if maxDepth == 32 && d.Depth < 3 {
			t.Errorf("SEED=%d: directory depth %d: nothing split", seed, d.Depth)
		}
		for x := range words {
			h := mix(x)
			slots := d.Tabs[h>>(64-d.Depth)]
			for i := Home(h, len(slots)); slots[i] != x; i = (i + 1) % len(slots) {
				if slots[i] == 0 {
					t.Fatalf("SEED=%d: word %x not found", seed, x)
				}
			}
		}
	}
}
