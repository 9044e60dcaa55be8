package rank

// item is an entry in row form, for sorting on Load.
type item[R row] struct {
	r  R
	pl uint32
}

// load replaces the content with es, building the tree bottom-up: sort once,
// cut the sorted rows into leaves, then stack inner levels on them. This is
// O(n log n) for the sort and O(n) for the rest, with no per-entry search
// and no splits, and it sizes the player lookup for its content.
func (t *tree[R]) load(es []Entry) {
	var top uint32
	for i := range es {
		if es[i].Player >= hiddenBit {
			panic("rank: player id must be below 1<<31")
		}
		top = max(top, es[i].Player)
	}
	items := make([]item[R], len(es))
	for i := range es {
		e := &es[i]
		items[i].r = encode[R](&t.mask, e)
		items[i].pl = e.Player
		if e.Hidden {
			items[i].pl |= hiddenBit
		}
	}
	// Startup reads usually come sorted from the database; checking first
	// turns the sort into one linear pass for them.
	for i := 1; i < len(items); i++ {
		if cmpRow(&items[i-1].r, &items[i].r) > 0 {
			sortItems(items)
			break
		}
	}

	n := len(items)
	per := max(1, t.leafCap-t.leafCap/16) // some room, so the first writes do not split
	nl := max(1, (n+per-1)/per)
	t.leaves, t.free, t.ninner = make([]*node[R], 0, nl), nil, 0
	t.look.reset(n, top)
	t.total, t.visible = n, 0
	level := make([]*node[R], nl)
	cnt := make([]uint32, nl)
	vis := make([]uint32, nl)
	lows := make([]R, nl)
	for j := range nl {
		a, b := j*n/nl, (j+1)*n/nl
		l := t.newLeaf()
		l.rows = l.rows[:b-a]
		v := 0
		for i, it := range items[a:b] {
			l.rows[i] = it.r
			l.pl[i] = it.pl
			v += visible(it.pl)
			if !t.look.set(it.pl&^hiddenBit, l.id) {
				// A player appears twice. Rare, so deal with it by
				// keeping each player's last entry and starting over.
				t.load(dedup(es, top))
				return
			}
		}
		t.refence(l, 0)
		if j > 0 {
			level[j-1].next = l
		}
		level[j], cnt[j], vis[j] = l, uint32(b-a), uint32(v)
		if b > a {
			lows[j] = l.rows[0]
		}
		t.visible += v
	}
	for len(level) > 1 {
		per := t.fanout - t.fanout/8
		k := (len(level) + per - 1) / per
		for j := range k {
			a, b := j*len(level)/k, (j+1)*len(level)/k
			p := t.newInner()
			in := p.in
			in.n = b - a
			var c, v uint32
			for i := a; i < b; i++ {
				in.kids[i-a] = level[i]
				level[i].parent = p
				in.cnt[i-a], in.vis[i-a], in.seps[i-a] = cnt[i], vis[i], lows[i]
				c += cnt[i]
				v += vis[i]
			}
			// Level j is written over level index j <= a: already read.
			level[j], cnt[j], vis[j], lows[j] = p, c, v, lows[a]
		}
		level, cnt, vis, lows = level[:k], cnt[:k], vis[:k], lows[:k]
	}
	t.root = level[0]
}

// dedup keeps the last entry of each player, in input order; top is the
// highest player id.
func dedup(es []Entry, top uint32) []Entry {
	var last lookup
	last.reset(len(es), top)
	for i := range es {
		last.set(es[i].Player, uint32(i))
	}
	out := make([]Entry, 0, last.len())
	for i := range es {
		if v, _ := last.get(es[i].Player); v == uint32(i) {
			out = append(out, es[i])
		}
	}
	return out
}
