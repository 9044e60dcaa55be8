package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// startupDB builds (once per directory) a database with one board of n
// entries on two keys, as a year of a busy game would leave it.
func startupDB(b *testing.B, n int) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("podium-startup-%d", n))
	path := filepath.Join(dir, "podium.db")
	if _, err := os.Stat(path + ".done"); err == nil {
		if st, err := sqlite.Open(path, sqlite.Options{}); err == nil {
			st.Close()
			return path
		}
		// Built by an older schema: build it again.
	}
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
	st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	bd := &podium.Board{ID: "big", Keys: []podium.KeyDef{{Name: "time_ms", Order: podium.Asc}, {Name: "bbbv", Order: podium.Desc}}}
	bd.Normalize()
	if err := st.PutBoard(ctx, bd); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	entries := make([]podium.Entry, n)
	for i := range entries {
		entries[i] = podium.Entry{Board: "big", Period: podium.PeriodAll, Player: fmt.Sprintf("player-%07d", i),
			Keys: []int64{int64(20000 + r.IntN(200000)), int64(100 + r.IntN(200))},
			At:   t0.Add(time.Duration(r.IntN(300*24*3600)) * time.Second), Seq: uint64(i + 1)}
	}
	if err := st.ReplaceEntries(ctx, "big", entries, uint64(n)); err != nil {
		b.Fatal(err)
	}
	os.WriteFile(path+".done", nil, 0o644)
	return path
}

// BenchmarkStartup1M measures the time from opening the database to a
// ready engine with 1M entries loaded into its index: the budget is 1 s.
func BenchmarkStartup1M(b *testing.B) { benchStartup(b, 1_000_000) }

func benchStartup(b *testing.B, n int) {
	path := startupDB(b, n)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for b.Loop() {
		runtime.GC()
		t0 := time.Now()
		st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
		if err != nil {
			b.Fatal(err)
		}
		eng := modules.Engine(engine.Config{Store: st, Logger: log})
		if err := eng.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		b.ReportMetric(float64(d.Milliseconds()), "ms/start")
		b.ReportMetric(float64(n)/d.Seconds(), "entries/s")
		page, _ := eng.Top(context.Background(), engine.Query{Board: "big"}, 0, 1)
		if page.Total != n {
			b.Fatalf("loaded %d entries, want %d", page.Total, n)
		}
		eng.Close()
		st.Close()
	}
}
