package engine_test

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// BenchmarkAggregateWrite measures what an aggregate costs a write: groups
// of 1000 scores to one board (every score a new best of its player, so
// that every one moves the aggregates: the worst case) on SQLite, with no
// aggregate, with a three-level sum over it, as a best_k board, and as a
// best_k board under a best-k sum with fill.
//
//	go test -run '^$' -bench AggregateWrite ./engine/
func BenchmarkAggregateWrite(b *testing.B) {
	k := []podium.KeyDef{{Name: "ms", Order: podium.Asc}}
	levels := func(mode podium.Mode, keep int) []*podium.Board {
		var out []*podium.Board
		for _, l := range []string{"beg", "int", "exp"} {
			out = append(out, &podium.Board{ID: l, Keys: k, Mode: mode, Keep: keep})
		}
		return out
	}
	sum := &podium.Board{ID: "sum", Keys: k, Aggregate: &podium.Aggregate{Kind: podium.SumOfBests,
		Sources: []podium.AggregateSource{{Board: "beg"}, {Board: "int"}, {Board: "exp"}}}}
	total := &podium.Board{ID: "total", Keys: k, Aggregate: &podium.Aggregate{Kind: podium.BestKSum,
		Sources: []podium.AggregateSource{{Board: "beg", K: 20, Fill: []int64{10_000}},
			{Board: "int", K: 12, Fill: []int64{60_000}}, {Board: "exp", K: 5, Fill: []int64{240_000}}}}}
	for _, bc := range []struct {
		name   string
		boards []*podium.Board
	}{
		{"Best", levels(podium.Best, 0)},
		{"BestSum3", append(levels(podium.Best, 0), sum)},
		{"BestK20", levels(podium.BestK, 20)},
		{"BestK20Total", append(levels(podium.BestK, 20), total)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			st, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			eng := modules.Engine(engine.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err := eng.Start(bg); err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			for _, bd := range bc.boards {
				c := *bd
				if _, _, err := eng.PutBoard(bg, &c); err != nil {
					b.Fatal(err)
				}
			}
			const group, players = 1000, 10_000
			scores := make([]engine.Score, group)
			v := int64(1 << 40)
			b.ResetTimer()
			for range b.N {
				for i := range scores {
					v--
					scores[i] = engine.Score{Board: "beg", Player: fmt.Sprintf("p%d", v%players), Keys: []int64{v}}
				}
				if _, err := eng.Submit(bg, scores, false, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*group)/b.Elapsed().Seconds(), "scores/s")
		})
	}
}

// BenchmarkAggregateCreate measures the PUT of a three-level sum over
// sources that already hold 100,000 players each: every entry of the new
// aggregate is computed and logged before the answer, on the writer
// (writes wait meanwhile).
func BenchmarkAggregateCreate(b *testing.B) {
	const players = 100_000
	k := []podium.KeyDef{{Name: "ms", Order: podium.Asc}}
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	eng := modules.Engine(engine.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := eng.Start(bg); err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	var sources []podium.AggregateSource
	for _, l := range []string{"beg", "int", "exp"} {
		if _, _, err := eng.PutBoard(bg, &podium.Board{ID: l, Keys: k}); err != nil {
			b.Fatal(err)
		}
		sources = append(sources, podium.AggregateSource{Board: l})
		scores := make([]engine.Score, 0, 5000)
		for p := range players {
			scores = append(scores, engine.Score{Board: l, Player: fmt.Sprintf("p%d", p), Keys: []int64{int64(p)}})
			if len(scores) == cap(scores) {
				if _, err := eng.Submit(bg, scores, false, nil); err != nil {
					b.Fatal(err)
				}
				scores = scores[:0]
			}
		}
	}
	b.ResetTimer()
	for i := range b.N {
		agg := &podium.Board{ID: fmt.Sprintf("sum%d", i), Keys: k, Aggregate: &podium.Aggregate{Kind: podium.SumOfBests, RequireAll: true, Sources: sources}}
		if _, _, err := eng.PutBoard(bg, agg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*players)/b.Elapsed().Seconds(), "entries/s")
}
