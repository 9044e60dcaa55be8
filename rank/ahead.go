package rank

import "math"

// Ahead returns the number of entries (all=true) or of visible entries
// whose keys rank strictly ahead of keys, comparing the keys only (not At
// or Seq); keys beyond the index's key count are ignored. It is the
// position of the first entry with these keys, so Ahead(e.Keys, all)+1 is
// entry e's rank in standard competition ranking (entries equal on every
// key share a rank: 1, 2, 2, 4), in the same numbering as Rank(p, all). It
// costs one descent from the root, O(log n), like Rank.
func (x *Index) Ahead(keys [4]int64, all bool) int { return x.t.ahead(&keys, all) }

// ahead counts the rows below the smallest row with these keys: the keys
// (masked), then the smallest At and the smallest Seq word. Every row
// with the same keys is >= it and every row with better keys is < it.
func (t *tree[R]) ahead(keys *[4]int64, all bool) int {
	var x R
	n := len(x) - 2
	for i := 0; i < n; i++ {
		x[i] = keys[i] ^ t.mask[i]
	}
	x[n], x[n+1] = math.MinInt64, math.MinInt64
	r := 0
	nd := t.root
	for nd.in != nil {
		in := nd.in
		i := in.childBelow(&x)
		counts := in.cnt[:i]
		if !all {
			counts = in.vis[:i]
		}
		for _, v := range counts {
			r += int(v)
		}
		nd = in.kids[i]
	}
	lb := lowerBound(nd.rows, &x)
	if all {
		return r + lb
	}
	for _, q := range nd.pl[:lb] {
		r += visible(q)
	}
	return r
}

// childBelow returns the index of the child where the rows < x end: the
// last child whose separator is < x (0 when none is). Every row of the
// children before it is <= its separator, so < x; every row of the
// children after it is >= their separator, so >= x.
func (in *inner[R]) childBelow(x *R) int {
	lo, hi := 1, in.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cmpRow(&in.seps[m], x) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// lowerBound returns the number of rows that are < x.
func lowerBound[R row](rows []R, x *R) int {
	lo, hi := 0, len(rows)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cmpRow(&rows[m], x) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
