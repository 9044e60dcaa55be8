package tournament_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// BenchmarkSettle settles a tournament of 1,000 players into a ladder
// (total, current, best) whose boards already hold `others` players: the
// cost follows the tournament's players, not the boards' (the decaying
// board is not rewritten as time passes).
func BenchmarkSettle(b *testing.B) {
	for _, others := range []int{1000, 50000} {
		b.Run(fmt.Sprintf("others=%d", others), func(b *testing.B) {
			ctx := context.Background()
			te := newTenv(b, nil)
			ladderB(te)
			// The ladder's earlier history: one big tournament.
			end := tStart.Add(time.Hour)
			fill(b, te, "t0", end, others)
			te.clock.Set(end)
			if _, err := tourneyOf(te.eng).Settle(ctx, "t0"); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				end = end.Add(2 * time.Hour)
				id := fmt.Sprintf("t%d", i+1)
				fill(b, te, id, end, 1000)
				te.clock.Set(end)
				b.StartTimer()
				r, err := tourneyOf(te.eng).Settle(ctx, id)
				if err != nil || r.Credits != 3000 {
					b.Fatalf("Settle = %+v, %v", r, err)
				}
			}
		})
	}
}

func ladderB(te *tenv) {
	te.put(&podium.Board{ID: "pts:total", Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc}}, Mode: podium.Sum,
		Points: &podium.Points{Ladder: "pts", Kind: podium.PointsTotal}})
	te.put(&podium.Board{ID: "pts:current", Keys: []podium.KeyDef{{Name: "era", Order: podium.Desc}, {Name: "points", Order: podium.Desc}},
		Mode: podium.Sum, Points: &podium.Points{Ladder: "pts", Kind: podium.PointsCurrent}})
	te.put(&podium.Board{ID: "pts:best", Keys: []podium.KeyDef{{Name: "rank", Order: podium.Asc}}, Mode: podium.Best,
		Points: &podium.Points{Ladder: "pts", Kind: podium.PointsBest, Series: "weekly", By: "rank"}})
}

// fill makes tournament id ending at end with n players (distinct from
// every other tournament's).
func fill(b *testing.B, te *tenv, id string, end time.Time, n int) {
	te.put(cup(id, end, func(tt *podium.Tournament) { tt.Start = end.Add(-time.Hour) }))
	te.clock.Set(end.Add(-time.Minute))
	var scores []engine.Score
	for i := range n {
		scores = append(scores, engine.Score{Board: id, Player: fmt.Sprintf("%s-p%d", id, i), Keys: []int64{int64(i)}})
		if len(scores) == 5000 || i == n-1 {
			if _, err := te.eng.Submit(context.Background(), scores, false, nil); err != nil {
				b.Fatal(err)
			}
			scores = scores[:0]
		}
	}
}
