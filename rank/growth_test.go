package rank

import (
	"math/rand/v2"
	"testing"
)

// players is a set of player ids with O(1) random pick, for the growth
// tests' models.
type players struct {
	ids []uint32
	at  map[uint32]int
	v   map[uint32]uint32
}

func newPlayers() *players { return &players{at: map[uint32]int{}, v: map[uint32]uint32{}} }

func (s *players) set(p, v uint32) {
	if _, ok := s.at[p]; !ok {
		s.at[p] = len(s.ids)
		s.ids = append(s.ids, p)
	}
	s.v[p] = v
}

func (s *players) del(p uint32) {
	i, ok := s.at[p]
	if !ok {
		return
	}
	last := s.ids[len(s.ids)-1]
	s.ids[i], s.at[last] = last, i
	s.ids = s.ids[:len(s.ids)-1]
	delete(s.at, p)
	delete(s.v, p)
}

func (s *players) pick(r *rand.Rand) uint32 { return s.ids[r.IntN(len(s.ids))] }

// migrating reports whether a switch of form is under way: both forms hold
// players.
func (l *lookup) migrating() bool { return l.nd > 0 && l.nh > 0 }

// TestLookupGrowth drives the lookup against a model through many segment
// splits, directory doublings, dense page growth and switches of form in
// both directions, with the population swinging between 10k and 130k
// players of an id range of 300k (dense above about 100k players, hashed
// below). While a switch drains one form into the other, most operations
// hit players of the draining form: deletes, re-adds of just-deleted
// players, updates, and resets of the whole table. Every operation during a
// drain is followed by a full invariant check.
func TestLookupGrowth(t *testing.T) {
	s := seed(t)
	r := rand.New(rand.NewPCG(s, 0x6a0e))
	const idRange = 300_000
	var l lookup
	m := newPlayers()
	var switches [2]int
	var drainOps, drainDels, drainReadds, drainResets, maxDepth int
	lastDel := uint32(0)
	hadDel := false
	// Three periods of the wave, then more while the walk has not yet
	// reached every case it is meant to (drains are short and re-adds
	// during them rare: a seed in 50-odd reached 4 of the 5 re-adds in
	// three periods). Up to twelve periods: each gives another chance.
	covered := func() bool {
		return switches[0] >= 2 && switches[1] >= 2 && drainDels >= 10 && drainReadds >= 5 && drainResets >= 1
	}
	for step := 0; step < 1_500_000 || (!covered() && step < 6_000_000); step++ {
		// A triangle wave of period 500k steps between 10k and 130k.
		ph := step % 500_000
		target := 10_000 + 120_000*min(ph, 500_000-ph)/250_000
		mig := l.migrating()
		hashed := l.hashed
		switch {
		case mig && r.IntN(15) == 0:
			// Reset in the middle of a drain, as Load does, then
			// put back a random subset of the players.
			drainResets++
			keep := newPlayers()
			for _, p := range m.ids {
				if r.IntN(2) == 0 {
					keep.set(p, m.v[p])
				}
			}
			top := uint32(0)
			for _, p := range keep.ids {
				top = max(top, p)
			}
			l.reset(len(keep.ids), top)
			for _, p := range keep.ids {
				if !l.set(p, keep.v[p]) {
					t.Fatalf("SEED=%d step %d: set(%d) after reset was not new", s, step, p)
				}
			}
			m = keep
		case mig && hadDel && r.IntN(3) == 0:
			// Re-add the player deleted last, in the target form.
			drainReadds++
			v := uint32(r.IntN(1 << 20))
			if _, had := m.at[lastDel]; l.set(lastDel, v) == had {
				t.Fatalf("SEED=%d step %d: re-add of %d: new=%v, model had it: %v", s, step, lastDel, !had, had)
			}
			m.set(lastDel, v)
			hadDel = false
		case len(m.ids) > 0 && ((mig && r.IntN(2) == 0) || (len(m.ids) > target && r.IntN(5) != 0)):
			p := m.pick(r)
			if mig {
				drainDels++
			}
			if !l.del(p) {
				t.Fatalf("SEED=%d step %d: del(%d) found nothing", s, step, p)
			}
			m.del(p)
			lastDel, hadDel = p, true
		case len(m.ids) > 0 && r.IntN(4) == 0:
			// Update: a leaf change of a held player.
			p := m.pick(r)
			v := uint32(r.IntN(1 << 20))
			if l.set(p, v) {
				t.Fatalf("SEED=%d step %d: update of %d reported new", s, step, p)
			}
			m.set(p, v)
		default:
			p := uint32(r.IntN(idRange))
			v := uint32(r.IntN(1 << 20))
			_, had := m.at[p]
			if l.set(p, v) == had {
				t.Fatalf("SEED=%d step %d: set(%d) new=%v, model had it: %v", s, step, p, !had, had)
			}
			m.set(p, v)
		}
		l.step() // as the tree does once per write
		if l.hashed != hashed {
			switches[b2i(l.hashed)]++
		}
		maxDepth = max(maxDepth, int(l.d.Depth))
		if mig || l.migrating() {
			drainOps++
		}
		if mig || l.migrating() || step%5000 == 0 {
			if err := checkLookup(&l); err != nil {
				t.Fatalf("SEED=%d step %d: %v", s, step, err)
			}
			if l.len() != len(m.ids) {
				t.Fatalf("SEED=%d step %d: %d players, want %d", s, step, l.len(), len(m.ids))
			}
		}
		if step%20_000 == 0 || (mig && step%50 == 0) {
			compareLookup(t, s, step, &l, m)
		}
		if hadDel {
			// A deleted player is looked up as absent (unless the
			// walk has drawn it again since).
			_, want := m.at[lastDel]
			if _, ok := l.get(lastDel); ok != want {
				t.Fatalf("SEED=%d step %d: get(%d) found=%v, want %v", s, step, lastDel, ok, want)
			}
		}
	}
	compareLookup(t, s, -1, &l, m)
	// Then ids from the whole 31-bit range: the table goes hashed for good
	// and its directory deepens, while a quarter of the operations delete.
	for step := range 200_000 {
		mig := l.migrating()
		if r.IntN(4) == 0 {
			p := m.pick(r)
			if !l.del(p) {
				t.Fatalf("SEED=%d sparse step %d: del(%d) found nothing", s, step, p)
			}
			m.del(p)
		} else {
			p, v := uint32(r.IntN(1<<31)), uint32(r.IntN(1<<20))
			_, had := m.at[p]
			if l.set(p, v) == had {
				t.Fatalf("SEED=%d sparse step %d: set(%d) new=%v, model had it: %v", s, step, p, !had, had)
			}
			m.set(p, v)
		}
		l.step()
		maxDepth = max(maxDepth, int(l.d.Depth))
		if mig || step%5000 == 0 {
			if err := checkLookup(&l); err != nil {
				t.Fatalf("SEED=%d sparse step %d: %v", s, step, err)
			}
		}
	}
	compareLookup(t, s, -2, &l, m)
	t.Logf("switches to dense/hashed %d/%d, operations during drains %d (deletes %d, re-adds %d, resets %d), directory depth up to %d",
		switches[0], switches[1], drainOps, drainDels, drainReadds, drainResets, maxDepth)
	if switches[0] < 2 || switches[1] < 2 || drainDels < 10 || drainReadds < 5 || drainResets < 1 || maxDepth < 5 {
		t.Errorf("SEED=%d: the walk did not reach every case it is meant to", s)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// compareLookup checks get for every player of the model and that each
// visits exactly them.
func compareLookup(t *testing.T, s uint64, step int, l *lookup, m *players) {
	t.Helper()
	for _, p := range m.ids {
		if got, ok := l.get(p); !ok || got != m.v[p] {
			t.Fatalf("SEED=%d step %d: get(%d) = %d %v, want %d", s, step, p, got, ok, m.v[p])
		}
	}
	seen := 0
	l.each(func(p, v uint32) {
		if w, ok := m.v[p]; !ok || w != v {
			t.Fatalf("SEED=%d step %d: each gave %d for player %d, want %d %v", s, step, v, p, w, ok)
		}
		seen++
	})
	if seen != len(m.ids) {
		t.Fatalf("SEED=%d step %d: each visited %d, want %d", s, step, seen, len(m.ids))
	}
}

// TestIndexGrowth runs a board's index through its lookup's switches of
// form with the tree's checker after every write during a drain: a dense
// board of 40k players receives sparse ids (dense pages drain into the
// hash) while its players are deleted, re-added and moved, and Load
// replaces everything in the middle of a drain (in odd rounds, so that
// even ones drain to the end).
func TestIndexGrowth(t *testing.T) {
	s := seed(t)
	r := rand.New(rand.NewPCG(s, 0x1d3))
	x := newShaped([]bool{true}, 16, 8) // small nodes: many leaf moves
	look := &x.t.(*tree[[3]int64]).look
	m := map[uint32]Entry{}
	ps := newPlayers() // m's players in a slice, so that a seed replays exactly
	var seq uint64
	put := func(p uint32) {
		seq++
		e := Entry{Player: p, Keys: [4]int64{int64(r.IntN(500))}, Hidden: r.IntN(10) == 0, At: int64(r.IntN(100)), Seq: seq}
		x.Put(e)
		m[p] = e
		ps.set(p, 0)
	}
	held := func() uint32 { return ps.pick(r) }
	var drainOps, loads int
	for round := range 6 {
		for p := range uint32(40_000) {
			put(p)
		}
		for i := 0; i < 400; i++ {
			mig := look.migrating()
			switch {
			case mig && round%2 == 1 && loads <= round/2 && r.IntN(2) == 0:
				loads++
				es := make([]Entry, 0, len(m))
				for _, p := range ps.ids {
					es = append(es, m[p])
				}
				x.Load(es)
			case mig && r.IntN(3) == 0:
				p := held()
				x.Delete(p)
				delete(m, p)
				ps.del(p)
				if r.IntN(2) == 0 {
					put(p) // re-added, into the hash
				}
			case mig && r.IntN(2) == 0:
				put(held()) // moves
			default:
				put(1<<30 + uint32(round*100_000+i)*7919%(1<<30))
			}
			if mig || look.migrating() {
				drainOps++
				if err := checkIndex(x); err != nil {
					t.Fatalf("SEED=%d round %d op %d: %v", s, round, i, err)
				}
			}
		}
		if err := checkIndex(x); err != nil {
			t.Fatalf("SEED=%d round %d: %v", s, round, err)
		}
		if x.Len() != len(m) {
			t.Fatalf("SEED=%d round %d: %d entries, want %d", s, round, x.Len(), len(m))
		}
		for p, e := range m {
			if got, ok := x.Get(p); !ok || got != e {
				t.Fatalf("SEED=%d round %d: Get(%d) = %+v %v, want %+v", s, round, p, got, ok, e)
			}
		}
		// Start the next round from a dense board again.
		for _, p := range append([]uint32(nil), ps.ids...) {
			x.Delete(p)
			delete(m, p)
			ps.del(p)
		}
		x.Load(nil)
	}
	t.Logf("%d writes during drains, %d loads during a drain", drainOps, loads)
	if drainOps < 20 || loads < 2 {
		t.Errorf("SEED=%d: too few writes (%d) or loads (%d) during drains", s, drainOps, loads)
	}
}
