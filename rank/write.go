package rank

// Writes: put, delete, hide, and the leaf regrouping that keeps leaves full.

func (t *tree[R]) put(e Entry) (Entry, bool) {
	if e.Player >= hiddenBit {
		panic("rank: player id must be below 1<<31")
	}
	x := encode[R](&t.mask, &e)
	pl := e.Player
	if e.Hidden {
		pl |= hiddenBit
	}
	defer t.look.step()
	l, pos, ok := t.locate(e.Player)
	if !ok {
		t.total++
		t.visible += visible(pl)
		t.insert(&x, pl)
		return Entry{}, false
	}
	old := decode(&t.mask, &l.rows[pos], l.pl[pos])
	dv := visible(pl) - visible(l.pl[pos])
	t.visible += dv
	if q, ok := t.placeIn(l, pos, &x); ok {
		// Most updates move an entry a short way; when it stays in its
		// leaf, no count above the leaf changes except for hiding.
		t.moveWithin(l, pos, q, &x, pl)
		if dv != 0 {
			t.bump(l, 0, dv)
		}
		return old, true
	}
	was := visible(l.pl[pos])
	t.removeAt(l, pos)
	t.bump(l, -1, -was)
	t.underflow(l)
	t.insert(&x, pl) // overwrites the player's lookup slot
	return old, true
}

func (t *tree[R]) del(p uint32) (Entry, bool) {
	l, pos, ok := t.locate(p)
	if !ok {
		return Entry{}, false
	}
	pl := l.pl[pos]
	old := decode(&t.mask, &l.rows[pos], pl)
	t.removeAt(l, pos)
	t.look.del(p)
	t.look.step()
	t.total--
	t.visible -= visible(pl)
	t.bump(l, -1, -visible(pl))
	t.underflow(l)
	return old, true
}

func (t *tree[R]) setHidden(p uint32, hidden bool) bool {
	l, pos, ok := t.locate(p)
	if !ok {
		return false
	}
	pl := l.pl[pos]
	if (pl&hiddenBit != 0) == hidden {
		return true
	}
	dv := 1
	if hidden {
		dv = -1
	}
	l.pl[pos] = pl ^ hiddenBit
	t.visible += dv
	t.bump(l, 0, dv)
	return true
}

// bump adds dt entries and dv visible entries to the counts of every
// ancestor of leaf l.
func (t *tree[R]) bump(l *node[R], dt, dv int) {
	for c, n := l, l.parent; n != nil; c, n = n, n.parent {
		i := childIndex(n, c)
		n.in.cnt[i] += uint32(dt)
		n.in.vis[i] += uint32(dv)
	}
}

// placeIn returns where row x, replacing the row at pos, goes in leaf l,
// and false when it may belong to another leaf. It stays when some other row
// of the leaf is <= x and some other row is > x: then every separator bound
// above the leaf holds without looking at them. The position found is reused
// for the move, so the check costs no extra search.
func (t *tree[R]) placeIn(l *node[R], pos int, x *R) (int, bool) {
	q := t.upperBound(l, x)
	others := q // other rows <= x
	if q > pos {
		others-- // the old row is among them
	}
	return q, l.parent == nil || (others > 0 && others < len(l.rows)-1)
}

// moveWithin replaces the row at pos by x, whose upper bound in the leaf
// (old row included) is q, shifting only the rows between the two places.
func (t *tree[R]) moveWithin(l *node[R], pos, q int, x *R, pl uint32) {
	if q > pos {
		// The old row is <= x and counted in q.
		q--
		copy(l.rows[pos:q], l.rows[pos+1:q+1])
		copy(l.pl[pos:q], l.pl[pos+1:q+1])
	} else {
		copy(l.rows[q+1:pos+1], l.rows[q:pos])
		copy(l.pl[q+1:pos+1], l.pl[q:pos])
	}
	l.rows[q] = *x
	l.pl[q] = pl
	t.refence(l, min(pos, q))
}

func (t *tree[R]) removeAt(l *node[R], pos int) {
	n := len(l.rows) - 1
	copy(l.rows[pos:], l.rows[pos+1:])
	copy(l.pl[pos:n], l.pl[pos+1:n+1])
	l.rows = l.rows[:n]
	t.refence(l, pos)
}

// insert adds a row that is not in the tree. Counts are raised on the way
// down, since the row always ends up below the child chosen at each level
// (regrouping only moves rows between siblings of one parent).
func (t *tree[R]) insert(x *R, pl uint32) {
	v := uint32(visible(pl))
	n := t.root
	for n.in != nil {
		in := n.in
		i := in.child(x)
		in.cnt[i]++
		in.vis[i] += v
		n = in.kids[i]
	}
	pos := t.upperBound(n, x)
	k := len(n.rows)
	if k == t.leafCap {
		t.overflow(n, pos, x, pl)
		return
	}
	n.rows = n.rows[:k+1]
	copy(n.rows[pos+1:], n.rows[pos:])
	copy(n.pl[pos+1:k+1], n.pl[pos:k])
	n.rows[pos] = *x
	n.pl[pos] = pl
	t.refence(n, pos)
	t.look.set(pl&^hiddenBit, n.id)
}

