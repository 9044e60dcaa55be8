package rank

// Inner node maintenance: adding and removing children, splitting a node
// that overflowed, merging or rebalancing one that underflowed, and
// shortening the tree when the root is left with one child.

// insertKid puts child c, with its counts and separator, at index i of p.
func (t *tree[R]) insertKid(p *node[R], i int, c *node[R], cnt, vis uint32, sep *R) {
	in := p.in
	n := in.n
	copy(in.kids[i+1:n+1], in.kids[i:n])
	copy(in.cnt[i+1:n+1], in.cnt[i:n])
	copy(in.vis[i+1:n+1], in.vis[i:n])
	copy(in.seps[i+1:n+1], in.seps[i:n])
	in.kids[i], in.cnt[i], in.vis[i] = c, cnt, vis
	if sep != nil {
		in.seps[i] = *sep
	}
	in.n++
	c.parent = p
}

// removeKid drops the child at index i of p.
func (t *tree[R]) removeKid(p *node[R], i int) {
	in := p.in
	n := in.n
	copy(in.kids[i:n-1], in.kids[i+1:n])
	copy(in.cnt[i:n-1], in.cnt[i+1:n])
	copy(in.vis[i:n-1], in.vis[i+1:n])
	copy(in.seps[i:n-1], in.seps[i+1:n])
	in.kids[n-1] = nil // let the collector have it
	in.n--
}

// fixInner restores the fill bounds of inner node p after its children
// changed, then of its ancestors as far as needed.
func (t *tree[R]) fixInner(p *node[R]) {
	for p != nil {
		in := p.in
		switch {
		case in.n > t.fanout:
			p = t.splitInner(p)
		case p.parent == nil:
			// The root may have few children, but not one.
			for t.root.in != nil && t.root.in.n == 1 {
				c := t.root.in.kids[0]
				c.parent = nil
				t.root = c
				t.ninner--
			}
			return
		case in.n < t.minInner:
			p = t.joinInner(p)
		default:
			return
		}
	}
}

// splitInner moves the upper half of p's children to a new node inserted
// after p, and returns p's parent, which gained a child.
func (t *tree[R]) splitInner(p *node[R]) *node[R] {
	in := p.in
	h := in.n / 2
	q := t.newInner()
	qi := q.in
	qi.n = in.n - h
	copy(qi.kids[:], in.kids[h:in.n])
	copy(qi.cnt[:], in.cnt[h:in.n])
	copy(qi.vis[:], in.vis[h:in.n])
	copy(qi.seps[:], in.seps[h:in.n])
	clear(in.kids[h:in.n])
	in.n = h
	var qc, qv uint32
	for i := 0; i < qi.n; i++ {
		qi.kids[i].parent = q
		qc += qi.cnt[i]
		qv += qi.vis[i]
	}
	pp := p.parent
	if pp == nil {
		pp = t.newInner()
		pp.in.n = 1
		pp.in.kids[0] = p
		pp.in.cnt[0] = in.sum(in.cnt[:h]) + qc
		pp.in.vis[0] = in.sum(in.vis[:h]) + qv
		p.parent = pp
		t.root = pp
	}
	j := childIndex(pp, p)
	pp.in.cnt[j] -= qc
	pp.in.vis[j] -= qv
	t.insertKid(pp, j+1, q, qc, qv, &qi.seps[0])
	return pp
}

func (in *inner[R]) sum(c []uint32) uint32 {
	var s uint32
	for _, v := range c {
		s += v
	}
	return s
}

// joinInner merges the underfull non-root node p with a sibling, or
// rebalances the two when they would not fit in one, and returns the parent,
// which may have lost a child.
func (t *tree[R]) joinInner(p *node[R]) *node[R] {
	pp := p.parent
	pi := pp.in
	j := childIndex(pp, p)
	gi := j
	if j+1 == pi.n {
		gi = j - 1
	}
	if gi < 0 {
		return pp // only child: the parent's own fix will merge it
	}
	a, b := pi.kids[gi], pi.kids[gi+1]
	ai, bi := a.in, b.in
	if t.scIn == nil {
		t.scIn = new(inner2[R])
	}
	s := t.scIn
	// Concatenate both; b's first child takes its lower bound from the
	// parent, since a node's own seps[0] is not maintained.
	n := ai.n + bi.n
	copy(s.kids[:], ai.kids[:ai.n])
	copy(s.cnt[:], ai.cnt[:ai.n])
	copy(s.vis[:], ai.vis[:ai.n])
	copy(s.seps[:], ai.seps[:ai.n])
	copy(s.kids[ai.n:], bi.kids[:bi.n])
	copy(s.cnt[ai.n:], bi.cnt[:bi.n])
	copy(s.vis[ai.n:], bi.vis[:bi.n])
	copy(s.seps[ai.n:], bi.seps[:bi.n])
	s.seps[ai.n] = pi.seps[gi+1]

	h := n
	if n > t.mergeInner {
		h = n / 2
	}
	clear(ai.kids[:])
	clear(bi.kids[:])
	ai.n = copy(ai.kids[:], s.kids[:h])
	copy(ai.cnt[:], s.cnt[:h])
	copy(ai.vis[:], s.vis[:h])
	copy(ai.seps[:], s.seps[:h])
	for i := 0; i < ai.n; i++ {
		ai.kids[i].parent = a
	}
	pi.cnt[gi] = ai.sum(ai.cnt[:ai.n])
	pi.vis[gi] = ai.sum(ai.vis[:ai.n])
	if h == n {
		clear(s.kids[:n])
		t.removeKid(pp, gi+1)
		t.ninner--
		return pp
	}
	bi.n = copy(bi.kids[:], s.kids[h:n])
	copy(bi.cnt[:], s.cnt[h:n])
	copy(bi.vis[:], s.vis[h:n])
	copy(bi.seps[:], s.seps[h:n])
	for i := 0; i < bi.n; i++ {
		bi.kids[i].parent = b
	}
	pi.cnt[gi+1] = bi.sum(bi.cnt[:bi.n])
	pi.vis[gi+1] = bi.sum(bi.vis[:bi.n])
	pi.seps[gi+1] = s.seps[h]
	clear(s.kids[:n])
	return nil
}
