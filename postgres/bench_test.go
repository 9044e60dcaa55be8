package postgres

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
)

var benchEntries = flag.Int("entries", 1_000_000, "entries on the board of BenchmarkLoadEntries1M")

// scoreBatch fills batch with n scores from players drawn out of a pool of
// the given size, as the engine would: a log row each, and an entry upsert
// each for a checkpoint.
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

func (g *scoreBatch) next(n int, upserts bool) *podium.Batch {
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
		if upserts {
			g.batch.Upserts = append(g.batch.Upserts, podium.Entry{Board: "bench", Period: "all", Player: p, Keys: keys, At: now, Seq: g.seq})
		}
	}
	return &g.batch
}

// BenchmarkCommitLog measures the group commits of the write path: n log
// rows (and the board's head) per transaction, each durable when Commit
// returns, one committer at a time as the engine commits.
func BenchmarkCommitLog(b *testing.B) {
	for _, n := range []int{1, 16, 64, 1000} {
		b.Run(fmt.Sprintf("scores=%d", n), func(b *testing.B) {
			s, _ := openTest(b, Options{})
			g := newScoreBatch(100_000)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := s.Commit(ctx, g.next(n, false)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "scores/s")
		})
	}
}

// BenchmarkCommitLogParallel measures commits of 16 log rows from 8
// committers at once (several podium nodes on one database), each
// writing its own boards (board=own) or all one board (board=shared).
// PostgreSQL flushes the WAL once for the commits that wait together; the
// commits of one board queue for its head row.
func BenchmarkCommitLogParallel(b *testing.B) {
	const n = 16
	for _, shared := range []bool{false, true} {
		name := "board=own"
		if shared {
			name = "board=shared"
		}
		b.Run(name, func(b *testing.B) {
			s, _ := openTest(b, Options{MaxConns: 8})
			var next, sharedSeq atomic.Uint64
			b.SetParallelism(4) // 8 goroutines on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				board := fmt.Sprintf("bench-%d", next.Add(1))
				var seq uint64
				for pb.Next() {
					var batch *podium.Batch
					if shared {
						batch = scores("bench", sharedSeq.Add(n)-n+1, n)
					} else {
						batch = scores(board, seq+1, n)
						seq += n
					}
					batch.Upserts = nil
					if err := s.Commit(ctx, batch); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "scores/s")
		})
	}
}

// BenchmarkCommit1000 measures checkpoint-shaped commits: 1000 log rows
// and 1000 entry upserts, from a hot set of 1000 players and from 100k
// players (every upsert on a different page).
func BenchmarkCommit1000(b *testing.B) {
	for _, players := range []int{1000, 100_000} {
		b.Run(fmt.Sprintf("players=%d", players), func(b *testing.B) {
			s, _ := openTest(b, Options{})
			g := newScoreBatch(players)
			for range 20 { // the board fills up to its steady size
				if err := s.Commit(ctx, g.next(1000, true)); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				if err := s.Commit(ctx, g.next(1000, true)); err != nil {
					b.Fatal(err)
				}
			}
			scores := float64(b.N*1000) / b.Elapsed().Seconds()
			b.ReportMetric(scores, "scores/s")
			b.ReportMetric(2*scores, "rows/s")
		})
	}
}

// BenchmarkCommitLogCopy is the alternative the write path was measured
// against: COPY of the log rows (binary, through pgx) and the head update
// in an explicit transaction. COPY needs its own round trips (BEGIN, the
// copy, the head, COMMIT) where the unnest statements share one.
func BenchmarkCommitLogCopy(b *testing.B) {
	for _, n := range []int{16, 1000} {
		b.Run(fmt.Sprintf("scores=%d", n), func(b *testing.B) {
			s, _ := openTest(b, Options{})
			g := newScoreBatch(100_000)
			cols := []string{"board", "seq", "at_ms", "k1", "k2", "k3", "k4", "kind", "period", "player", "meta"}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				batch := g.next(n, false)
				err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
					subs := batch.Submissions
					_, err := tx.CopyFrom(ctx, pgx.Identifier{"submissions"}, cols, pgx.CopyFromSlice(len(subs), func(i int) ([]any, error) {
						sub := &subs[i]
						return []any{sub.Board, int64(sub.Seq), podium.Millis(sub.At), sub.Keys[0], sub.Keys[1], nil, nil, int16(sub.Kind), sub.Period, sub.Player, nil}, nil
					}))
					if err != nil {
						return err
					}
					_, err = tx.Exec(ctx, `INSERT INTO board_heads (board, seq) VALUES ($1, $2)
						ON CONFLICT (board) DO UPDATE SET seq = greatest(board_heads.seq, excluded.seq)`, "bench", int64(subs[len(subs)-1].Seq))
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "scores/s")
		})
	}
}

// BenchmarkLoadEntries1M measures the start-up scan of a board with
// -entries entries (1M by default). Filling the board takes a few seconds.
func BenchmarkLoadEntries1M(b *testing.B) {
	s, _ := openTest(b, Options{})
	n := *benchEntries
	es := make([]podium.Entry, n)
	now := time.Now()
	for i := range es {
		es[i] = podium.Entry{
			Board: "big", Period: "all", Player: fmt.Sprintf("player-%07d", i),
			Keys: []int64{rand.Int64N(1e9), rand.Int64N(1000)}, At: now.Add(time.Duration(i) * time.Millisecond), Seq: uint64(i + 1),
		}
	}
	// The rebuild computes entries in no particular order.
	rand.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	t0 := time.Now()
	if err := s.ReplaceEntries(ctx, "big", es, uint64(n)); err != nil {
		b.Fatal(err)
	}
	b.Logf("ReplaceEntries of %d entries: %v", n, time.Since(t0))
	es = nil
	if _, err := s.pool.Exec(ctx, "VACUUM ANALYZE entries"); err != nil {
		b.Fatal(err)
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
