package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
)

// BenchmarkEmptyBoardMemory measures what an empty board costs in memory
// (issue 22: a million boards on one node, at most 1 KiB each): the live
// heap after GC of an engine holding n boards made by PUT, minus the same
// engine's with none, divided by n. It also reports the CPU per PUT.
//
//	go test ./engine -run '^$' -bench EmptyBoardMemory -benchtime 1x
//
// HEAPPROF=<file> also writes the heap profile taken with the n boards
// live (go tool pprof -sample_index=inuse_space engine.test <file>).
func BenchmarkEmptyBoardMemory(b *testing.B) {
	const n = 20_000
	for b.Loop() {
		st, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
		if err != nil {
			b.Fatal(err)
		}
		eng := startOn(b, st, engine.Config{})
		ctx := context.Background()
		base := liveHeap()
		c0 := cpuTime()
		for i := range n {
			if _, _, err := eng.PutBoard(ctx, boardSpec(fmt.Sprintf("level-%07d", i))); err != nil {
				b.Fatal(err)
			}
		}
		cpu := cpuTime() - c0
		after := liveHeap()
		if f := os.Getenv("HEAPPROF"); f != "" {
			w, _ := os.Create(f)
			pprof.WriteHeapProfile(w)
			w.Close()
		}
		b.ReportMetric(float64(after-base)/n, "heap-B/board")
		b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-us/put")
		runtime.KeepAlive(eng)
		eng.Close()
		st.Close()
	}
}

func liveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
