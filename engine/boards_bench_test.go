package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
)

// The board-count benchmarks (issue 17 item 9): what one board costs as
// their number grows. A site with a board per puzzle, level or day
// reaches 100,000 boards.
//
//	go test ./engine -run '^$' -bench 'PutBoardAt|StartBoards' -benchtime 200x
//
// Each database of n boards is built once (through the engine, so it is
// what a site that made them would have) and kept under the temp
// directory; each run works on a copy.

// boardCountSizes are the board counts measured: PODIUM_BENCH_BOARDS
// (comma-separated) replaces them.
var boardCountSizes = func() []int {
	v := os.Getenv("PODIUM_BENCH_BOARDS")
	if v == "" {
		return []int{1_000, 100_000}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			panic("PODIUM_BENCH_BOARDS: " + err.Error())
		}
		out = append(out, n)
	}
	return out
}()

// boardSpec is the board the benchmarks make: public, two keys, a daily
// reset (so its current and previous periods are what a start loads).
func boardSpec(id string) *podium.Board {
	return &podium.Board{ID: id, Title: "Level " + id, Public: true, Reset: podium.Reset{Every: podium.Daily, TZ: "UTC"},
		Keys: []podium.KeyDef{{Name: "time_ms", Order: podium.Asc}, {Name: "moves", Order: podium.Asc}}}
}

// boardsDB returns a database holding n boards b0000000.. (cached under
// the temp directory), each with a score or two.
func boardsDB(b *testing.B, n int) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("podium-boards-%d", n))
	path := filepath.Join(dir, "podium.db")
	if _, err := os.Stat(path + ".done"); err == nil {
		return path
	}
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
	st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	eng := engine.New(engine.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx := context.Background()
	if err := eng.Start(ctx); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	for i := range n {
		id := fmt.Sprintf("b%07d", i)
		if _, _, err := eng.PutBoard(ctx, boardSpec(id)); err != nil {
			b.Fatal(err)
		}
		if i%10 == 0 {
			sc := []engine.Score{{Board: id, Player: "p" + strconv.Itoa(i%1000), Keys: []int64{int64(40000 + i%777), 100}}}
			if _, err := eng.Submit(ctx, sc, true, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Logf("made %d boards in %v", n, time.Since(t0).Round(time.Millisecond))
	eng.Close()
	st.Close()
	os.WriteFile(path+".done", nil, 0o644)
	return path
}

// copyDB copies a database (its WAL is checkpointed on close) into a new
// temp directory.
func copyDB(b *testing.B, path string) string {
	b.Helper()
	dst := filepath.Join(b.TempDir(), "podium.db")
	src, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(dst, src, 0o600); err != nil {
		b.Fatal(err)
	}
	return dst
}

func startBoards(b *testing.B, path string) (*engine.Engine, *sqlite.Store, time.Duration) {
	b.Helper()
	t0 := time.Now()
	st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	eng := engine.New(engine.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := eng.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return eng, st, time.Since(t0)
}

// BenchmarkPutBoardAt measures creating one more board (PUT of a new id)
// on an engine that holds n boards: it should not depend on n.
func BenchmarkPutBoardAt(b *testing.B) {
	for _, n := range boardCountSizes {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			eng, st, _ := startBoards(b, copyDB(b, boardsDB(b, n)))
			defer st.Close()
			defer eng.Close()
			ctx := context.Background()
			i := 0
			for b.Loop() {
				if _, _, err := eng.PutBoard(ctx, boardSpec(fmt.Sprintf("n%07d", i))); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkStartBoards measures a start (open the store, load every
// board) with n boards.
func BenchmarkStartBoards(b *testing.B) {
	for _, n := range boardCountSizes {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			path := copyDB(b, boardsDB(b, n))
			for b.Loop() {
				runtime.GC()
				eng, st, d := startBoards(b, path)
				b.ReportMetric(float64(d.Microseconds())/1000, "ms/start")
				if got := len(eng.Boards(false)); got != n {
					b.Fatalf("%d boards loaded, want %d", got, n)
				}
				eng.Close()
				st.Close()
			}
		})
	}
}
