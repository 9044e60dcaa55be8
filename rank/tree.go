package rank

import "unsafe"

// The tree is a counted B+tree. Leaves hold the entries inline, in order, as
// two parallel arrays (rows and player words) so that a search touches only
// rows and a player scan touches only 4-byte words. Inner nodes hold, for each
// child, a separator row (a lower bound of the child's rows) and the number of
// entries and of visible entries below it: rank-at descends by counts, and the
// rank of a player is found by walking up from its leaf, summing the counts of
// the children to the left. Leaves know their parent and their successor, so
// neither operation needs a key search, and Range walks the leaf chain.
//
// The player lookup maps a player to its leaf id (not to a position, which
// shifts on every insert); the position is found by scanning the leaf's player
// words, which is a few hundred contiguous bytes.

// leafMax is the number of entries a leaf holds. At 128, the row array of a
// 1-, 2- or 4-key leaf (3, 4 or 6 KiB) fills a Go allocation size class
// exactly (a 3-key one wastes 5%), and the node with its inline player array
// fills the 704-byte class. Leaves of 1, 2 or 4 KiB measured the same write
// speed: it is bound by cache misses, not by the memmove of an insert.
const leafMax = 128

// fences is the number of fence keys per leaf (see node.fence).
const fences = 16

// maxFanout bounds the children of an inner node; the arrays have one more
// slot so that a node may overflow by one before it is split.
const maxFanout = 64

// node is a leaf (in == nil) or an inner node.
type node[R row] struct {
	parent *node[R]
	next   *node[R]  // leaf: the next leaf in order, nil for the last
	in     *inner[R] // inner node payload; nil for a leaf
	rows   []R       // leaf: rows in order, cap = tree.leafCap, never regrown
	id     uint32    // leaf: index in tree.leaves, stored in the lookup

	// pl holds player | hiddenBit, parallel to rows. It is inline, not a
	// slice, so that finding a player costs no extra dependent cache miss
	// after the one that brings in the node.
	pl [leafMax]uint32

	// fence[k] is the first word of rows[k*fstride]. A search scans the
	// fences (in the node, already cached) and then binary-searches one
	// block of 8 rows, touching two or three cache lines of a cold leaf
	// where a plain binary search over its 3-6 KiB touches up to seven.
	// Costs 1 byte per entry; measured about 10% off a random update.
	fence [fences]int64
}

// players returns the player words of a leaf.
func (l *node[R]) players() []uint32 { return l.pl[:len(l.rows)] }

// inner is the payload of an inner node. Fixed arrays make it one
// allocation; inner nodes are about 1% of the nodes, so their slack is cheap.
type inner[R row] struct {
	n    int // children in use
	kids [maxFanout + 1]*node[R]
	cnt  [maxFanout + 1]uint32 // entries below each child
	vis  [maxFanout + 1]uint32 // visible entries below each child
	seps [maxFanout + 1]R      // seps[i], i >= 1: every row of kids[i] is >= it and every row of kids[i-1] is <= it
}

// tree is the generic implementation behind Index, one instantiation per key
// count.
type tree[R row] struct {
	mask    [4]int64 // XOR applied to each key: 0 ascending, -1 descending
	root    *node[R]
	leaves  []*node[R] // by leaf id; nil for a free id
	free    []uint32   // free leaf ids
	look    lookup
	total   int
	visible int
	ninner  int

	// Shape parameters; fields rather than constants so that tests can use
	// tiny nodes and reach deep trees with few entries.
	leafCap, minLeaf, mergeLeaf, shiftMin int
	fstride                               int // rows per fence block
	fanout, minInner, mergeInner          int

	// Scratch space for regrouping leaves and inner nodes, reused to avoid
	// garbage on the write path.
	scRows    []R
	scPlayers []uint32
	scSrc     []uint8
	scIn      *inner2[R]
}

// inner2 is scratch for merging two inner nodes.
type inner2[R row] struct {
	kids [2*maxFanout + 2]*node[R]
	cnt  [2*maxFanout + 2]uint32
	vis  [2*maxFanout + 2]uint32
	seps [2*maxFanout + 2]R
}

