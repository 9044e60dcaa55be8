package rank

import (
	"errors"
	"fmt"

	"github.com/podiumhq/podium/internal/exthash"
)

// checkIndex verifies every structural invariant of x's tree: counts,
// separators, parent and sibling links, fill bounds, leaf ids and the player
// lookup. A property test that only compared answers could miss a corrupt
// count that no query happened to read yet.
func checkIndex(x *Index) error {
	switch t := x.t.(type) {
	case *tree[[3]int64]:
		return checkTree(t)
	case *tree[[4]int64]:
		return checkTree(t)
	case *tree[[5]int64]:
		return checkTree(t)
	case *tree[[6]int64]:
		return checkTree(t)
	}
	return errors.New("unknown tree type")
}

type checker[R row] struct {
	t       *tree[R]
	leaves  []*node[R]
	inners  int
	depth   int
	players map[uint32]bool
}

func checkTree[R row](t *tree[R]) error {
	c := &checker[R]{t: t, depth: -1, players: map[uint32]bool{}}
	if t.root.parent != nil {
		return errors.New("root has a parent")
	}
	if t.root.in != nil && t.root.in.n < 2 {
		return fmt.Errorf("root inner node has %d children", t.root.in.n)
	}
	total, vis, _, _, err := c.walk(t.root, 0)
	if err != nil {
		return err
	}
	if total != t.total || vis != t.visible {
		return fmt.Errorf("tree counts %d/%d, index says %d/%d", total, vis, t.total, t.visible)
	}
	if c.inners != t.ninner {
		return fmt.Errorf("%d inner nodes, index says %d", c.inners, t.ninner)
	}
	for i, l := range c.leaves {
		var want *node[R]
		if i+1 < len(c.leaves) {
			want = c.leaves[i+1]
		}
		if l.next != want {
			return fmt.Errorf("leaf %d: next link broken", i)
		}
		if int(l.id) >= len(t.leaves) || t.leaves[l.id] != l {
			return fmt.Errorf("leaf %d: id %d not registered", i, l.id)
		}
	}
	if live := len(t.leaves) - len(t.free); live != len(c.leaves) {
		return fmt.Errorf("%d leaves in tree, %d registered", len(c.leaves), live)
	}
	for _, id := range t.free {
		if t.leaves[id] != nil {
			return fmt.Errorf("free leaf id %d is in use", id)
		}
	}
	if err := checkLookup(&t.look); err != nil {
		return fmt.Errorf("lookup: %v", err)
	}
	if t.look.len() != t.total {
		return fmt.Errorf("lookup holds %d players, index has %d entries", t.look.len(), t.total)
	}
	for _, l := range c.leaves {
		for _, q := range l.players() {
			p := q &^ hiddenBit
			if id, ok := t.look.get(p); !ok || id != l.id {
				return fmt.Errorf("lookup of player %d: leaf %d %v, want %d", p, id, ok, l.id)
			}
		}
	}
	return nil
}

