package rank

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// model is the obviously-correct reference: a map, sorted on demand with
// podium.CompareRank, the ordering rule's one definition (no row encoding).
type model struct {
	desc   []bool
	m      map[uint32]Entry
	orders []podium.Order // from desc, built on first use
}

func (m *model) cmp(a, b Entry) int {
	n := len(m.desc)
	return podium.CompareRank(m.ords(), a.Keys[:n], a.At, a.Seq, b.Keys[:n], b.At, b.Seq)
}

func (m *model) ords() []podium.Order {
	if m.orders == nil {
		for _, d := range m.desc {
			o := podium.Asc
			if d {
				o = podium.Desc
			}
			m.orders = append(m.orders, o)
		}
	}
	return m.orders
}

// norm is e as the index returns it: unused keys zero.
func (m *model) norm(e Entry) Entry {
	for i := len(m.desc); i < 4; i++ {
		e.Keys[i] = 0
	}
	return e
}

func (m *model) sorted() (all, vis []Entry) {
	for _, e := range m.m {
		all = append(all, e)
	}
	slices.SortFunc(all, m.cmp)
	for _, e := range all {
		if !e.Hidden {
			vis = append(vis, e)
		}
	}
	return all, vis
}

// seed returns the SEED environment variable, or a fresh seed, and logs it.
func seed(t testing.TB) uint64 {
	t.Helper()
	s := uint64(time.Now().UnixNano())
	if v := os.Getenv("SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SEED=%q: %v", v, err)
		}
		s = n
	}
	t.Logf("seed %d (replay with SEED=%d)", s, s)
	return s
}

// gen draws values from tiny domains, to force ties on keys and At, mixed
// with the int64 extremes and the occasional arbitrary value.
type gen struct {
	r    *rand.Rand
	seqs map[uint64]bool
}

func (g *gen) val() int64 {
	switch g.r.IntN(10) {
	case 0:
		return []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64 - 1, math.MaxInt64}[g.r.IntN(4)]
	case 1:
		return int64(g.r.Uint64())
	default:
		return int64(g.r.IntN(3)) - 1
	}
}

// seq returns a Seq never used before in this round, often near the ends of
// the uint64 range where a careless signed conversion would misorder it.
func (g *gen) seq() uint64 {
	for {
		var s uint64
		switch g.r.IntN(4) {
		case 0:
			s = []uint64{0, 1, math.MaxUint64, math.MaxUint64 - 1, 1 << 63, 1<<63 - 1, 1<<63 + 1}[g.r.IntN(7)]
		case 1:
			s = uint64(g.r.IntN(64))
		default:
			s = g.r.Uint64()
		}
		if !g.seqs[s] {
			g.seqs[s] = true
			return s
		}
	}
}

func (g *gen) entry(p uint32) Entry {
	e := Entry{Player: p, Hidden: g.r.IntN(5) == 0, At: g.val(), Seq: g.seq()}
	for i := range e.Keys {
		e.Keys[i] = g.val() // keys past the index's count must be ignored
	}
	return e
}

func TestProperty(t *testing.T) {
	s := seed(t)
	r := rand.New(rand.NewPCG(s, 0x5eed))
	rounds, maxSteps := 400, 600
	if testing.Short() {
		rounds, maxSteps = 80, 300
	}
	for round := range rounds {
		nk := 1 + r.IntN(4)
		desc := make([]bool, nk)
		for i := range desc {
			desc[i] = r.IntN(2) == 0
		}
		leafCap := []int{3, 4, 5, 7, 16, 0}[r.IntN(6)]
		fanout := []int{4, 5, 8, 0}[r.IntN(4)]
		players := []int{4, 30, 300, 1500}[r.IntN(4)]
		steps := 1 + r.IntN(maxSteps)
		p := &propRun{
			t: t, seed: s, round: round, r: r,
			g:      &gen{r: r, seqs: map[uint64]bool{}},
			x:      newShaped(desc, leafCap, fanout),
			m:      &model{desc: desc, m: map[uint32]Entry{}},
			ids:    players,
			spread: []uint32{1, 7919}[r.IntN(2)],
		}
		p.shape = fmt.Sprintf("keys %v leafCap %d fanout %d players %d spread %d", desc, leafCap, fanout, players, p.spread)
		// Sometimes start from a bulk load, as the server does.
		if r.IntN(3) == 0 {
			p.load()
		}
		for p.step = 0; p.step < steps; p.step++ {
			p.op()
			if players <= 30 || p.step%17 == 0 || p.step == steps-1 || os.Getenv("CHECKALL") != "" {
				p.check()
			}
		}
	}
}

