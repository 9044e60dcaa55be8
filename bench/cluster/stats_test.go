package main

import (
	"math"
	"testing"
	"time"
)

func TestQuantileNearestRank(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	// 100..1 ms: the nearest rank of q is ceil(q*100).
	var hundred []time.Duration
	for i := 100; i >= 1; i-- {
		hundred = append(hundred, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		name string
		ds   []time.Duration
		q    float64
		want time.Duration
	}{
		{"Empty", nil, 0.5, 0},
		{"One", ms(7), 0.99, 7 * time.Millisecond},
		{"MedianOfFour", ms(4, 1, 3, 2), 0.5, 2 * time.Millisecond},
		{"P99Of100", hundred, 0.99, 99 * time.Millisecond},
		{"P50Of100", hundred, 0.5, 50 * time.Millisecond},
		{"P100", hundred, 1, 100 * time.Millisecond},
		{"TinyQIsMin", hundred, 0.0001, time.Millisecond},
		{"P99Of10IsMax", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.99, 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]time.Duration(nil), tc.ds...)
			if got := quantile(tc.ds, tc.q); got != tc.want {
				t.Fatalf("quantile(%v, %v) = %v, want %v", tc.ds, tc.q, got, tc.want)
			}
			for i := range before {
				if before[i] != tc.ds[i] {
					t.Fatal("quantile reordered its argument")
				}
			}
		})
	}
}

func TestHistMergeMatchesQuantile(t *testing.T) {
	// Two wrk processes' histograms merged give the percentiles of all
	// their requests together, not an average of their percentiles.
	a, b := newHist(), newHist()
	var all []time.Duration
	for us := int64(1); us <= 90; us++ { // a: 90 fast requests
		a.add(us, 1)
		all = append(all, time.Duration(us)*time.Microsecond)
	}
	b.add(5000, 10) // b: 10 slow ones
	for i := 0; i < 10; i++ {
		all = append(all, 5*time.Millisecond)
	}
	m := newHist()
	m.merge(a)
	m.merge(b)
	if m.n != 100 {
		t.Fatalf("merged count %d, want 100", m.n)
	}
	for _, q := range []float64{0.5, 0.9, 0.91, 0.99} {
		if got, want := m.quantile(q), quantile(all, q); got != want {
			t.Errorf("q=%v: merged histogram says %v, the values say %v", q, got, want)
		}
	}
	if got := m.quantile(0.9); got != 90*time.Microsecond {
		t.Errorf("p90 = %v, want 90µs (the last fast request)", got)
	}
	if got := m.quantile(0.91); got != 5*time.Millisecond {
		t.Errorf("p91 = %v, want 5ms", got)
	}
	if got := newHist().quantile(0.5); got != 0 {
		t.Errorf("empty histogram: %v", got)
	}
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name        string
		xs          []float64
		med, lo, hi float64
		n           int
	}{
		{"Odd", []float64{3, 1, 2}, 2, 1, 3, 3},
		{"EvenAveragesTheMiddle", []float64{4, 1, 3, 2}, 2.5, 1, 4, 4},
		{"NaNsIgnored", []float64{math.NaN(), 5, math.NaN(), 1, 3}, 3, 1, 5, 3},
		{"One", []float64{7}, 7, 7, 7, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := summarize(tc.xs)
			if s.Med != tc.med || s.Lo != tc.lo || s.Hi != tc.hi || s.N != tc.n {
				t.Fatalf("summarize(%v) = %+v, want med %v lo %v hi %v n %d", tc.xs, s, tc.med, tc.lo, tc.hi, tc.n)
			}
		})
	}
	if s := summarize([]float64{math.NaN()}); s.N != 0 || !math.IsNaN(s.Med) {
		t.Fatalf("nothing measured: %+v", s)
	}
}

func TestRatiosAreTakenWithinEachRun(t *testing.T) {
	// Run 2 was slow for both: per-run ratios stay at 0.5.
	a := []float64{50, 10, 60}
	ref := []float64{100, 20, 120}
	for i, r := range ratios(a, ref) {
		if r != 0.5 {
			t.Fatalf("run %d: ratio %v, want 0.5", i+1, r)
		}
	}
	got := ratios([]float64{1, math.NaN(), 3}, []float64{2, 2, 0})
	if got[0] != 0.5 || !math.IsNaN(got[1]) || !math.IsNaN(got[2]) {
		t.Fatalf("missing figures or a zero reference must give NaN: %v", got)
	}
	if got := ratios([]float64{1, 2}, []float64{1}); len(got) != 2 || !math.IsNaN(got[1]) {
		t.Fatalf("a run without a reference must give NaN: %v", got)
	}
}
