package main

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// exactQuantile is the nearest-rank quantile of sorted values.
func exactQuantile(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

func testSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with SEED=%d)", seed, seed)
	return seed
}

func TestBucketsAreContiguous(t *testing.T) {
	// Every value maps to a bucket whose range holds it, and the ranges
	// tile the number line without gaps or overlaps.
	var next uint64
	for i := 0; i < numBuckets; i++ {
		lo, hi := bucketRange(i)
		if lo != next {
			t.Fatalf("bucket %d starts at %d, want %d", i, lo, next)
		}
		if bucketOf(lo) != i || bucketOf(hi) != i {
			t.Fatalf("bucket %d = [%d, %d] but bucketOf gives %d and %d", i, lo, hi, bucketOf(lo), bucketOf(hi))
		}
		if i == numBuckets-1 {
			if hi != math.MaxUint64 {
				t.Fatalf("last bucket ends at %d, want MaxUint64", hi)
			}
			break
		}
		next = hi + 1
	}
}

func TestQuantileMatchesSortedSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 1))
	// Log-uniform from 1µs to 1s, split over several histograms that are
	// then merged, as the workers' histograms are.
	const n = 200_000
	samples := make([]time.Duration, n)
	parts := make([]histogram, 4)
	for i := range samples {
		d := time.Duration(math.Exp(rng.Float64()*math.Log(1e6)) * float64(time.Microsecond))
		samples[i] = d
		parts[i%len(parts)].record(d)
	}
	var h histogram
	for i := range parts {
		h.merge(&parts[i])
	}
	slices.Sort(samples)
	if h.count() != n {
		t.Fatalf("count = %d, want %d", h.count(), n)
	}
	for _, q := range []float64{0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 1} {
		got, want := h.quantile(q), exactQuantile(samples, q)
		if rel := math.Abs(float64(got-want)) / float64(want); rel > 0.005 {
			t.Errorf("q%v = %v, want %v (off by %.2f%%)", q, got, want, rel*100)
		}
	}
	if h.maximum() != samples[n-1] {
		t.Errorf("max = %v, want %v", h.maximum(), samples[n-1])
	}
	var sum time.Duration
	for _, d := range samples {
		sum += d
	}
	if got, want := h.mean(), sum/n; got != want {
		t.Errorf("mean = %v, want %v", got, want)
	}
}

func TestQuantileRanks(t *testing.T) {
	// 990 fast and 10 slow operations: the 99th percentile is still fast,
	// the 99.9th is slow. An off-by-one in the rank walk shows here.
	var h histogram
	for range 990 {
		h.record(time.Millisecond)
	}
	for range 10 {
		h.record(100 * time.Millisecond)
	}
	near := func(got, want time.Duration) bool {
		return math.Abs(float64(got-want)) <= float64(want)/256
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{
		{0.5, time.Millisecond},
		{0.99, time.Millisecond},
		{0.991, 100 * time.Millisecond},
		{0.999, 100 * time.Millisecond},
	} {
		if got := h.quantile(c.q); !near(got, c.want) {
			t.Errorf("q%v = %v, want %v", c.q, got, c.want)
		}
	}
}

func TestQuantileEdges(t *testing.T) {
	t.Run("Empty", func(t *testing.T) {
		var h histogram
		if got := h.quantile(0.5); got != 0 {
			t.Errorf("q0.5 of nothing = %v, want 0", got)
		}
	})
	t.Run("OneValue", func(t *testing.T) {
		var h histogram
		h.record(1234567 * time.Nanosecond)
		for _, q := range []float64{0.01, 0.5, 1} {
			// Clamping to the exact min and max makes a single value exact.
			if got := h.quantile(q); got != 1234567*time.Nanosecond {
				t.Errorf("q%v = %v, want 1.234567ms", q, got)
			}
		}
	})
	t.Run("SmallValuesExact", func(t *testing.T) {
		var h histogram
		for v := 1; v <= 200; v++ {
			h.record(time.Duration(v))
		}
		if got := h.quantile(0.5); got != 100 {
			t.Errorf("q0.5 of 1..200ns = %v, want 100ns", got)
		}
	})
}
