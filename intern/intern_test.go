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
	if tab.depth < 5 {
		t.Errorf("directory depth %d: the test did not split enough", tab.depth)
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

// check verifies the directory's shape, the segments' counts and load, and
// that every slot is reachable from its home and filed under its
// fingerprint's prefix.
func check(t *Table) error {
	if len(t.dir) != 1<<t.depth || len(t.tabs) != len(t.dir) {
		return fmt.Errorf("directory of %d at depth %d", len(t.dir), t.depth)
	}
	total := 0
	for i := 0; i < len(t.dir); {
		s := t.dir[i]
		span := 1 << (t.depth - s.depth)
		if s.depth > t.depth || i%span != 0 {
			return fmt.Errorf("segment at %d: depth %d, directory %d", i, s.depth, t.depth)
		}
		for j := i; j < i+span; j++ {
			if t.dir[j] != s || len(t.tabs[j]) != len(s.slots) || &t.tabs[j][0] != &s.slots[0] {
				return fmt.Errorf("entry %d does not point to the segment at %d", j, i)
			}
		}
		if s.n*16 > len(s.slots)*maxLoad || len(s.slots) > maxSeg {
			return fmt.Errorf("segment at %d: %d in %d slots", i, s.n, len(s.slots))
		}
		n := 0
		for k, v := range s.slots {
			if v == 0 {
				continue
			}
			n++
			fp := uint32(v >> 32)
			if int(fp>>(32-t.depth))&^(span-1) != i {
				return fmt.Errorf("fingerprint %x filed at %d", fp, i)
			}
			for j := home(fp, len(s.slots)); j != k; j = (j + 1) % len(s.slots) {
				if s.slots[j] == 0 {
					return fmt.Errorf("slot %d of segment %d unreachable from its home", k, i)
				}
			}
		}
		if n != s.n {
			return fmt.Errorf("segment at %d holds %d, counted %d", i, n, s.n)
		}
		total += n
		i += span
	}
	if total != t.Len() {
		return fmt.Errorf("%d slots for %d strings", total, t.Len())
	}
	return nil
}
