package rank

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLookup drives the player table against a map through growth,
// deletions and every switch between its dense and hashed forms: players
// come from a dense id range, then most leave (dense to hashed), then come
// back (hashed to dense), then come from the whole id space (dense to
// hashed).
func TestLookup(t *testing.T) {
	s := seed(t)
	r := rand.New(rand.NewPCG(s, 0x100c))
	var l lookup
	m := map[uint32]uint32{}
	switches := map[bool]int{} // by the form switched to
	for step := range 400_000 {
		phase := step / 100_000
		p := uint32(r.IntN(5000))
		if phase == 3 && r.IntN(2) == 0 {
			p = uint32(r.IntN(3000)) * 104729 % (1 << 31)
		}
		del := r.IntN(3) == 0
		if phase == 1 {
			del = r.IntN(10) != 0
		}
		was := l.hashed
		if del {
			_, had := m[p]
			if ok := l.del(p); ok != had {
				t.Fatalf("SEED=%d step %d: del(%d) = %v, want %v", s, step, p, ok, had)
			}
			delete(m, p)
		} else {
			v := uint32(r.IntN(1 << 20))
			_, had := m[p]
			if isNew := l.set(p, v); isNew == had {
				t.Fatalf("SEED=%d step %d: set(%d) new=%v, map had it: %v", s, step, p, isNew, had)
			}
			m[p] = v
		}
		l.step() // as the tree does once per write
		if l.hashed != was {
			switches[l.hashed]++
		}
		if step%997 == 0 {
			if l.len() != len(m) {
				t.Fatalf("SEED=%d step %d: %d players, want %d", s, step, l.len(), len(m))
			}
			for p, v := range m {
				if got, ok := l.get(p); !ok || got != v {
					t.Fatalf("SEED=%d step %d: get(%d) = %d %v, want %d", s, step, p, got, ok, v)
				}
			}
			seen := 0
			l.each(func(p, v uint32) {
				if m[p] != v {
					t.Fatalf("SEED=%d step %d: each gave %d for player %d, want %d", s, step, v, p, m[p])
				}
				seen++
			})
			if seen != len(m) {
				t.Fatalf("SEED=%d step %d: each visited %d, want %d", s, step, seen, len(m))
			}
		}
	}
	if switches[true] < 2 || switches[false] < 1 {
		t.Errorf("form switches to hashed/dense: %d/%d, want at least 2/1", switches[true], switches[false])
	}
}

// TestSortItems checks the Load sort, including its heapsort fallback, on
// inputs with many equal rows.
func TestSortItems(t *testing.T) {
	s := seed(t)
	r := rand.New(rand.NewPCG(s, 0x5027))
	for _, n := range []int{0, 1, 2, 17, 100, 5000} {
		for _, heap := range []bool{false, true} {
			a := make([]item[[3]int64], n)
			for i := range a {
				a[i] = item[[3]int64]{r: [3]int64{int64(r.IntN(4)), int64(r.IntN(3)), int64(r.IntN(1000))}, pl: uint32(i)}
			}
			if heap {
				introsort(a, 0)
			} else {
				sortItems(a)
			}
			for i := 1; i < n; i++ {
				if cmpRow(&a[i-1].r, &a[i].r) > 0 {
					t.Fatalf("SEED=%d n=%d heap=%v: out of order at %d", s, n, heap, i)
				}
			}
			ps := make([]uint32, n)
			for i := range a {
				ps[i] = a[i].pl
			}
			slices.Sort(ps)
			for i := range ps {
				if ps[i] != uint32(i) {
					t.Fatalf("SEED=%d n=%d heap=%v: items lost or duplicated", s, n, heap)
				}
			}
		}
	}
}
