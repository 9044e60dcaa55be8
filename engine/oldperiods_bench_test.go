package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// oldPeriodsDB writes a database with one daily board "d" of days old
// periods (from 2026-11-01), each with the same n players, a third of
// them with a small meta object, and returns its path.
func oldPeriodsDB(b *testing.B, days, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "podium.db")
	st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	bd := &podium.Board{ID: "d", Mode: podium.Best, Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc}}, Reset: podium.Reset{Every: podium.Daily, TZ: "UTC"}}
	if err := bd.Normalize(); err != nil {
		b.Fatal(err)
	}
	if err := st.PutBoard(ctx, bd); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	seq := uint64(0)
	for d := range days {
		day := oldDay(d)
		period := podium.PeriodAt(bd.Reset, day).ID
		var batch podium.Batch
		for i := range n {
			seq++
			en := podium.Entry{Board: "d", Period: period, Player: fmt.Sprintf("player-%07d", i), Keys: []int64{r.Int64N(1_000_000)}, At: day, Seq: seq}
			if i%3 == 0 {
				en.Meta = json.RawMessage(fmt.Sprintf(`{"country":"NL","level":%d}`, r.IntN(50)))
			}
			batch.Upserts = append(batch.Upserts, en)
			if len(batch.Upserts) == 10_000 {
				if err := st.Commit(ctx, &batch); err != nil {
					b.Fatal(err)
				}
				batch.Upserts = batch.Upserts[:0]
			}
		}
		if err := st.Commit(ctx, &batch); err != nil {
			b.Fatal(err)
		}
	}
	return path
}

func openOld(b *testing.B, path string, budget int64) (*engine.Engine, func()) {
	b.Helper()
	st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	c := &clock{t: oldDay(60)}
	eng := modules.Engine(noScheduler(engine.Config{Store: st, Now: c.Now, OldPeriodsBytes: budget, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	if err := eng.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return eng, func() { eng.Close(); st.Close() }
}

// BenchmarkOldPeriodRead reads the top 100 of an old period of n entries:
// cached (kept under the budget) against evicted (no budget: every read
// loads the period from SQLite again, the cost a read pays after an
// eviction).
func BenchmarkOldPeriodRead(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		path := oldPeriodsDB(b, 1, n)
		period := podium.PeriodAt(podium.Reset{Every: podium.Daily, TZ: "UTC"}, oldDay(0)).ID
		for _, mode := range []struct {
			name   string
			budget int64
		}{{"cached", 0}, {"evicted", -1}} {
			b.Run(fmt.Sprintf("entries=%d/%s", n, mode.name), func(b *testing.B) {
				eng, done := openOld(b, path, mode.budget)
				defer done()
				ctx := context.Background()
				q := engine.Query{Board: "d", Period: period}
				if _, err := eng.Top(ctx, q, 0, 100); err != nil { // names interned, period cached if kept
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					p, err := eng.Top(ctx, q, 0, 100)
					if err != nil || len(p.Entries) != 100 {
						b.Fatalf("%d entries, %v", len(p.Entries), err)
					}
				}
				b.StopTimer()
				st := eng.OldPeriods()
				b.ReportMetric(float64(st.Loads), "loads")
			})
		}
	}
}

// BenchmarkOldPeriodMemory loads 5 old periods of n entries and reports
// the heap they take (measured, after GC) against the budget's estimate,
// per period. The players' names are interned by a first period read
// before the measurement, as they are shared by every period.
func BenchmarkOldPeriodMemory(b *testing.B) {
	const kept = 5
	for _, n := range []int{10_000, 100_000} {
		path := oldPeriodsDB(b, kept+1, n)
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			var heap, est float64
			for range b.N {
				eng, done := openOld(b, path, 0)
				ctx := context.Background()
				if _, err := eng.Top(ctx, engine.Query{Board: "d", Period: podium.PeriodAt(podium.Reset{Every: podium.Daily, TZ: "UTC"}, oldDay(kept)).ID}, 0, 1); err != nil {
					b.Fatal(err)
				}
				before := eng.OldPeriods().Bytes
				var m0, m1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				for d := range kept {
					if _, err := eng.Top(ctx, engine.Query{Board: "d", Period: podium.PeriodAt(podium.Reset{Every: podium.Daily, TZ: "UTC"}, oldDay(d)).ID}, 0, 1); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				heap += float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / kept
				est += float64(eng.OldPeriods().Bytes-before) / kept
				done()
			}
			b.ReportMetric(heap/float64(b.N), "heap-B/period")
			b.ReportMetric(est/float64(b.N), "est-B/period")
			b.ReportMetric(heap/float64(b.N)/float64(n), "heap-B/entry")
			b.ReportMetric(est/float64(b.N)/float64(n), "est-B/entry")
		})
	}
}