// walk checks the subtree at n, at depth d, and returns its entry count,
// visible count, and its lowest and highest rows (nil when empty).
func (c *checker[R]) walk(n *node[R], d int) (total, vis int, lo, hi *R, err error) {
	t := c.t
	if n.in == nil {
		if c.depth >= 0 && c.depth != d {
			return 0, 0, nil, nil, fmt.Errorf("leaves at depths %d and %d", c.depth, d)
		}
		c.depth = d
		c.leaves = append(c.leaves, n)
		if cap(n.rows) != t.leafCap {
			return 0, 0, nil, nil, fmt.Errorf("leaf row array: cap %d, leafCap %d", cap(n.rows), t.leafCap)
		}
		for k, i := 0, 0; i < len(n.rows); k, i = k+1, i+t.fstride {
			if n.fence[k] != n.rows[i][0] {
				return 0, 0, nil, nil, fmt.Errorf("fence %d is %d, row %d starts with %d", k, n.fence[k], i, n.rows[i][0])
			}
		}
		if n.parent != nil && len(n.rows) < t.minLeaf {
			return 0, 0, nil, nil, fmt.Errorf("leaf holds %d rows, minimum %d", len(n.rows), t.minLeaf)
		}
		for i := range n.rows {
			if i > 0 && cmpRow(&n.rows[i-1], &n.rows[i]) > 0 {
				return 0, 0, nil, nil, fmt.Errorf("leaf rows out of order at %d", i)
			}
			p := n.pl[i] &^ hiddenBit
			if c.players[p] {
				return 0, 0, nil, nil, fmt.Errorf("player %d twice", p)
			}
			c.players[p] = true
			vis += visible(n.pl[i])
		}
		if len(n.rows) > 0 {
			lo, hi = &n.rows[0], &n.rows[len(n.rows)-1]
		}
		return len(n.rows), vis, lo, hi, nil
	}
	c.inners++
	in := n.in
	if in.n > t.fanout || (n.parent != nil && in.n < t.minInner) {
		return 0, 0, nil, nil, fmt.Errorf("inner node has %d children (min %d, max %d)", in.n, t.minInner, t.fanout)
	}
	for i := in.n; i < len(in.kids); i++ {
		if in.kids[i] != nil {
			return 0, 0, nil, nil, fmt.Errorf("stale child pointer at %d", i)
		}
	}
	var prevHi *R
	for i := 0; i < in.n; i++ {
		k := in.kids[i]
		if k.parent != n {
			return 0, 0, nil, nil, fmt.Errorf("child %d has a wrong parent", i)
		}
		kt, kv, klo, khi, err := c.walk(k, d+1)
		if err != nil {
			return 0, 0, nil, nil, err
		}
		if int(in.cnt[i]) != kt || int(in.vis[i]) != kv {
			return 0, 0, nil, nil, fmt.Errorf("child %d counts %d/%d, holds %d/%d", i, in.cnt[i], in.vis[i], kt, kv)
		}
		if kt == 0 {
			return 0, 0, nil, nil, fmt.Errorf("child %d is empty", i)
		}
		if i > 0 && (cmpRow(prevHi, &in.seps[i]) > 0 || cmpRow(&in.seps[i], klo) > 0) {
			return 0, 0, nil, nil, fmt.Errorf("separator %d out of bounds", i)
		}
		if lo == nil {
			lo = klo
		}
		hi, prevHi = khi, khi
		total += kt
		vis += kv
	}
	return total, vis, lo, hi, nil
}

// checkLookup verifies the player lookup's own invariants: the counts of
// both forms, the directory's shape (each segment fills the aligned run of
// entries its prefix names), the load bound of every segment, that every
// slot is reachable from its home, and that no player is in both forms.
func checkLookup(l *lookup) error {
	nd := 0
	for _, pg := range l.pages {
		if len(pg) > pageSize {
			return fmt.Errorf("dense page of %d slots", len(pg))
		}
		for _, x := range pg {
			if x != 0 {
				nd++
			}
		}
	}
	if nd != l.nd {
		return fmt.Errorf("dense pages hold %d players, counted %d", nd, l.nd)
	}
	if l.d.Segs == nil {
		if l.nh != 0 || l.d.Depth != 0 || l.d.Tabs != nil {
			return fmt.Errorf("no directory, but %d hashed players at depth %d", l.nh, l.d.Depth)
		}
		return nil
	}
	nh, err := l.d.Check(slotHash) // shape, counts, load, homes
	if err != nil {
		return err
	}
	l.d.Each(func(s *exthash.Segment) {
		for k, x := range s.Slots {
			if x == 0 || err != nil {
				continue
			}
			p := uint32(x) &^ hiddenBit
			if uint32(x)&hiddenBit == 0 {
				err = fmt.Errorf("slot %d of a segment has no occupied bit", k)
			} else if k := int(p >> pageBits); k < len(l.pages) && int(p&pageMask) < len(l.pages[k]) && l.pages[k][p&pageMask] != 0 {
				err = fmt.Errorf("player %d in both forms", p)
			}
		}
	})
	if err != nil {
		return err
	}
	if nh != l.nh {
		return fmt.Errorf("hash holds %d players, counted %d", nh, l.nh)
	}
	return nil
}
