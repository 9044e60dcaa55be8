package rank

import "math/bits"

// sortItems sorts items in row order for Load. It is an introsort (quicksort
// with a heapsort fallback and insertion sort for short runs) written for
// item[R] because slices.SortFunc passes each element by value to a
// comparison it cannot inline; comparing in place halves the time of a 1M
// Load, which is on the startup path.
func sortItems[R row](a []item[R]) {
	introsort(a, 2*bits.Len(uint(len(a))))
}

func introsort[R row](a []item[R], depth int) {
	for len(a) > 16 {
		if depth == 0 {
			heapsort(a)
			return
		}
		depth--
		p := partition(a)
		// Recurse into the smaller side so the stack stays O(log n).
		if p < len(a)-p {
			introsort(a[:p], depth)
			a = a[p:]
		} else {
			introsort(a[p:], depth)
			a = a[:p]
		}
	}
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && cmpRow(&a[j].r, &a[j-1].r) < 0; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// partition puts the median of three samples first, then runs Hoare's
// scheme, which splits runs of equal rows evenly instead of degrading on
// them. It returns p with a[:p] <= pivot <= a[p:], both sides non-empty.
func partition[R row](a []item[R]) int {
	n := len(a)
	m := n / 2
	if cmpRow(&a[m].r, &a[0].r) < 0 {
		a[m], a[0] = a[0], a[m]
	}
	if cmpRow(&a[n-1].r, &a[m].r) < 0 {
		a[n-1], a[m] = a[m], a[n-1]
		if cmpRow(&a[m].r, &a[0].r) < 0 {
			a[m], a[0] = a[0], a[m]
		}
	}
	a[0], a[m] = a[m], a[0]
	pivot := a[0].r
	i, j := -1, n
	for {
		for i++; cmpRow(&a[i].r, &pivot) < 0; i++ {
		}
		for j--; cmpRow(&a[j].r, &pivot) > 0; j-- {
		}
		if i >= j {
			return j + 1
		}
		a[i], a[j] = a[j], a[i]
	}
}

func heapsort[R row](a []item[R]) {
	for i := len(a)/2 - 1; i >= 0; i-- {
		siftDown(a, i)
	}
	for end := len(a) - 1; end > 0; end-- {
		a[0], a[end] = a[end], a[0]
		siftDown(a[:end], 0)
	}
}

func siftDown[R row](a []item[R], i int) {
	for {
		c := 2*i + 1
		if c >= len(a) {
			return
		}
		if c+1 < len(a) && cmpRow(&a[c].r, &a[c+1].r) < 0 {
			c++
		}
		if cmpRow(&a[i].r, &a[c].r) >= 0 {
			return
		}
		a[i], a[c] = a[c], a[i]
		i = c
	}
}