// overflow inserts x at pos into the full leaf l by regrouping it with a
// sibling: into two leaves if a sibling has room, else into three.
func (t *tree[R]) overflow(l *node[R], pos int, x *R, pl uint32) {
	p := l.parent
	if p == nil {
		// The root leaf is full: give it a parent, then split below it.
		p = t.newInner()
		in := p.in
		in.n = 1
		in.kids[0] = l
		in.cnt[0] = uint32(len(l.rows) + 1)
		in.vis[0] = uint32(visible(pl))
		for _, q := range l.players() {
			in.vis[0] += uint32(visible(q))
		}
		l.parent = p
		t.root = p
	}
	in := p.in
	i := childIndex(p, l)
	best, room := -1, 0
	if i > 0 {
		best, room = i-1, t.leafCap-len(in.kids[i-1].rows)
	}
	if i+1 < in.n {
		if r := t.leafCap - len(in.kids[i+1].rows); r > room {
			best, room = i+1, r
		}
	}
	switch {
	case room >= t.shiftMin:
		t.regroup(p, min(i, best), 2, 2, l, pos, x, pl)
	case in.n > 1:
		gi := i
		if i+1 == in.n {
			gi = i - 1
		}
		t.regroup(p, gi, 2, 3, l, pos, x, pl)
	default:
		t.regroup(p, i, 1, 2, l, pos, x, pl)
	}
}

// underflow merges or rebalances leaf l with a sibling when it has fallen
// below the minimum fill.
func (t *tree[R]) underflow(l *node[R]) {
	p := l.parent
	if p == nil || len(l.rows) >= t.minLeaf {
		return
	}
	in := p.in
	i := childIndex(p, l)
	gi := -1
	if i > 0 {
		gi = i - 1
	}
	if i+1 < in.n && (gi < 0 || len(in.kids[i+1].rows) < len(in.kids[i-1].rows)) {
		gi = i
	}
	if gi < 0 {
		return // only child of a parent that is itself being fixed
	}
	if len(in.kids[gi].rows)+len(in.kids[gi+1].rows) <= t.mergeLeaf {
		t.regroup(p, gi, 2, 1, nil, 0, nil, 0)
	} else {
		t.regroup(p, gi, 2, 2, nil, 0, nil, 0)
	}
}

// regroup redistributes the rows of the m leaves p.kids[gi:gi+m], plus x at
// pos of leaf xl when x is not nil, evenly over m2 leaves (m2 = m-1, m or
// m+1; a new leaf goes last, a dropped one is the last). Only rows that
// change leaf get their lookup slot rewritten.
func (t *tree[R]) regroup(p *node[R], gi, m, m2 int, xl *node[R], pos int, x *R, pl uint32) {
	in := p.in
	rows, players, src := t.scRows[:0], t.scPlayers[:0], t.scSrc[:0]
	for j := 0; j < m; j++ {
		l := in.kids[gi+j]
		start := len(src)
		if l == xl && x != nil {
			rows = append(rows, l.rows[:pos]...)
			rows = append(rows, *x)
			rows = append(rows, l.rows[pos:]...)
			players = append(players, l.pl[:pos]...)
			players = append(players, pl)
			players = append(players, l.players()[pos:]...)
		} else {
			rows = append(rows, l.rows...)
			players = append(players, l.players()...)
		}
		for range len(rows) - start {
			src = append(src, uint8(j))
		}
		if l == xl && x != nil {
			src[start+pos] = 255 // new to the tree: always write its slot
		}
	}
	t.scRows, t.scPlayers, t.scSrc = rows, players, src

	switch {
	case m2 > m:
		last := in.kids[gi+m-1]
		nl := t.newLeaf()
		nl.parent = p
		nl.next = last.next
		last.next = nl
		t.insertKid(p, gi+m, nl, 0, 0, nil)
	case m2 < m:
		last := in.kids[gi+m-1]
		in.kids[gi+m-2].next = last.next
		t.removeKid(p, gi+m-1)
		t.freeLeaf(last)
	}

	total := len(rows)
	for j := 0; j < m2; j++ {
		a, b := j*total/m2, (j+1)*total/m2
		l := in.kids[gi+j]
		l.rows = append(l.rows[:0], rows[a:b]...)
		copy(l.pl[:], players[a:b])
		t.refence(l, 0)
		v := 0
		for k := a; k < b; k++ {
			q := players[k]
			v += visible(q)
			if int(src[k]) != j {
				t.look.set(q&^hiddenBit, l.id)
			}
		}
		in.cnt[gi+j] = uint32(b - a)
		in.vis[gi+j] = uint32(v)
		if j > 0 {
			in.seps[gi+j] = l.rows[0]
		}
	}
	t.fixInner(p)
}
