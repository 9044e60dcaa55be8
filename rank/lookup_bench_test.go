package rank

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkLookup times the player lookup alone at 1M players: get and set
// (an update of a held player, as a regroup does) of random players, for
// dense and sparse ids, on a table built by reset+set (as Load does) and on
// one grown by inserts.
func BenchmarkLookup(b *testing.B) {
	const n = 1_000_000
	for _, id := range ids {
		for _, how := range []string{"load", "grown"} {
			var l lookup
			if how == "load" {
				top := uint32(0)
				for i := range n {
					top = max(top, playerID(i, id))
				}
				l.reset(n, top)
			}
			for i := range n {
				l.set(playerID(i, id), uint32(i))
			}
			ps := randPlayers(n, id)
			b.Run(id+"/"+how+"/get", func(b *testing.B) {
				var sum uint32
				for i := range b.N {
					v, _ := l.get(ps[i&(1<<20-1)])
					sum += v
				}
				_ = sum
			})
			b.Run(id+"/"+how+"/set", func(b *testing.B) {
				r := rand.New(rand.NewPCG(9, 9))
				for i := range b.N {
					l.set(ps[i&(1<<20-1)], uint32(r.IntN(1<<20)))
				}
			})
		}
	}
}