type propRun struct {
	t           *testing.T
	seed        uint64
	round, step int
	r           *rand.Rand
	g           *gen
	x           *Index
	m           *model
	ids         int
	spread      uint32 // id multiplier: 1 keeps ids dense, a large prime scatters them
	shape       string
	noLoad      bool // keep the shape writes produced
}

func (p *propRun) fail(format string, args ...any) {
	p.t.Helper()
	p.t.Fatalf("SEED=%d round %d step %d (%s): %s", p.seed, p.round, p.step, p.shape, fmt.Sprintf(format, args...))
}

func (p *propRun) player() uint32 {
	return uint32(p.r.IntN(p.ids)) * p.spread % (1 << 31)
}

func (p *propRun) op() {
	r, x, m := p.r, p.x, p.m
	switch k := r.IntN(100); {
	case k < 55:
		pl := p.player()
		e := p.g.entry(pl)
		if old, ok := m.m[pl]; ok && r.IntN(4) == 0 {
			// Same row, other visibility, or a small step: the in-leaf paths.
			e = old
			e.Seq = p.g.seq()
			if r.IntN(2) == 0 {
				e.Hidden = !e.Hidden
			}
		}
		want, wantOK := m.m[pl]
		got, ok := x.Put(e)
		if ok != wantOK || got != want {
			p.fail("Put(%+v) = %+v %v, want %+v %v", e, got, ok, want, wantOK)
		}
		m.m[pl] = m.norm(e)
	case k < 75:
		pl := p.player()
		want, wantOK := m.m[pl]
		got, ok := x.Delete(pl)
		if ok != wantOK || got != want {
			p.fail("Delete(%d) = %+v %v, want %+v %v", pl, got, ok, want, wantOK)
		}
		delete(m.m, pl)
	case k < 98:
		pl := p.player()
		h := r.IntN(2) == 0
		e, wantOK := m.m[pl]
		if ok := x.SetHidden(pl, h); ok != wantOK {
			p.fail("SetHidden(%d) = %v, want %v", pl, ok, wantOK)
		}
		if wantOK {
			e.Hidden = h
			m.m[pl] = e
		}
	default:
		if !p.noLoad {
			p.load()
		}
	}
}

// load replaces the content with a random set that includes duplicates (the
// last of each must win).
func (p *propRun) load() {
	n := p.r.IntN(2 * p.ids)
	es := make([]Entry, n)
	p.m.m = map[uint32]Entry{}
	for i := range es {
		es[i] = p.g.entry(p.player())
	}
	if p.r.IntN(4) == 0 {
		// Sorted input takes the no-sort path.
		slices.SortFunc(es, p.m.cmp)
	}
	for _, e := range es {
		p.m.m[e.Player] = p.m.norm(e)
	}
	p.x.Load(es)
}

