package league_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// BenchmarkLeagueSubmit measures a submission on a league board against
// the same on a plain board, in the same run, SQLite at sync=normal:
// batches of 1000 scores, both for players' first scores of the period
// ("first": each places a player, one row more) and for repeat scores of
// 100,000 players already placed ("again").
//
//	go test ./league -run '^$' -bench LeagueSubmit -benchtime 2s
func BenchmarkLeagueSubmit(b *testing.B) {
	const players, batch = 100_000, 1000
	for _, kind := range []string{"plain", "league"} {
		for _, phase := range []string{"first", "again"} {
			b.Run(kind+"/"+phase, func(b *testing.B) {
				le := newLenv(b, nil)
				bd := leagueBoard("lg", 30, "")
				if kind == "plain" {
					bd.League = nil
				}
				put(b, le.eng, bd)
				rng := rand.New(rand.NewPCG(1, 2))
				scores := make([]engine.Score, batch)
				next := 0
				submit := func(player func(j int) string) {
					for j := range scores {
						scores[j] = engine.Score{Board: "lg", Player: player(j), Keys: []int64{rng.Int64N(1_000_000)}}
					}
					if _, err := le.eng.Submit(context.Background(), scores, false, nil); err != nil {
						b.Fatal(err)
					}
				}
				if phase == "again" {
					for i := 0; i < players; i += batch {
						submit(func(j int) string { return "p" + strconv.Itoa(i+j) })
					}
				}
				b.ResetTimer()
				cpu0 := processCPU(b)
				for range b.N {
					if phase == "first" {
						submit(func(int) string { next++; return "n" + strconv.Itoa(next) })
					} else {
						submit(func(int) string { return "p" + strconv.Itoa(rng.IntN(players)) })
					}
				}
				b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "scores/s")
				b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N*batch), "cpu-ns/score")
			})
		}
	}
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLeagueSettle settles one period of a league of n players in
// cohorts of 30 (three tiers, 5 promote and 5 relegate), SQLite at
// sync=normal: the settlement alone is timed (the placements are made
// first, through the engine), with a probe submitting one score at a time
// to another board meanwhile. writer-ms is how long the settlement held
// the writer; probe-max-ms the probe's slowest submission. LEAGUE_PLAYERS sets n (default 100,000;
// 1,000,000 is the figure).
//
//	LEAGUE_PLAYERS=1000000 go test ./league -run '^$' -bench LeagueSettle -benchtime 1x -timeout 30m
func BenchmarkLeagueSettle(b *testing.B) {
	n := 100_000
	if v := os.Getenv("LEAGUE_PLAYERS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	for i := range b.N {
		b.StopTimer()
		le := newLenv(b, nil)
		bd := leagueBoard("lg", 30, podium.LeagueAbsentKeep)
		bd.League.Tiers = []podium.LeagueTier{{Name: "bronze", Promote: 5}, {Name: "silver", Promote: 5, Relegate: 5}, {Name: "gold", Relegate: 5}}
		put(b, le.eng, bd)
		rng := rand.New(rand.NewPCG(uint64(i), 2))
		scores := make([]engine.Score, 0, 5000)
		for p := range n {
			scores = append(scores, engine.Score{Board: "lg", Player: fmt.Sprintf("p%d", p), Keys: []int64{rng.Int64N(1_000_000)}})
			if len(scores) == cap(scores) || p == n-1 {
				if _, err := le.eng.Submit(ctx, scores, false, nil); err != nil {
					b.Fatal(err)
				}
				scores = scores[:0]
			}
		}
		le.clock.Set(day1.Add(24 * time.Hour))
		plain := leagueBoard("other", 30, "")
		plain.ID, plain.League = "other", nil
		put(b, le.eng, plain)
		// The probe: one score at a time to another board while the
		// settlement runs; its slowest is how long a submission waited.
		stop, probed := make(chan struct{}), make(chan []time.Duration)
		go func() {
			var lat []time.Duration
			for k := 0; ; k++ {
				select {
				case <-stop:
					probed <- lat
					return
				default:
				}
				t0 := time.Now()
				if _, err := le.eng.Submit(ctx, []engine.Score{{Board: "other", Player: "q" + strconv.Itoa(k%1000), Keys: []int64{int64(k)}}}, false, nil); err != nil {
					b.Error(err)
				}
				lat = append(lat, time.Since(t0))
			}
		}()
		cpu0 := processCPU(b)
		b.StartTimer()
		rs, err := le.mod().SettleDue(ctx)
		b.StopTimer()
		cpu := processCPU(b) - cpu0
		close(stop)
		lat := <-probed
		if err != nil || len(rs) != 1 || rs[0].Players != int64(n) {
			b.Fatalf("settle = %+v, %v", rs, err)
		}
		slices.Sort(lat)
		b.ReportMetric(float64(cpu.Nanoseconds())/1e9, "cpu-s/settle")
		b.ReportMetric(float64(n), "players")
		b.ReportMetric(float64(rs[0].Writer.Milliseconds()), "writer-ms")
		if len(lat) > 0 {
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1e3, "probe-p50-ms")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1e3, "probe-max-ms")
			b.ReportMetric(float64(len(lat)), "probe-scores")
		}
	}
}
