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
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/sqlite"
)

// The board-count benchmarks (issue 17 item 9): what one board costs as
// their number grows. A site with a board per puzzle, level or day
// reaches 100,000 boards.
//
//	go test ./engine -run '^$' -bench 'PutBoardAt|StartBoards' -benchtime 200x
//
// Each database of n boards is made once, through the engine (a PUT each,
// and a score on one board in ten), and kept: SQLite under the temp
// directory (podium-boards-<n>), PostgreSQL (when PODIUM_TEST_POSTGRES is
// set) in the schema podium_bench_boards_<n>. Making it is logged with
// its time: that is the "create n boards" figure. Each SQLite run works on
// a copy; a PostgreSQL run deletes the boards it made.

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

// cpuTime is the CPU time this process has used (user and system): on a
// shared machine the wall clock also counts the time it waited for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var benchLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// boardsDB is a database of boards for the benchmarks: fresh readies a
// copy to work on (SQLite) and returns what opens a store on it (the
// engine's Config.Node set for PostgreSQL).
type boardsDB struct {
	kind  string
	fresh func(b *testing.B) func() (podium.Store, engine.Config)
}

func (db boardsDB) open(b *testing.B) (podium.Store, engine.Config) { return db.fresh(b)() }

// fillBoards makes n boards b0000000.. through an engine on st, each with a
// score or two, and logs how long that took.
func fillBoards(b *testing.B, st podium.Store, cfg engine.Config, n int) {
	b.Helper()
	cfg.Store, cfg.Logger = st, benchLog
	eng := modules.Engine(cfg)
	ctx := context.Background()
	if err := eng.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	t0, c0 := time.Now(), cpuTime()
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
	b.Logf("made %d boards (and %d scores) in %v, %v of CPU", n, (n+9)/10, time.Since(t0).Round(time.Millisecond), (cpuTime() - c0).Round(time.Millisecond))
}

// sqliteBoards returns the SQLite database of n boards (made once), a copy
// of it for each open.
func sqliteBoards(b *testing.B, n int) boardsDB {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("podium-boards-%d", n))
	path := filepath.Join(dir, "podium.db")
	if _, err := os.Stat(path + ".done"); err != nil {
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
		st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
		if err != nil {
			b.Fatal(err)
		}
		fillBoards(b, st, engine.Config{}, n)
		st.Close()
		os.WriteFile(path+".done", nil, 0o644)
	}
	return boardsDB{kind: "sqlite", fresh: func(b *testing.B) func() (podium.Store, engine.Config) {
		dst := filepath.Join(b.TempDir(), "podium.db")
		src, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(dst, src, 0o600); err != nil {
			b.Fatal(err)
		}
		return func() (podium.Store, engine.Config) {
			st, err := sqlite.Open(dst, sqlite.Options{Sync: "normal"})
			if err != nil {
				b.Fatal(err)
			}
			return st, engine.Config{}
		}
	}}
}

// postgresBoards returns the PostgreSQL schema of n boards (made once), in
// shared mode; it skips without PODIUM_TEST_POSTGRES.
func postgresBoards(b *testing.B, n int) boardsDB {
	base := pgtest.DSN(b)
	schema := fmt.Sprintf("podium_bench_boards_%d", n)
	dsn := pgtest.WithParam(b, base, "search_path", schema)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		b.Fatal(err)
	}
	var done bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'bench_done')", schema).Scan(&done)
	if err == nil && !done {
		_, err = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE; CREATE SCHEMA "+schema)
	}
	conn.Close(ctx)
	if err != nil {
		b.Fatal(err)
	}
	open := func(b *testing.B) (podium.Store, engine.Config) {
		st, err := postgres.Open(ctx, dsn, postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return st, engine.Config{Node: "bench", PollEvery: time.Hour}
	}
	if !done {
		st, cfg := open(b)
		fillBoards(b, st, cfg, n)
		if err := st.Ping(ctx); err != nil {
			b.Fatal(err)
		}
		st.Close()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			b.Fatal(err)
		}
		_, err = conn.Exec(ctx, "CREATE TABLE bench_done ()")
		conn.Close(ctx)
		if err != nil {
			b.Fatal(err)
		}
	}
	return boardsDB{kind: "postgres", fresh: func(*testing.B) func() (podium.Store, engine.Config) {
		return func() (podium.Store, engine.Config) { return open(b) }
	}}
}

// eachDB runs f on the databases of each size: SQLite, then PostgreSQL
// when PODIUM_TEST_POSTGRES is set.
func eachDB(b *testing.B, f func(b *testing.B, db boardsDB, n int)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		for _, n := range boardCountSizes {
			b.Run(kind+"/"+strconv.Itoa(n), func(b *testing.B) {
				var db boardsDB
				if kind == "sqlite" {
					db = sqliteBoards(b, n)
				} else {
					db = postgresBoards(b, n)
				}
				f(b, db, n)
			})
		}
	}
}

func startOn(b *testing.B, st podium.Store, cfg engine.Config) *engine.Engine {
	b.Helper()
	cfg.Store, cfg.Logger = st, benchLog
	eng := modules.Engine(cfg)
	if err := eng.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return eng
}

// BenchmarkPutBoardAt measures creating one more board (a PUT of a new id)
// on an engine that holds n boards: it should not depend on n. It reports
// the wall time of a PUT (ns/op) and the process's CPU per PUT.
func BenchmarkPutBoardAt(b *testing.B) {
	eachDB(b, func(b *testing.B, db boardsDB, n int) {
		st, cfg := db.open(b)
		defer st.Close()
		eng := startOn(b, st, cfg)
		defer eng.Close()
		ctx := context.Background()
		// Let what a start leaves running (the feed pruner's first pass)
		// finish first.
		time.Sleep(1500 * time.Millisecond)
		i := 0
		c0 := cpuTime()
		for b.Loop() {
			if _, _, err := eng.PutBoard(ctx, boardSpec(fmt.Sprintf("n%07d", i))); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64((cpuTime()-c0).Microseconds())/float64(i), "cpu-us/put")
		if db.kind == "postgres" { // keep the schema at n boards
			for j := range i {
				if err := eng.DeleteBoard(ctx, fmt.Sprintf("n%07d", j)); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkStartBoards measures a start (open the store, load every
// board) with n boards: wall time and the process's CPU.
func BenchmarkStartBoards(b *testing.B) {
	eachDB(b, func(b *testing.B, db boardsDB, n int) {
		for b.Loop() {
			b.StopTimer()
			open := db.fresh(b)
			runtime.GC()
			b.StartTimer()
			t0, c0 := time.Now(), cpuTime()
			st, cfg := open()
			eng := startOn(b, st, cfg)
			b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000, "cpu-ms/start")
			b.ReportMetric(float64(time.Since(t0).Microseconds())/1000, "ms/start")
			if got := len(eng.Boards(false)); got != n {
				b.Fatalf("%d boards loaded, want %d", got, n)
			}
			eng.Close()
			st.Close()
		}
	})
}
