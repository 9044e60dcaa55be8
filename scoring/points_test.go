package scoring

import (
	"math/big"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

func TestRankPointsVectors(t *testing.T) {
	// Computed by hand from round_half_to_even(weight / rank); the .5
	// cases are the ones a round-half-up would get wrong.
	cases := []struct{ w, r, want int64 }{
		{1000, 1, 1000}, {1000, 2, 500}, {1000, 3, 333}, {1000, 4, 250}, {1000, 5, 200},
		{1000, 6, 167}, {1000, 7, 143}, {1000, 8, 125}, {1000, 9, 111}, {1000, 10, 100},
		{1000, 16, 62}, {1000, 48, 21}, {1000, 80, 12}, {1000, 400, 2}, {1000, 2000, 0},
		{1000, 1999, 1}, {1000, 2001, 0}, {1000, 667, 1}, {1000, 3000, 0},
		{50, 1, 50}, {50, 2, 25}, {50, 3, 17}, {50, 4, 12}, {50, 12, 4}, {50, 20, 2},
		{50, 28, 2}, {50, 67, 1}, {50, 100, 0}, {50, 101, 0}, {50, 99, 1}, {50, 33, 2},
		{3, 2, 2}, {5, 2, 2}, {7, 2, 4}, {1, 2, 0}, {1, 1, 1},
		{1000, 0, 0}, {0, 1, 0},
	}
	for _, c := range cases {
		if got := RankPoints(c.w, c.r); got != c.want {
			t.Errorf("RankPoints(%d, %d) = %d, want %d", c.w, c.r, got, c.want)
		}
	}
}

// TestDivRoundHalfEvenMatchesBig compares with math/big's exact rational
// rounding (big.Float in ToNearestEven mode of the exact quotient).
func TestDivRoundHalfEvenMatchesBig(t *testing.T) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i < 200000; i++ {
		n := rng.Int64N(1<<40) - 1<<39
		d := rng.Int64N(1<<20) + 1
		if i%3 == 0 {
			d = 2 * (rng.Int64N(1000) + 1) // many exact halves
		}
		want := bigRound(n, d)
		if got := DivRoundHalfEven(n, d); got != want {
			t.Fatalf("DivRoundHalfEven(%d, %d) = %d, want %d (SEED=%d)", n, d, got, want, seed)
		}
	}
}

func bigRound(n, d int64) int64 {
	q := new(big.Rat).SetFrac64(n, d)
	f := new(big.Float).SetPrec(200).SetMode(big.ToNearestEven).SetRat(q)
	i, _ := f.Int(nil) // truncates; redo the rounding exactly
	fl := new(big.Rat).SetInt(i)
	diff := new(big.Rat).Sub(q, fl) // in (-1, 1)
	half := big.NewRat(1, 2)
	switch c := new(big.Rat).Abs(diff).Cmp(half); {
	case c > 0 || c == 0 && i.Bit(0) == 1:
		if diff.Sign() > 0 {
			i.Add(i, big.NewInt(1))
		} else {
			i.Sub(i, big.NewInt(1))
		}
	}
	return i.Int64()
}

func BenchmarkRankPoints(b *testing.B) {
	var s int64
	for i := 0; i < b.N; i++ {
		s += RankPoints(1000, int64(i%5000+1))
	}
	_ = s
}
