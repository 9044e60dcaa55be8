package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// BenchmarkSubmitReview measures what the hold check costs the write path,
// in one run: batches of 64 scores from 10,000 players on a best board of
// 10,000 entries, without a review setting, with "top 100" (a rank
// lookup per improving score; about one score in a hundred is held) and
// with a threshold.
func BenchmarkSubmitReview(b *testing.B) {
	for _, setting := range []string{"none", "top", "threshold"} {
		b.Run("review="+setting, func(b *testing.B) {
			eng, bd := benchBestBoard(b, "points")
			const players, batch = 10_000, 64
			rng := rand.New(rand.NewPCG(1, 2))
			fill := make([]engine.Score, 0, players)
			for p := range players {
				fill = append(fill, engine.Score{Board: "b", Player: fmt.Sprintf("p%d", p), Keys: []int64{rng.Int64N(1_000_000)}})
			}
			if _, err := eng.Submit(context.Background(), fill, false, nil); err != nil {
				b.Fatal(err)
			}
			switch setting {
			case "top":
				bd.Review = &podium.Review{Hold: podium.HoldTop, Top: 100}
			case "threshold":
				bd.Review = &podium.Review{Hold: podium.HoldThreshold, Threshold: []int64{990_000}}
			}
			if _, _, err := eng.UpdateBoard(context.Background(), podium.FullUpdate(bd)); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for n := 0; n < b.N; n += batch {
				scores := make([]engine.Score, batch)
				for j := range scores {
					scores[j] = engine.Score{Board: "b", Player: fmt.Sprintf("p%d", rng.IntN(players)), Keys: []int64{rng.Int64N(1_000_000)}}
				}
				if _, err := eng.Submit(context.Background(), scores, false, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
