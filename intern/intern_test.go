package intern

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"
)

func seed(t testing.TB) uint64 {
	s := uint64(rand.Int64())
	if v := os.Getenv("SEED"); v != "" {
		var err error
		if s, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("bad SEED %q", v)
		}
	}
	t.Logf("SEED=%d", s)
	return s
}

// TestAgainstMap interns random strings (short, empty, long, repeated) and
// checks every id and string against a plain map.
func TestAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(seed(t), 1))
	tab := New(0)
	model := map[string]uint32{}
	var order []string
	for i := 0; i < 50000; i++ {
		var s string
		switch r.IntN(10) {
		case 0:
			s = ""
		case 1:
			b := make([]byte, chunkSize/4+1+r.IntN(100))
			for j := range b {
				b[j] = byte('a' + r.IntN(26))
			}
			s = string(b)
		case 2, 3:
			if len(order) > 0 {
				s = order[r.IntN(len(order))]
				break
			}
			fallthrough
		default:
			s = fmt.Sprintf("p-%d", r.IntN(40000))
		}
		id := tab.Intern(s)
		if want, ok := model[s]; ok {
			if id != want {
				t.Fatalf("Intern(%q) = %d, first got %d", s, id, want)
			}
		} else {
			if int(id) != len(model) {
				t.Fatalf("new id %d is not dense (have %d)", id, len(model))
			}
			model[s] = id
			order = append(order, s)
		}
	}
	if tab.Len() != len(model) {
		t.Fatalf("Len = %d, want %d", tab.Len(), len(model))
	}
	for s, id := range model {
		if got := tab.String(id); got != s {
			t.Fatalf("String(%d) = %q, want %q", id, got, s)
		}
		if got, ok := tab.Lookup(s); !ok || got != id {
			t.Fatalf("Lookup(%q) = %d,%v, want %d", s, got, ok, id)
		}
	}
	if _, ok := tab.Lookup("never-interned"); ok {
		t.Fatal("Lookup of a missing string succeeded")
	}
}

// BenchmarkIntern1M reports the bytes per interned 12-byte player id.
func BenchmarkIntern1M(b *testing.B) {
	const n = 1_000_000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("player-%06d", i)
	}
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		tab := New(0)
		for _, s := range ids {
			tab.Intern(s)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/player")
		runtime.KeepAlive(tab)
	}
}

func BenchmarkLookup(b *testing.B) {
	tab := New(0)
	ids := make([]string, 1<<20)
	for i := range ids {
		ids[i] = fmt.Sprintf("player-%06d", i)
		tab.Intern(ids[i])
	}
	i := 0
	for b.Loop() {
		tab.Lookup(ids[i&(len(ids)-1)])
		i++
	}
}
