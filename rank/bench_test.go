package rank

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
)

// Sizes benchmarked. 10M runs only when asked, because building it takes
// seconds and gigabytes:
//
//	RANK_BENCH_10M=1 go test -run '^$' -bench /10M ./rank/
var sizes = []struct {
	name string
	n    int
}{{"1M", 1_000_000}, {"10M", 10_000_000}}

func skipBig(b *testing.B, n int) {
	if n < 10_000_000 {
		return
	}
	pat := ""
	if f := flag.Lookup("test.bench"); f != nil {
		pat = f.Value.String()
	}
	if os.Getenv("RANK_BENCH_10M") == "" && !strings.Contains(pat, "10M") {
		b.Skip("10M benchmarks run with RANK_BENCH_10M=1 or -bench /10M")
	}
}

// ids says how player ids are spread: "dense" numbers the players 0..n-1, as
// on a board holding most of the server's interned players; "sparse"
// scatters them over the whole 31-bit id space, as on a board holding a few
// of many, which makes the player lookup a hash table instead of an array.
var ids = []string{"dense", "sparse"}

// playerID returns the id of the i-th player under spread ids.
func playerID(i int, ids string) uint32 {
	if ids == "sparse" {
		return uint32(i) * 2654435761 % (1 << 31) // odd multiplier: one to one
	}
	return uint32(i)
}

// benchEntries returns n entries of a typical board: random scores with many
// ties, distinct At, 1% hidden, in random order.
var entryCache = map[string][]Entry{}

func benchEntries(nkeys, n int, ids string) []Entry {
	key := fmt.Sprint(nkeys, n, ids)
	if es, ok := entryCache[key]; ok {
		return es
	}
	entryCache = nil // keep one set at a time: 10M entries take 560 MB
	r := rand.New(rand.NewPCG(1, uint64(nkeys)))
	es := make([]Entry, n)
	for i := range es {
		e := &es[i]
		e.Player = playerID(i, ids)
		e.Hidden = r.IntN(100) == 0
		for k := range nkeys {
			e.Keys[k] = r.Int64N(1_000_000)
		}
		e.At = 1_700_000_000_000 + int64(r.IntN(30*86_400_000))
		e.Seq = uint64(i)
	}
	r.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	entryCache = map[string][]Entry{key: es}
	return es
}

func descFor(nkeys int) []bool {
	d := make([]bool, nkeys)
	d[0] = true
	return d
}

func loaded(b *testing.B, nkeys, n int, ids string) *Index {
	b.Helper()
	skipBig(b, n)
	x := New(descFor(nkeys))
	x.Load(benchEntries(nkeys, n, ids))
	return x
}

// randPlayers returns existing player ids in random order, cycled by the
// benchmarks so that drawing them costs nothing in the loop.
func randPlayers(n int, ids string) []uint32 {
	r := rand.New(rand.NewPCG(7, 7))
	ps := make([]uint32, 1<<20)
	for i := range ps {
		ps[i] = playerID(r.IntN(n), ids)
	}
	return ps
}

// eachSize runs f as a sub-benchmark per size and id spread.
func eachSize(b *testing.B, f func(b *testing.B, n int, ids string)) {
	for _, s := range sizes {
		for _, id := range ids {
			b.Run(s.name+"/ids="+id, func(b *testing.B) { f(b, s.n, id) })
		}
	}
}

func BenchmarkPut(b *testing.B) {
	eachSize(b, func(b *testing.B, n int, ids string) {
		x := loaded(b, 1, n, ids)
		r := rand.New(rand.NewPCG(3, 3))
		b.ResetTimer()
		for i := range b.N {
			// New players: the board grows from n by b.N entries.
			x.Put(Entry{Player: playerID(n+i, ids), Keys: [4]int64{r.Int64N(1_000_000)}, Seq: uint64(n + i)})
		}
	})
}

func BenchmarkUpdate(b *testing.B) {
	eachSize(b, func(b *testing.B, n int, ids string) {
		x := loaded(b, 1, n, ids)
		ps := randPlayers(n, ids)
		r := rand.New(rand.NewPCG(4, 4))
		b.ResetTimer()
		for i := range b.N {
			// A new random score: the entry jumps anywhere.
			x.Put(Entry{Player: ps[i&(1<<20-1)], Keys: [4]int64{r.Int64N(1_000_000)}, Seq: uint64(n + i)})
		}
	})
}

