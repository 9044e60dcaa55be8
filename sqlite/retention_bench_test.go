package sqlite

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// BenchmarkPrunePeriods deletes one old day of 100,000 entries and their
// 100,000 log rows in transactions of 1,000 rows, as the retention sweep
// does: it reports the rows deleted a second and the transactions' median,
// 99th percentile and longest time, the longest a commit of the writer
// waits for the sweep.
//
//	go test -run '^$' -bench PrunePeriods -benchtime=1x ./sqlite/
func BenchmarkPrunePeriods(b *testing.B) {
	ctx := context.Background()
	const n, batch = 100_000, 1000
	for range b.N {
		b.StopTimer()
		s := benchStore(b, Options{Sync: "normal"})
		bd := &podium.Board{ID: "d", Keys: []podium.KeyDef{{Name: "k", Order: podium.Desc}}, Reset: podium.Reset{Every: podium.Daily}}
		if err := bd.Normalize(); err != nil {
			b.Fatal(err)
		}
		if err := s.PutBoard(ctx, bd); err != nil {
			b.Fatal(err)
		}
		at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
		var seq uint64
		for _, day := range []string{"2026-11-01", "2026-11-10"} {
			for start := 0; start < n; start += 5000 {
				var bt podium.Batch
				for i := start; i < start+5000; i++ {
					seq++
					p := fmt.Sprintf("p%06d", i)
					bt.Submissions = append(bt.Submissions, podium.Submission{Seq: seq, Board: "d", Period: day, Player: p, Keys: []int64{int64(i)}, At: at})
					bt.Upserts = append(bt.Upserts, podium.Entry{Board: "d", Period: day, Player: p, Keys: []int64{int64(i)}, At: at, Seq: seq})
				}
				if err := s.Commit(ctx, &bt); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StartTimer()
		t0 := time.Now()
		var rows int
		var took []time.Duration
		for {
			t := time.Now()
			k, err := s.PrunePeriods(ctx, "d", "2026-11-10", batch)
			if err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(t))
			rows += k
			if k < batch {
				break
			}
		}
		el := time.Since(t0)
		if rows != 2*n {
			b.Fatalf("deleted %d rows, want %d", rows, 2*n)
		}
		slices.Sort(took)
		b.ReportMetric(float64(rows)/el.Seconds(), "rows/s")
		b.ReportMetric(float64(took[len(took)/2].Microseconds()), "median-tx-µs")
		b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-tx-µs")
		b.ReportMetric(float64(took[len(took)-1].Microseconds()), "longest-tx-µs")
	}
}
