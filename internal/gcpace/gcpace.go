// Package gcpace keeps the Go collector's headroom bounded as the live heap
// grows, so that a node's memory grows with its entries at close to their
// live size rather than twice it.
//
// With the default GOGC=100 the heap may grow to twice what was live after
// the last collection before the next one starts. podium's live heap is
// mostly its indexes and intern table (about 86 bytes per entry of a 1-key
// board with 13-byte ids), while the garbage it makes per request does not
// grow with them: a headroom of twice the indexes buys nothing but RSS (141
// MB per million entries measured, docs/BENCHMARKS.md). The pacer keeps the
// default while the live heap is small, then holds the headroom at Floor
// until a quarter of the live heap is larger, and a quarter after that:
//
//	headroom = min(live, max(Floor, live/4))   (as a GOGC percentage, >= Min)
//
// so a collection never comes more often than one in a 64 MiB heap at the
// default would, and a large node pays 25% over its live heap, not 100%.
// An operator's GOGC in the environment wins: the pacer does nothing.
package gcpace

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

const (
	// Floor is the headroom the pacer never goes below, in bytes.
	Floor = 64 << 20
	// Min is the lowest GOGC it sets.
	Min = 25
	// Every is how often it looks at the live heap.
	Every = 500 * time.Millisecond
)

// Percent is the GOGC value for a live heap of live bytes.
func Percent(live uint64) int {
	if live == 0 {
		return 100
	}
	head := max(uint64(Floor), live/4)
	if head >= live {
		return 100
	}
	return max(Min, int(head*100/live))
}

// Run paces the collector until ctx ends, unless GOGC is set in the
// environment; it restores the percentage it found when it returns.
func Run(ctx context.Context) {
	if os.Getenv("GOGC") != "" {
		return
	}
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	cur := 100
	t := time.NewTicker(Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return // not measured by this runtime: leave the default
		}
		if p := Percent(sample[0].Value.Uint64()); p != cur {
			debug.SetGCPercent(p)
			cur = p
		}
	}
}