func BenchmarkUpdateNear(b *testing.B) {
	eachSize(b, func(b *testing.B, n int, ids string) {
		x := loaded(b, 1, n, ids)
		ps := randPlayers(n, ids)
		b.ResetTimer()
		for i := range b.N {
			// A small gain, as in most games: the entry moves a few places.
			// Includes the Get that reads the current entry.
			p := ps[i&(1<<20-1)]
			e, _ := x.Get(p)
			e.Keys[0] += 3
			e.Seq = uint64(n + i)
			x.Put(e)
		}
	})
}

func BenchmarkRank(b *testing.B) {
	eachSize(b, func(b *testing.B, n int, ids string) {
		x := loaded(b, 1, n, ids)
		ps := randPlayers(n, ids)
		b.ResetTimer()
		for i := range b.N {
			x.Rank(ps[i&(1<<20-1)], false)
		}
	})
}

// BenchmarkAhead: the shared rank of a random entry (the keys of the
// entry of a random player), the cost rank_shared adds to a read.
func BenchmarkAhead(b *testing.B) {
	eachSize(b, func(b *testing.B, n int, ids string) {
		x := loaded(b, 1, n, ids)
		ps := randPlayers(n, ids)
		keys := make([][4]int64, len(ps))
		for i, p := range ps {
			e, _ := x.Get(p)
			keys[i] = e.Keys
		}
		b.ResetTimer()
		for i := range b.N {
			x.Ahead(keys[i&(1<<20-1)], false)
		}
	})
}

func BenchmarkAt(b *testing.B) {
	for _, s := range sizes {
		b.Run(s.name, func(b *testing.B) {
			x := loaded(b, 1, s.n, "dense")
			r := rand.New(rand.NewPCG(5, 5))
			rs := make([]int, 1<<20)
			for i := range rs {
				rs[i] = 1 + r.IntN(x.Visible())
			}
			b.ResetTimer()
			for i := range b.N {
				x.At(rs[i&(1<<20-1)], false)
			}
		})
	}
}

func BenchmarkRangeTop100(b *testing.B) {
	for _, s := range sizes {
		b.Run(s.name, func(b *testing.B) {
			x := loaded(b, 1, s.n, "dense")
			var sum int64
			b.ResetTimer()
			for range b.N {
				x.Range(1, 100, false, func(_ int, e Entry) bool {
					sum += e.Keys[0]
					return true
				})
			}
			_ = sum
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	for _, s := range sizes {
		for _, nkeys := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/keys=%d", s.name, nkeys), func(b *testing.B) {
				skipBig(b, s.n)
				es := benchEntries(nkeys, s.n, "sparse")
				x := New(descFor(nkeys))
				b.ResetTimer()
				for range b.N {
					x.Load(es)
				}
			})
		}
	}
}

// BenchmarkMemory reports the heap bytes per entry of an index built by Load
// and by one Put per entry, measured as the HeapAlloc growth after a GC, and
// what Bytes estimates.
func BenchmarkMemory(b *testing.B) {
	for _, s := range sizes {
		for _, nkeys := range []int{1, 2, 3, 4} {
			for _, id := range ids {
				for _, how := range []string{"load", "put"} {
					b.Run(fmt.Sprintf("%s/keys=%d/ids=%s/%s", s.name, nkeys, id, how), func(b *testing.B) {
						skipBig(b, s.n)
						es := benchEntries(nkeys, s.n, id)
						var heap, est float64
						for range b.N {
							heap, est = measure(nkeys, es, how == "load")
						}
						b.ReportMetric(heap, "B/entry")
						b.ReportMetric(est, "est-B/entry")
					})
				}
			}
		}
	}
}

// measure builds an index of es and returns its heap bytes per entry and
// the Bytes estimate per entry.
func measure(nkeys int, es []Entry, load bool) (heap, est float64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := New(descFor(nkeys))
	if load {
		x.Load(es)
	} else {
		for _, e := range es {
			x.Put(e)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	n := float64(len(es))
	heap = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
	est = float64(x.Bytes()) / n
	runtime.KeepAlive(x)
	return heap, est
}
