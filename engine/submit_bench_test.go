package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// BenchmarkSubmitBatch measures the engine's side of a batch submit: one
// writer sends batches of 1000 random scores for 100,000 players to a best
// board that already ranks them all (most scores do not improve, as on a
// board in use), SQLite at sync=normal so the disk is not what is timed.
//
//	go test ./engine -run '^$' -bench SubmitBatch -benchtime 3s
func BenchmarkSubmitBatch(b *testing.B) {
	eng, _ := benchBestBoard(b, "score")
	const players, batch = 100_000, 1000
	names := make([]string, players)
	for i := range names {
		names[i] = fmt.Sprintf("p%d", i)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	scores := make([]engine.Score, batch)
	submit := func(fill func(j int) int) {
		for j := range scores {
			scores[j] = engine.Score{Board: "b", Player: names[fill(j)], Keys: []int64{rng.Int64N(1_000_000_000)}}
		}
		if _, err := eng.Submit(context.Background(), scores, false, nil); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < players; i += batch {
		submit(func(j int) int { return i + j })
	}
	b.ResetTimer()
	cpu0 := processCPU(b)
	for range b.N {
		submit(func(int) int { return rng.IntN(players) })
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "scores/s")
	// CPU time is steadier than wall time on a machine shared with others.
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N*batch), "cpu-ns/score")
}

// processCPU returns the user and system CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchBestBoard starts an engine on a SQLite store at sync=normal in b's
// temporary directory, with one best board "b" of one descending key,
// closed when b ends; it returns the engine and the board as created.
func benchBestBoard(b *testing.B, key string) (*engine.Engine, *podium.Board) {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	eng := modules.Engine(engine.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := eng.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Close() })
	bd := &podium.Board{ID: "b", Keys: []podium.KeyDef{{Name: key, Order: podium.Desc}}, Mode: podium.Best}
	if err := bd.Normalize(); err != nil {
		b.Fatal(err)
	}
	if _, _, err := eng.PutBoard(context.Background(), bd); err != nil {
		b.Fatal(err)
	}
	return eng, bd
}
