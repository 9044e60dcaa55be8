package league_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/podiumhq/podium/engine"
)

// BenchmarkLeagueCohortRead measures what a cohort stream does each time
// it is woken (http/leagues_stream.go): a player's standing, then their
// cohort of 30 ranked with its zones; 100,000 players placed, SQLite at
// sync=normal.
//
//	go test ./league -run '^$' -bench LeagueCohortRead -benchtime 2s
func BenchmarkLeagueCohortRead(b *testing.B) {
	const players, batch = 100_000, 1000
	le := newLenv(b, nil)
	put(b, le.eng, leagueBoard("lg", 30, ""))
	rng := rand.New(rand.NewPCG(1, 2))
	scores := make([]engine.Score, batch)
	for i := 0; i < players; i += batch {
		for j := range scores {
			scores[j] = engine.Score{Board: "lg", Player: "p" + strconv.Itoa(i+j), Keys: []int64{rng.Int64N(1_000_000)}}
		}
		if _, err := le.eng.Submit(context.Background(), scores, false, nil); err != nil {
			b.Fatal(err)
		}
	}
	m := le.mod()
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		st, err := m.Standing(ctx, "lg", "p"+strconv.Itoa(rng.IntN(players)), "")
		if err != nil || !st.Placed {
			b.Fatal(st, err)
		}
		c, err := m.Cohort(ctx, "lg", st.Period, st.Tier, st.Cohort)
		if err != nil || len(c.Entries) == 0 || len(c.Entries) > 30 {
			b.Fatal(len(c.Entries), err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reads/s")
}
