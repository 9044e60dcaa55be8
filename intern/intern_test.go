package intern

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/podiumhq/podium/internal/exthash"
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

// TestGrowth interns 300k strings, so that segments split and the
// directory doubles many times, with a Reserve part way, checking the
// table's structure every 10k strings and every string at the end.
func TestGrowth(t *testing.T) {
	s := seed(t)
	r := rand.New(rand.NewPCG(s, 2))
	tab := New(0)
	var order []string
	for i := range 300_000 {
		if i == 120_000 {
			tab.Reserve(50_000)
		}
		str := fmt.Sprintf("%x-%d", r.Uint64(), i)
		if id := tab.Intern(str); int(id) != i {
			t.Fatalf("SEED=%d: Intern #%d gave id %d", s, i, id)
		}
		order = append(order, str)
		if i%10_000 == 0 {
			if err := check(tab); err != nil {
				t.Fatalf("SEED=%d after %d strings: %v", s, i+1, err)
			}
		}
	}
	if err := check(tab); err != nil {
		t.Fatalf("SEED=%d: %v", s, err)
	}
	if tab.d.Depth < 5 {
		t.Errorf("directory depth %d: the test did not split enough", tab.d.Depth)
	}
	for id, str := range order {
		if got, ok := tab.Lookup(str); !ok || int(got) != id {
			t.Fatalf("SEED=%d: Lookup(%q) = %d %v, want %d", s, str, got, ok, id)
		}
		if tab.String(uint32(id)) != str {
			t.Fatalf("SEED=%d: String(%d) = %q, want %q", s, id, tab.String(uint32(id)), str)
		}
	}
}

// check verifies the directory (exthash.Dir.Check: shape, counts, load,
// every slot filed under its fingerprint's prefix and reachable from its
// home), that no segment passed its size short of the depth bound, and
// that the slots count the strings.
func check(t *Table) error {
	total, err := t.d.Check(slotHash)
	if err != nil {
		return err
	}
	t.d.Each(func(s *exthash.Segment) {
		if len(s.Slots) > exthash.MaxSeg && s.Depth < maxDepth && err == nil {
			err = fmt.Errorf("a segment of depth %d has %d slots", s.Depth, len(s.Slots))
		}
	})
	if err != nil {
		return err
	}
	if total != t.Len() {
		return fmt.Errorf("%d slots for %d strings", total, t.Len())
	}
	return nil
}
