package postgres

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/podiumhq/podium"
)

// sharedBatch returns n scores on board from seq first on, shaped as a
// node in shared mode commits them: log rows, the entries they produce
// (written through) and the board's watermark.
func sharedBatch(g *scoreBatch, board string, first uint64, n int) *podium.Batch {
	g.seq = first - 1
	b := g.next(n, true)
	for i := range b.Submissions {
		b.Submissions[i].Board = board
		b.Upserts[i].Board = board
	}
	b.Watermarks = append(b.Watermarks[:0], podium.Watermark{Board: board, Seq: first + uint64(n) - 1})
	return b
}

// BenchmarkSharedCommit measures a group commit through a write
// transaction (Begin, which locks the board's head, then Commit: two
// round trips) against the same batch through Store.Commit (one round
// trip), one committer at a time: the price of the lock.
func BenchmarkSharedCommit(b *testing.B) {
	for _, n := range []int{1, 16, 64, 1000} {
		for _, path := range []string{"store", "tx"} {
			b.Run(fmt.Sprintf("scores=%d/path=%s", n, path), func(b *testing.B) {
				s, _ := openTest(b, Options{})
				if err := s.PutBoard(ctx, board("bench", 2)); err != nil {
					b.Fatal(err)
				}
				g := newScoreBatch(100_000)
				seq := uint64(1)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					batch := sharedBatch(g, "bench", seq, n)
					if path == "store" {
						if err := s.Commit(ctx, batch); err != nil {
							b.Fatal(err)
						}
					} else {
						tx, err := s.Begin(ctx, []string{"bench"})
						if err != nil {
							b.Fatal(err)
						}
						if err := tx.Commit(ctx, batch); err != nil {
							b.Fatal(err)
						}
					}
					seq += uint64(n)
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "scores/s")
			})
		}
	}
}

// BenchmarkSharedCommitParallel measures groups of 16 from 8 committers
// (nodes) through write transactions, each on boards of its own
// (board=own) or all on one board (board=shared), where they take turns
// holding its head: the cost of several nodes writing one board.
func BenchmarkSharedCommitParallel(b *testing.B) {
	const n = 16
	for _, shared := range []bool{false, true} {
		name := "board=own"
		if shared {
			name = "board=shared"
		}
		b.Run(name, func(b *testing.B) {
			s, _ := openTest(b, Options{MaxConns: 8})
			for i := range 9 {
				if err := s.PutBoard(ctx, board(fmt.Sprintf("bench-%d", i), 2)); err != nil {
					b.Fatal(err)
				}
			}
			var next atomic.Int64
			b.SetParallelism(4) // 8 goroutines on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				id := "bench-0"
				if !shared {
					id = fmt.Sprintf("bench-%d", next.Add(1))
				}
				g := newScoreBatch(100_000)
				for pb.Next() {
					tx, err := s.Begin(ctx, []string{id})
					if err != nil {
						b.Error(err)
						return
					}
					head, _, _ := tx.Head(id)
					if err := tx.Commit(ctx, sharedBatch(g, id, head+1, n)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "scores/s")
		})
	}
}

// BenchmarkNotify measures what telling the other nodes costs 8 committers
// of 16 log rows on boards of their own: nothing (notify=none), a
// pg_notify inside each commit's transaction (notify=in-commit: a
// committing transaction that notified holds a database-wide lock until
// its commit is durable, so such commits flush the WAL one after another
// instead of together), or a notice through the broker, which notifies
// from a connection of its own outside any commit (notify=broker).
func BenchmarkNotify(b *testing.B) {
	const n = 16
	for _, mode := range []string{"none", "in-commit", "broker"} {
		b.Run("notify="+mode, func(b *testing.B) {
			s, dsn := openTest(b, Options{MaxConns: 8})
			var br *Broker
			if mode == "broker" {
				br = newBroker(b, dsn, BrokerOptions{Env: testEnv()})
			}
			channel, _ := Channel(testEnv())
			var next atomic.Uint64
			b.SetParallelism(4) // 8 goroutines on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				id := fmt.Sprintf("bench-%d", next.Add(1))
				var seq uint64
				for pb.Next() {
					batch := scores(id, seq+1, n)
					batch.Upserts = nil
					seq += n
					var err error
					switch mode {
					case "in-commit":
						err = commitNotify(s, batch, channel, fmt.Sprintf(`{"b":%q,"s":%d}`, id, seq))
					default:
						err = s.Commit(ctx, batch)
					}
					if err != nil {
						b.Error(err)
						return
					}
					if br != nil {
						br.Publish(ctx, podium.Notice{Node: "bench", Board: id, Seq: seq})
					}
				}
			})
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "scores/s")
			if br != nil {
				b.ReportMetric(float64(br.Dropped()), "dropped")
			}
		})
	}
}

// commitNotify is Store.Commit with a pg_notify in the same transaction.
func commitNotify(s *Store, b *podium.Batch, channel, payload string) error {
	conn, err := s.pool.Acquire(context.Background())
	if err != nil {
		return err
	}
	defer conn.Release()
	st, err := prepare(ctx, conn.Conn())
	if err != nil {
		return err
	}
	w := s.writer()
	defer s.scratch.Put(w)
	var pb pgconn.Batch
	w.batch(&pb, st, b)
	pb.ExecParams("SELECT pg_notify($1, $2)", [][]byte{[]byte(channel), []byte(payload)}, nil, nil, nil)
	return execBatch(ctx, conn.Conn().PgConn(), &pb)
}

// BenchmarkChangesNothingNew measures a read of the change feed that finds
// nothing after the reader's position, over a feed of 10,000 changes: what
// a follower round that applies other nodes' rows pays to read the feed
// after them (engine.findNews), next to the log read (log=1) that a round
// without rows from a notice makes for one new row.
func BenchmarkChangesNothingNew(b *testing.B) {
	s, _ := openTest(b, Options{})
	if _, err := s.pool.Exec(ctx, `WITH l AS (UPDATE change_lock SET last = last + 10000 RETURNING last)
		INSERT INTO changes (id, kind, key) SELECT l.last - 10000 + g, 'player', 'p' || g FROM l, generate_series(1, 10000) g`); err != nil {
		b.Fatal(err)
	}
	last, err := s.LastChange(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Commit(ctx, scores("logged", 1, 1)); err != nil {
		b.Fatal(err)
	}
	b.Run("changes", func(b *testing.B) {
		for range b.N {
			if cs, err := s.Changes(ctx, last, 1000); err != nil || len(cs) != 0 {
				b.Fatal(cs, err)
			}
		}
	})
	b.Run("log=1", func(b *testing.B) {
		for range b.N {
			n := 0
			if err := s.Log(ctx, "logged", 0, func(*podium.Submission) error { n++; return nil }); err != nil || n != 1 {
				b.Fatal(n, err)
			}
		}
	})
}
