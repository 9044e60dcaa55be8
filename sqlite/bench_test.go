package sqlite

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

var (
	benchEntries = flag.Int("entries", 1_000_000, "entries on the board of BenchmarkLoadEntries1M")
	benchChunks  = flag.Bool("chunks", false, "BenchmarkCommit1000 also compares rows per INSERT statement")
)

// benchStore opens a store in b's temporary directory.
func benchStore(b *testing.B, opts Options) *Store {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// scoreBatch fills batch with n scores from players drawn out of a pool of
// the given size, as the engine would: one log row and one entry upsert
// each.
type scoreBatch struct {
	rng     *rand.Rand
	names   []string
	seq     uint64
	batch   podium.Batch
	keysBuf []int64
}

func newScoreBatch(players int) *scoreBatch {
	g := &scoreBatch{rng: rand.New(rand.NewPCG(1, 2)), names: make([]string, players)}
	for i := range g.names {
		g.names[i] = fmt.Sprintf("player-%07d", i)
	}
	return g
}

func (g *scoreBatch) next(n int) *podium.Batch {
	g.batch.Reset()
	now := time.Now()
	if cap(g.keysBuf) < 2*n {
		g.keysBuf = make([]int64, 2*n)
	}
	for i := range n {
		g.seq++
		p := g.names[g.rng.IntN(len(g.names))]
		keys := g.keysBuf[2*i : 2*i+2 : 2*i+2]
		keys[0], keys[1] = g.rng.Int64N(1_000_000), g.rng.Int64N(1000)
		g.batch.Submissions = append(g.batch.Submissions, podium.Submission{Seq: g.seq, Board: "bench", Period: "all", Player: p, Keys: keys, At: now})
		g.batch.Upserts = append(g.batch.Upserts, podium.Entry{Board: "bench", Period: "all", Player: p, Keys: keys, At: now, Seq: g.seq})
	}
	return &g.batch
}

// BenchmarkCommit1 measures small group commits: one score (a log row and an
// entry upsert) per transaction.
func BenchmarkCommit1(b *testing.B) {
	for _, sync := range []string{"full", "normal"} {
		b.Run("sync="+sync, func(b *testing.B) {
			s := benchStore(b, Options{Sync: sync})
			g := newScoreBatch(100_000)
			for range b.N {
				if err := s.Commit(ctx, g.next(1)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}

// BenchmarkCommit1000 measures full group commits of 1000 scores, from a hot
// set of 1000 players and from 100k players (every upsert on a different
// page: the worst case for a B-tree).
func BenchmarkCommit1000(b *testing.B) {
	chunkings := [][]int{chunkSizes}
	if *benchChunks {
		chunkings = [][]int{{1}, {16, 4, 1}, {32, 8, 1}, {64, 16, 4, 1}, {128, 32, 8, 1}}
	}
	orig := chunkSizes
	defer func() { chunkSizes = orig }()
	for _, chunks := range chunkings {
		for _, sync := range []string{"full", "normal"} {
			for _, players := range []int{1000, 100_000} {
				name := fmt.Sprintf("sync=%s/players=%d", sync, players)
				if *benchChunks {
					name = fmt.Sprintf("rows/stmt=%d/%s", chunks[0], name)
				}
				b.Run(name, func(b *testing.B) {
					chunkSizes = chunks
					s := benchStore(b, Options{Sync: sync})
					g := newScoreBatch(players)
					for range 20 { // the board fills up to its steady size
						if err := s.Commit(ctx, g.next(1000)); err != nil {
							b.Fatal(err)
						}
					}
					b.ResetTimer()
					for range b.N {
						if err := s.Commit(ctx, g.next(1000)); err != nil {
							b.Fatal(err)
						}
					}
					scores := float64(b.N*1000) / b.Elapsed().Seconds()
					b.ReportMetric(scores, "scores/s")
					b.ReportMetric(2*scores, "rows/s")
				})
			}
		}
	}
}

// BenchmarkCommitLog measures the group commits of the write path: log rows
// only (entries are checkpointed behind the log), 1 to 1000 a transaction,
// on a board without and with the player index (a quota; player_index.go).
func BenchmarkCommitLog(b *testing.B) {
	for _, n := range []int{1, 16, 64, 1000} {
		for _, sync := range []string{"full", "normal"} {
			for _, index := range []bool{false, true} {
				b.Run(fmt.Sprintf("scores=%d/sync=%s/index=%v", n, sync, index), func(b *testing.B) {
					benchCommitLog(b, n, sync, index)
				})
			}
		}
	}
}

func benchCommitLog(b *testing.B, n int, sync string, index bool) {
	s := benchStore(b, Options{Sync: sync})
	if index {
		bd := &podium.Board{ID: "bench", Keys: []podium.KeyDef{{Name: "a", Order: podium.Desc}, {Name: "b", Order: podium.Desc}}, Quota: &podium.Quota{Max: 1000}}
		if err := bd.Normalize(); err != nil {
			b.Fatal(err)
		}
		if err := s.PutBoard(ctx, bd); err != nil {
			b.Fatal(err)
		}
	}
	g := newScoreBatch(100_000)
	for range b.N {
		batch := g.next(n)
		batch.Upserts = batch.Upserts[:0]
		if err := s.Commit(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "scores/s")
}

// BenchmarkLoadEntries1M measures the start-up scan of a board with
// -entries entries (1M by default). Filling the board takes a few seconds.
func BenchmarkLoadEntries1M(b *testing.B) {
	s := benchStore(b, Options{Sync: "normal"})
	n := *benchEntries
	batch := podium.Batch{}
	now := time.Now()
	for i := 0; i < n; {
		batch.Reset()
		for ; i < n && len(batch.Upserts) < 10_000; i++ {
			batch.Upserts = append(batch.Upserts, podium.Entry{
				Board: "big", Period: "all", Player: fmt.Sprintf("player-%07d", i),
				Keys: []int64{rand.Int64N(1e9), rand.Int64N(1000)}, At: now.Add(time.Duration(i) * time.Millisecond), Seq: uint64(i + 1),
			})
		}
		if err := s.Commit(ctx, &batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	b.ReportAllocs()
	for range b.N {
		count, sum := 0, int64(0)
		err := s.LoadEntries(ctx, "big", "all", func(e *podium.Entry) error {
			count++
			sum += e.Keys[0]
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if count != n {
			b.Fatalf("loaded %d entries, want %d", count, n)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/load")
}

// bigStore fills a store with one board of n entries and the n logged
// submissions behind them, as a year of a busy game would leave it (the
// log is usually longer still: each replaced score stays in it).
func bigStore(b *testing.B, n int) *Store {
	b.Helper()
	s := benchStore(b, Options{Sync: "normal"})
	if err := s.PutBoard(ctx, &podium.Board{ID: "big", Keys: []podium.KeyDef{{Name: "t", Order: podium.Asc}, {Name: "v", Order: podium.Desc}}}); err != nil {
		b.Fatal(err)
	}
	batch := podium.Batch{}
	now := time.Now()
	for i := 0; i < n; {
		batch.Reset()
		for ; i < n && len(batch.Upserts) < 10_000; i++ {
			p := fmt.Sprintf("player-%07d", i)
			keys := []int64{rand.Int64N(1e9), rand.Int64N(1000)}
			at := now.Add(time.Duration(i) * time.Millisecond)
			batch.Submissions = append(batch.Submissions, podium.Submission{Seq: uint64(i + 1), Board: "big", Period: "all", Player: p, Keys: keys, At: at})
			batch.Upserts = append(batch.Upserts, podium.Entry{Board: "big", Period: "all", Player: p, Keys: keys, At: at, Seq: uint64(i + 1)})
		}
		if err := s.Commit(ctx, &batch); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Checkpoint(ctx); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkQuickCheck1M measures SQLite's quick_check and integrity_check
// on a database of -entries entries (1M by default) and as many logged
// submissions: podium runs quick_check before it starts after an unclean
// shutdown, so this is what a crash adds to the next start.
func BenchmarkQuickCheck1M(b *testing.B) {
	s := bigStore(b, *benchEntries)
	if fi, err := os.Stat(s.Path()); err == nil {
		b.Logf("database: %d MB", fi.Size()>>20)
	}
	for _, full := range []bool{false, true} {
		name := "quick_check"
		if full {
			name = "integrity_check"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				problems, err := integrityCheck(ctx, s.r, full)
				if err != nil || len(problems) > 0 {
					b.Fatal(problems, err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/check")
		})
	}
	b.Run("backup", func(b *testing.B) {
		for i := range b.N {
			if err := s.Backup(ctx, filepath.Join(b.TempDir(), fmt.Sprintf("backup-%d.db", i))); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/backup")
	})
}