// newTree returns an empty tree with leaves of leafCap slots and inner nodes
// of up to fanout children; 0 means the default.
func newTree[R row](desc []bool, leafCap, fanout int) *tree[R] {
	if leafCap == 0 {
		leafCap = leafMax
	}
	if fanout == 0 {
		fanout = maxFanout
	}
	if leafCap < 3 || leafCap > leafMax || fanout < 4 || fanout > maxFanout {
		panic("rank: bad node shape")
	}
	t := &tree[R]{
		leafCap: leafCap,
		fstride: (leafCap + fences - 1) / fences,
		// A leaf below a third full is merged or rebalanced with a
		// sibling. A merge leaves room (at most 5/6 full) so the next
		// insert does not split it again, and a rebalance gives both at
		// least 5/12, above the minimum, so deletes do not thrash.
		minLeaf:   max(1, leafCap/3),
		mergeLeaf: leafCap * 5 / 6,
		// A full leaf first pours into a sibling with at least this much
		// room; only when both siblings are (nearly) full does it split,
		// two leaves into three. Measured at 1M entries, leaves stay 86%
		// full after random inserts and 82% under random updates, where
		// plain halving splits give about 69%; leaf fill is most of the
		// memory per entry.
		shiftMin:   max(1, leafCap/16),
		fanout:     fanout,
		minInner:   max(2, fanout/4),
		mergeInner: fanout * 3 / 4,
	}
	for i, d := range desc {
		if d {
			t.mask[i] = -1
		}
	}
	t.root = t.newLeaf()
	return t
}

func (t *tree[R]) newLeaf() *node[R] {
	l := &node[R]{rows: make([]R, 0, t.leafCap)}
	if k := len(t.free); k > 0 {
		l.id = t.free[k-1]
		t.free = t.free[:k-1]
		t.leaves[l.id] = l
	} else {
		l.id = uint32(len(t.leaves))
		t.leaves = append(t.leaves, l)
	}
	return l
}

func (t *tree[R]) freeLeaf(l *node[R]) {
	t.leaves[l.id] = nil
	t.free = append(t.free, l.id)
	l.parent, l.next, l.rows = nil, nil, nil
}

func (t *tree[R]) newInner() *node[R] {
	t.ninner++
	return &node[R]{in: new(inner[R])}
}

// childIndex returns the position of c among p's children. Scanning at most
// 64 pointers of an inner node (inner nodes are few and stay cached) keeps
// splits and merges from having to renumber children; it is under a tenth
// of the time of a Rank at 1M entries.
func childIndex[R row](p, c *node[R]) int {
	in := p.in
	for i := 0; i < in.n; i++ {
		if in.kids[i] == c {
			return i
		}
	}
	panic("rank: corrupt tree: child not found in parent")
}

// find returns the position of player p in leaf l, or -1.
func (l *node[R]) find(p uint32) int {
	want := p | hiddenBit
	for i, q := range l.players() {
		if q|hiddenBit == want {
			return i
		}
	}
	return -1
}

// locate returns the leaf and position of player p's entry.
func (t *tree[R]) locate(p uint32) (*node[R], int, bool) {
	id, ok := t.look.get(p)
	if !ok {
		return nil, 0, false
	}
	l := t.leaves[id]
	i := l.find(p)
	if i < 0 {
		panic("rank: corrupt index: player missing from its leaf")
	}
	return l, i, true
}

