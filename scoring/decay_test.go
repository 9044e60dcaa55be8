package scoring

import (
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"testing"
)

const day = int64(24 * 3600 * 1000)

func TestScaledVectors(t *testing.T) {
	h := 730 * day
	e := int64(10)
	start := e * h
	cases := []struct {
		p, t, want int64
	}{
		{1000, start, 1000 << FracBits},  // at the era's start: p exactly
		{1000, start + h/2, 23726566406}, // 1000 * sqrt(2) * 2^24 = 23726566406.06 (50-digit decimal)
		{1, start, 1 << FracBits},
		{-500, start, -500 << FracBits},
		{50, start - h/2, 593164160}, // dated half a life before the era: 50/sqrt(2) * 2^24 = 593164160.15
		{0, start + 123, 0},
	}
	for _, c := range cases {
		if got := Scaled(c.p, c.t, e, h); got != c.want {
			t.Errorf("Scaled(%d, %d) = %d, want %d", c.p, c.t-start, got, c.want)
		}
	}
}

func TestRebaseHalvesExactly(t *testing.T) {
	for _, c := range []struct{ k, j, want int64 }{
		{1000 << FracBits, 1, 500 << FracBits}, {3, 1, 2}, {5, 1, 2}, {7, 1, 4}, {-3, 1, -2},
		{1 << 40, 62, 0}, {12345, 0, 12345},
	} {
		if got := Rebase(c.k, c.j); got != c.want {
			t.Errorf("Rebase(%d, %d) = %d, want %d", c.k, c.j, got, c.want)
		}
	}
}

// TestDecayMatchesFormula replays random settlements through the
// representation and through the recurrence in big-enough floats:
// current = current * 2^(-(t-last)/H) + points. Values agree to within the
// rounding bound, and the ranking by (era, K) equals the ranking of the
// real values wherever those differ by more than the bound.
func TestDecayMatchesFormula(t *testing.T) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	h := (rng.Int64N(800) + 1) * day
	const players = 40
	type st struct {
		k    int64
		real float64
		last int64
		ops  int
	}
	ps := make([]st, players)
	tnow := int64(1_700_000_000_000)
	era := Era(tnow, h)
	for round := 0; round < 300; round++ {
		tnow += rng.Int64N(h / 3)
		if ne := Era(tnow, h); ne > era {
			for i := range ps {
				ps[i].k = Rebase(ps[i].k, ne-era)
				ps[i].ops++
			}
			era = ne
		}
		for n := rng.IntN(8); n > 0; n-- {
			i := rng.IntN(players)
			p := RankPoints(1000, int64(rng.IntN(30)+1))
			ps[i].k += Scaled(p, tnow, era, h)
			ps[i].real = ps[i].real*math.Exp2(-float64(tnow-ps[i].last)/float64(h)) + float64(p)
			ps[i].last = tnow
			ps[i].ops++
		}
	}
	vals := make([]float64, players)
	for i := range ps {
		want := ps[i].real * math.Exp2(-float64(tnow-ps[i].last)/float64(h))
		got := Value(era, ps[i].k, tnow, h)
		bound := float64(ps[i].ops+1)*math.Ldexp(1, -FracBits) + want*1e-12
		if math.Abs(got-want) > bound {
			t.Fatalf("player %d: value %.9f, recurrence %.9f (bound %g, SEED=%d)", i, got, want, bound, seed)
		}
		vals[i] = want
	}
	idx := make([]int, players)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]].k > ps[idx[b]].k })
	for a := 0; a+1 < players; a++ {
		x, y := vals[idx[a]], vals[idx[a+1]]
		if y-x > 1e-3 {
			t.Fatalf("order by K puts %.6f before %.6f (SEED=%d)", x, y, seed)
		}
	}
}

func BenchmarkScaled(b *testing.B) {
	h := 730 * day
	var s int64
	for i := 0; i < b.N; i++ {
		s += Scaled(1000, 20*h+int64(i), 20, h)
	}
	_ = s
}

// TestRebaseMonotone: moving a board to a later era never swaps two
// players: K >= K' implies Rebase(K, j) >= Rebase(K', j), for any j,
// negative values (points taken back) included.
func TestRebaseMonotone(t *testing.T) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	for i := 0; i < 200000; i++ {
		a := rng.Int64N(1<<50) - 1<<40
		b := a - rng.Int64N(1<<(rng.IntN(20)+1))
		j := rng.Int64N(70)
		if Rebase(a, j) < Rebase(b, j) {
			t.Fatalf("Rebase(%d, %d) = %d < Rebase(%d, %d) = %d (SEED=%d)", a, j, Rebase(a, j), b, j, Rebase(b, j), seed)
		}
	}
}
