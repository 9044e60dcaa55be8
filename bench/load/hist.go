package main

import (
	"math"
	"math/bits"
	"time"
)

// The histogram splits every power of two into subCount linear
// sub-buckets. Values below 2*subCount nanoseconds get one bucket each; a
// larger value v lands in a bucket of width 2^e with v >= 128*2^e, so
// reporting the bucket's midpoint is off by at most 1/256 of the value
// (about 0.4%), whatever its size.
const (
	subBits    = 7
	subCount   = 1 << subBits
	numBuckets = (64 - subBits + 1) * subCount
)

// histogram records durations in log-linear buckets. It costs a few
// nanoseconds per value and no allocation after creation. It is not safe
// for concurrent use: each worker keeps its own, and they are merged when
// the workers are done.
type histogram struct {
	counts   [numBuckets]uint64
	n        uint64
	sum      uint64 // nanoseconds; overflows only after about 584 years
	min, max uint64
}

// bucketOf returns the index of the bucket that holds v.
func bucketOf(v uint64) int {
	if v < subCount {
		return int(v)
	}
	e := bits.Len64(v) - subBits - 1
	return (e+1)<<subBits + int(v>>e) - subCount
}

// bucketRange returns the smallest and largest values bucket i holds.
func bucketRange(i int) (lo, hi uint64) {
	if i < 2*subCount {
		return uint64(i), uint64(i)
	}
	e := i>>subBits - 1
	m := uint64(i&(subCount-1) + subCount)
	lo = m << e
	return lo, lo + (1<<e - 1)
}

// record adds one duration; negative durations count as zero.
func (h *histogram) record(d time.Duration) {
	v := uint64(0)
	if d > 0 {
		v = uint64(d)
	}
	h.counts[bucketOf(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += v
}

// merge adds every value recorded in o to h.
func (h *histogram) merge(o *histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	h.sum += o.sum
}

// count returns the number of recorded values.
func (h *histogram) count() uint64 { return h.n }

// quantile returns the q-quantile (0 < q <= 1) by the nearest-rank rule:
// the smallest recorded value that at least q of all values do not exceed,
// to within the bucket resolution. It returns 0 for an empty histogram.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	target := uint64(math.Ceil(q * float64(h.n)))
	if target < 1 {
		target = 1
	}
	if target >= h.n {
		return time.Duration(h.max)
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= target {
			lo, hi := bucketRange(i)
			v := lo + (hi-lo)/2
			// The extremes are known exactly; never report past them.
			v = max(v, h.min)
			v = min(v, h.max)
			return time.Duration(v)
		}
	}
	return time.Duration(h.max)
}

// mean returns the arithmetic mean of the recorded values.
func (h *histogram) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / h.n)
}

// maximum returns the largest recorded value exactly.
func (h *histogram) maximum() time.Duration { return time.Duration(h.max) }
