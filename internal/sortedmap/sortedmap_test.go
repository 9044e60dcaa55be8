package sortedmap

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
)

func seed(t testing.TB) uint64 {
	s := rand.Uint64()
	if v := os.Getenv("SEED"); v != "" {
		var err error
		if s, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("SEED: %v", err)
		}
	}
	t.Logf("seed %d (replay with SEED=%d)", s, s)
	return s
}

// check compares m with the reference: same keys in order, same values,
// every walk from every point, and the chunk invariants.
func check(t *testing.T, m *Map[int], ref map[string]int) {
	t.Helper()
	keys := make([]string, 0, len(ref))
	for k := range ref {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if m.Len() != len(keys) {
		t.Fatalf("Len %d, want %d", m.Len(), len(keys))
	}
	var got []string
	m.Ascend(func(k string, v int) bool {
		if v != ref[k] {
			t.Fatalf("key %q: value %d, want %d", k, v, ref[k])
		}
		got = append(got, k)
		return true
	})
	if !slices.Equal(got, keys) {
		t.Fatalf("Ascend: %v, want %v", got, keys)
	}
	for _, c := range m.chunks {
		if len(c.keys) == 0 || len(c.keys) > MaxChunk || len(c.keys) != len(c.vals) {
			t.Fatalf("chunk of %d keys, %d values", len(c.keys), len(c.vals))
		}
	}
	// From a few points: each key, and between keys.
	for i := 0; i < len(keys); i += 1 + len(keys)/17 {
		for _, after := range []string{keys[i], keys[i] + "\x00", keys[i][:len(keys[i])-1]} {
			want := keys[sortSearch(keys, after):]
			var from []string
			m.AscendAfter(after, func(k string, _ int) bool {
				from = append(from, k)
				return len(from) < 3
			})
			if !slices.Equal(from, want[:min(3, len(want))]) {
				t.Fatalf("AscendAfter(%q): %v, want %v", after, from, want[:min(3, len(want))])
			}
		}
	}
}

// sortSearch returns the index of the first key > after.
func sortSearch(keys []string, after string) int {
	i, ok := slices.BinarySearch(keys, after)
	if ok {
		i++
	}
	return i
}

func TestMapAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(seed(t), 1))
	m := &Map[int]{}
	ref := map[string]int{}
	check(t, m, ref)
	key := func() string { return fmt.Sprintf("b%05d", r.IntN(6000)) }
	for round := range 8 {
		// Grow (splits), then shrink (merges and empty chunks), by turns.
		grow := round%2 == 0
		for range 4000 {
			k := key()
			if grow == (r.IntN(4) != 0) {
				v := r.Int()
				m.Set(k, v)
				ref[k] = v
			} else {
				if got := m.Delete(k); got != hasKey(ref, k) {
					t.Fatalf("Delete(%q) = %v", k, got)
				}
				delete(ref, k)
			}
			if v, ok := m.Get(k); ok != hasKey(ref, k) || ok && v != ref[k] {
				t.Fatalf("Get(%q) = %d, %v", k, v, ok)
			}
		}
		check(t, m, ref)
	}
	if _, ok := m.Get("zzz"); ok {
		t.Fatal("Get of an absent key found it")
	}
	var none []string
	m.AscendAfter("zzz", func(k string, _ int) bool { none = append(none, k); return true })
	if len(none) != 0 {
		t.Fatalf("AscendAfter past the last key: %v", none)
	}
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

// TestDeletesMerge: deleting most keys leaves no more chunks than the keys
// need, so a walk never crosses a long run of near-empty chunks.
func TestDeletesMerge(t *testing.T) {
	m := &Map[int]{}
	for i := range 100_000 {
		m.Set(fmt.Sprintf("b%06d", i), i)
	}
	for i := range 100_000 {
		if i%100 != 0 {
			m.Delete(fmt.Sprintf("b%06d", i))
		}
	}
	if m.Len() != 1000 {
		t.Fatalf("Len %d", m.Len())
	}
	if n := len(m.chunks); n > 1000/(MaxChunk/4)+1 {
		t.Fatalf("%d chunks hold 1000 keys", n)
	}
}

// BenchmarkSet inserts new keys, in random order, into a map of n keys
// (n grows by b.N, small beside it).
func BenchmarkSet(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			m := &Map[int]{}
			r := rand.New(rand.NewPCG(1, 2))
			for range n {
				m.Set(strconv.FormatUint(r.Uint64(), 36), 0)
			}
			keys := make([]string, b.N)
			for i := range keys {
				keys[i] = strconv.FormatUint(r.Uint64(), 36)
			}
			b.ResetTimer()
			for i, k := range keys {
				m.Set(k, i)
			}
		})
	}
}