func (p *propRun) check() {
	x, m, r := p.x, p.m, p.r
	if err := checkIndex(x); err != nil {
		p.fail("invariant: %v", err)
	}
	all, vis := m.sorted()
	if x.Len() != len(all) || x.Visible() != len(vis) {
		p.fail("Len/Visible = %d/%d, want %d/%d", x.Len(), x.Visible(), len(all), len(vis))
	}
	visAhead := 0
	for i, e := range all {
		if len(all) > 60 && r.IntN(len(all)/30) != 0 {
			if !e.Hidden {
				visAhead++
			}
			continue // sample ranks on big boards
		}
		if got, ok := x.Rank(e.Player, true); !ok || got != i+1 {
			p.fail("Rank(%d, all) = %d %v, want %d", e.Player, got, ok, i+1)
		}
		if got, ok := x.Rank(e.Player, false); !ok || got != visAhead+1 {
			p.fail("Rank(%d, visible) = %d %v, want %d", e.Player, got, ok, visAhead+1)
		}
		if got, ok := x.Get(e.Player); !ok || got != e {
			p.fail("Get(%d) = %+v %v, want %+v", e.Player, got, ok, e)
		}
		if !e.Hidden {
			visAhead++
		}
	}
	p.checkAhead(all)
	pl := p.player()
	if _, in := m.m[pl]; !in {
		if _, ok := x.Get(pl); ok {
			p.fail("Get(%d) found an absent player", pl)
		}
		if _, ok := x.Rank(pl, r.IntN(2) == 0); ok {
			p.fail("Rank(%d) found an absent player", pl)
		}
	}
	for _, mode := range []bool{true, false} {
		list := all
		if !mode {
			list = vis
		}
		for _, rank := range []int{-1, 0, 1, len(list), len(list) + 1, 1 + r.IntN(len(list)+1)} {
			got, ok := x.At(rank, mode)
			wantOK := rank >= 1 && rank <= len(list)
			if ok != wantOK || (ok && got != list[rank-1]) {
				p.fail("At(%d, %v) = %+v %v, want ok %v", rank, mode, got, ok, wantOK)
			}
		}
		for range 3 {
			start, n := r.IntN(len(list)+3)-1, r.IntN(12)
			stop := -1
			if r.IntN(4) == 0 {
				stop = 1 + r.IntN(max(n, 1)) // fn returns false on this visit
			}
			var got []Entry
			x.Range(start, n, mode, func(rank int, e Entry) bool {
				if want := max(start, 1) + len(got); rank != want {
					p.fail("Range(%d, %d, %v) passed rank %d, want %d", start, n, mode, rank, want)
				}
				got = append(got, e)
				return len(got) != stop
			})
			from := min(max(start, 1)-1, len(list))
			want := list[from:min(from+max(n, 0), len(list))]
			if stop >= 0 && stop < len(want) {
				want = want[:stop]
			}
			if len(want) == 0 {
				want = nil
			}
			if !slices.Equal(got, want) {
				p.fail("Range(%d, %d, %v) = %v, want %v", start, n, mode, got, want)
			}
		}
	}
}

// checkAhead compares Ahead with a count over the model, for the keys of
// some entries (ties on keys are frequent: gen draws from tiny domains) and
// for random key tuples, which may match no entry.
func (p *propRun) checkAhead(all []Entry) {
	n := len(p.m.desc)
	probes := make([][4]int64, 0, 8)
	for range 4 {
		if len(all) > 0 {
			probes = append(probes, all[p.r.IntN(len(all))].Keys)
		}
		probes = append(probes, p.g.entry(0).Keys)
	}
	for _, k := range probes {
		wantAll, wantVis := 0, 0
		for _, e := range all {
			if podium.CompareKeys(p.m.ords(), e.Keys[:n], k[:n]) < 0 {
				wantAll++
				wantVis += 1 - btoi(e.Hidden)
			}
		}
		if got := p.x.Ahead(k, true); got != wantAll {
			p.fail("Ahead(%v, all) = %d, want %d", k, got, wantAll)
		}
		if got := p.x.Ahead(k, false); got != wantVis {
			p.fail("Ahead(%v, visible) = %d, want %d", k, got, wantVis)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestLargeDefaultShape runs random writes against default-sized nodes with
// enough entries for a three-level tree, checking invariants and a sample of
// ranks against the model.
func TestLargeDefaultShape(t *testing.T) {
	s := seed(t)
	r := rand.New(rand.NewPCG(s, 0x1a26e))
	n := 300_000
	if testing.Short() {
		n = 60_000
	}
	for i, desc := range [][]bool{{true}, {false, true}} {
		p := &propRun{
			t: t, seed: s, r: r, g: &gen{r: r, seqs: map[uint64]bool{}},
			x: New(desc), m: &model{desc: desc, m: map[uint32]Entry{}},
			ids: n / 2, spread: []uint32{1, 7919}[i], noLoad: true,
		}
		p.shape = fmt.Sprintf("default %v spread %d", desc, p.spread)
		es := make([]Entry, n/4)
		for i := range es {
			es[i] = p.g.entry(p.player())
			p.m.m[es[i].Player] = p.m.norm(es[i])
		}
		p.x.Load(es)
		for p.step = 0; p.step < n; p.step++ {
			p.op()
		}
		p.check()
	}
}
