package stream

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkUniformChurn replays bench/fanout's `--top-moves uniform`
// workload on the hub's fake clock: 5 top changes a second at random
// times (50 submissions a second, 10% in the top), each landing anywhere
// in a top 50, one subscriber. Each iteration is one 200 ms round. It
// reports how long a change waits in the hub, from the moment it is made
// to the round that sends it (the coalescing wait and any guard's hold;
// the fan-out itself is not in it), and what the window sends: entries
// and events a second of the fake clock. The workload is seeded (SEED,
// default 1), so two builds see the same changes:
//
//	go test -run '^$' -bench UniformChurn -benchtime 3000x ./stream
func BenchmarkUniformChurn(b *testing.B) {
	s := uint64(1)
	if env := os.Getenv("SEED"); env != "" {
		v, err := strconv.ParseUint(env, 10, 64)
		if err != nil {
			b.Fatalf("SEED=%q: %v", env, err)
		}
		s = v
	}
	rnd := newRand(s)
	src := newFakeSource()
	src.put("u", true)
	for i := range 2000 {
		src.score("u", fmt.Sprint("p", i), int64(i)*1_000_000)
	}
	clk := newFakeClock()
	h := New(src, Config{Now: clk.Now, ManualTick: true})
	defer h.Close()
	c, err := h.Connect("192.0.2.1", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Subscribe(context.Background(), "u", 50, ""); err != nil {
		b.Fatal(err)
	}
	var cw clientWindow
	for _, ev := range drain(c) {
		cw.apply(b, ev)
	}
	type change struct {
		seq uint64
		at  time.Duration
	}
	var pending []change
	var held []time.Duration
	sent, events, n := 0, 0, 0
	gap := func() time.Duration { return time.Duration(rnd.ExpFloat64() / 5 * float64(time.Second)) }
	next := gap()
	b.ResetTimer()
	for round := 1; round <= b.N; round++ {
		end := time.Duration(round) * 200 * time.Millisecond
		for ; next < end; next += gap() {
			v, _ := src.View(context.Background(), "u", 50)
			rank := 1 + rnd.IntN(50)
			seq := src.score("u", fmt.Sprint("n", n), v.Entries[rank-1].Keys[0]+1)
			n++
			h.Applied("u", "all", seq, nil)
			pending = append(pending, change{seq, next})
		}
		clk.Add(200 * time.Millisecond)
		h.Tick()
		for _, ev := range drain(c) {
			sent += cw.apply(b, ev)
			events++
		}
		pending = slices.DeleteFunc(pending, func(ch change) bool {
			if cw.seq < ch.seq {
				return false
			}
			held = append(held, end-ch.at)
			return true
		})
	}
	if len(held) == 0 {
		b.Fatalf("nothing of %d changes was delivered", n)
	}
	slices.Sort(held)
	q := func(f float64) float64 { return float64(held[int(f*float64(len(held)-1))]) / 1e6 }
	secs := float64(b.N) / 5
	b.ReportMetric(q(0.5), "hold-p50-ms")
	b.ReportMetric(q(0.99), "hold-p99-ms")
	b.ReportMetric(float64(held[len(held)-1])/1e6, "hold-max-ms")
	b.ReportMetric(float64(sent)/secs, "entries/s")
	b.ReportMetric(float64(events)/secs, "events/s")
}