// upperBound returns the number of rows of leaf l that are <= x; inserting
// there keeps equal rows (possible only if callers reuse a Seq) in arrival
// order. The fences narrow the search to the rows between the last block
// whose first word is below x's and the first block whose first word is
// above it; ties on the first word widen that range, never break it.
func (t *tree[R]) upperBound(l *node[R], x *R) int {
	n, s, x0 := len(l.rows), t.fstride, (*x)[0]
	lo, hi := 0, n
	for k, i := 0, 0; i < n; k, i = k+1, i+s {
		if f := l.fence[k]; f < x0 {
			lo = i + 1
		} else if f > x0 {
			hi = i
			break
		}
	}
	rows := l.rows
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cmpRow(&rows[m], x) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// refence recomputes the fences of the blocks that start at or after row
// from, after the rows from there on changed.
func (t *tree[R]) refence(l *node[R], from int) {
	s := t.fstride
	for k, i := (from+s-1)/s, 0; ; k++ {
		if i = k * s; i >= len(l.rows) {
			return
		}
		l.fence[k] = l.rows[i][0]
	}
}

// child returns the index of the child whose range holds x.
func (in *inner[R]) child(x *R) int {
	lo, hi := 1, in.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cmpRow(&in.seps[m], x) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

func (t *tree[R]) get(p uint32) (Entry, bool) {
	l, i, ok := t.locate(p)
	if !ok {
		return Entry{}, false
	}
	return decode(&t.mask, &l.rows[i], l.pl[i]), true
}

// rank counts the entries (or visible entries) ahead of the player's entry:
// those before it in its leaf, then, at each level up, those below the
// siblings to the left of the node just left.
func (t *tree[R]) rank(p uint32, all bool) (int, bool) {
	l, pos, ok := t.locate(p)
	if !ok {
		return 0, false
	}
	r := pos
	if !all {
		r = 0
		for _, q := range l.pl[:pos] {
			r += visible(q)
		}
	}
	for c, n := l, l.parent; n != nil; c, n = n, n.parent {
		in := n.in
		k := childIndex(n, c)
		counts := in.cnt[:k]
		if !all {
			counts = in.vis[:k]
		}
		for _, v := range counts {
			r += int(v)
		}
	}
	return r + 1, true
}

// seek returns the leaf and position of the entry with 0-based rank k among
// all or among visible entries.
func (t *tree[R]) seek(k int, all bool) (*node[R], int, bool) {
	limit := t.total
	if !all {
		limit = t.visible
	}
	if k < 0 || k >= limit {
		return nil, 0, false
	}
	n := t.root
	for n.in != nil {
		in := n.in
		counts := in.cnt[:in.n]
		if !all {
			counts = in.vis[:in.n]
		}
		i := 0
		for ; i < len(counts)-1 && k >= int(counts[i]); i++ {
			k -= int(counts[i])
		}
		n = in.kids[i]
	}
	if all {
		return n, k, true
	}
	for i, q := range n.players() {
		if q&hiddenBit == 0 {
			if k == 0 {
				return n, i, true
			}
			k--
		}
	}
	panic("rank: corrupt tree: visible count out of step")
}

func (t *tree[R]) at(rank int, all bool) (Entry, bool) {
	l, i, ok := t.seek(rank-1, all)
	if !ok {
		return Entry{}, false
	}
	return decode(&t.mask, &l.rows[i], l.pl[i]), true
}

func (t *tree[R]) scan(start, n int, all bool, fn func(int, Entry) bool) {
	start = max(start, 1)
	l, i, ok := t.seek(start-1, all)
	if !ok || n <= 0 {
		return
	}
	r := start
	for ; l != nil; l, i = l.next, 0 {
		for ; i < len(l.rows); i++ {
			pl := l.pl[i]
			if !all && pl&hiddenBit != 0 {
				continue
			}
			if !fn(r, decode(&t.mask, &l.rows[i], pl)) {
				return
			}
			if r++; r-start == n {
				return
			}
		}
	}
}

func (t *tree[R]) length() int   { return t.total }
func (t *tree[R]) nvisible() int { return t.visible }

// bytes adds up the capacities the tree holds; allocation sizes are chosen to
// match Go size classes, so this is close to what the heap pays.
func (t *tree[R]) bytes() int {
	var r R
	nleaf := len(t.leaves) - len(t.free)
	leaf := int(unsafe.Sizeof(node[R]{})) + t.leafCap*int(unsafe.Sizeof(r))
	in := int(unsafe.Sizeof(node[R]{})) + int(unsafe.Sizeof(inner[R]{}))
	b := nleaf*leaf + t.ninner*in + int(unsafe.Sizeof(*t))
	b += t.look.bytes() + cap(t.leaves)*8 + cap(t.free)*4
	b += cap(t.scRows)*int(unsafe.Sizeof(r)) + cap(t.scPlayers)*4 + cap(t.scSrc)
	if t.scIn != nil {
		b += int(unsafe.Sizeof(*t.scIn))
	}
	return b
}
