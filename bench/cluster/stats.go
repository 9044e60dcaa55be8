package main

import (
	"math"
	"slices"
	"time"
)

// hist counts latencies in whole microseconds, the resolution wrk records
// them in. It merges the histograms of several wrk processes (one per
// node) so that the percentiles of a spread load are those of all its
// requests, not an average of per-process percentiles.
type hist struct {
	counts map[int64]uint64
	n      uint64
}

func newHist() *hist { return &hist{counts: map[int64]uint64{}} }

// add records c values of us microseconds.
func (h *hist) add(us int64, c uint64) {
	if c == 0 {
		return
	}
	h.counts[max(us, 0)] += c
	h.n += c
}

// merge adds every value of o to h.
func (h *hist) merge(o *hist) {
	for v, c := range o.counts {
		h.add(v, c)
	}
}

// quantile returns the q-quantile (0 < q <= 1) by the nearest-rank rule:
// the smallest recorded value that at least a fraction q of all values do
// not exceed. It returns 0 for an empty histogram.
func (h *hist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	target := rankOf(q, int(min(h.n, math.MaxInt)))
	keys := make([]int64, 0, len(h.counts))
	for v := range h.counts {
		keys = append(keys, v)
	}
	slices.Sort(keys)
	var seen uint64
	for _, v := range keys {
		seen += h.counts[v]
		if seen >= uint64(target) {
			return time.Duration(v) * time.Microsecond
		}
	}
	return time.Duration(keys[len(keys)-1]) * time.Microsecond
}

// rankOf is the 1-based nearest rank of the q-quantile among n values.
func rankOf(q float64, n int) int {
	r := int(math.Ceil(q * float64(n)))
	return min(max(r, 1), n)
}

// quantile returns the q-quantile of ds by the nearest-rank rule (ds need
// not be sorted; it is not modified). It returns 0 for no values.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[rankOf(q, len(s))-1]
}

// spread is a figure measured once per run: its median and range.
type spread struct {
	Med, Lo, Hi float64
	N           int
}

// summarize returns the median (the mean of the two middle values for an
// even count) and the range of xs, ignoring NaNs (runs where the figure
// could not be measured).
func summarize(xs []float64) spread {
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return spread{Med: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{Med: m, Lo: s[0], Hi: s[len(s)-1], N: len(s)}
}

// ratios divides a[i] by b[i], run by run: a ratio against a reference is
// taken within each run, where both saw the same machine, and only then
// summarised. A run missing either figure gives NaN.
func ratios(a, b []float64) []float64 {
	out := make([]float64, max(len(a), len(b)))
	for i := range out {
		out[i] = math.NaN()
		if i < len(a) && i < len(b) && b[i] != 0 && !math.IsNaN(a[i]) && !math.IsNaN(b[i]) {
			out[i] = a[i] / b[i]
		}
	}
	return out
}

// seconds converts durations to float seconds, for summarize.
func seconds(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = d.Seconds()
	}
	return out
}
