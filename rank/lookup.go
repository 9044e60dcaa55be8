package rank

// lookup maps a player id to the id of the leaf that holds its entry. Player
// ids are interned, so they are dense across the server but a board may hold
// any subset of them; lookup picks one of two forms by density:
//
//   - dense: a []uint32 indexed by player id holding leaf id + 1 (0 for
//     none). It costs 4 bytes per id up to the highest one, and a lookup is
//     one load. It is used while the array is at most about 3 slots per
//     player, where it is smaller than the hash table.
//   - hash: an open-addressing table with linear probing over one []uint64,
//     8 bytes per slot at 60-81% load, 10-13 bytes per player (a Go
//     map[uint32]uint32 costs 15-40 bytes per entry). A slot packs leaf<<32 | player | hiddenBit; the set
//     top bit of the low word marks it occupied (ids are below 1<<31), so 0
//     is an empty slot and no metadata is needed. The size need not be a
//     power of two (slots are chosen by multiply-shift), which lets it grow
//     by 1.25x and be sized exactly on Load instead of wasting up to half of
//     it on rounding.
//
// Growing either form copies it whole: for the hash table about 15 ms at 1M
// players and 120 ms at 10M, once per 25% growth, under the caller's lock.
// Load sizes the table for its content, so this happens only as a board
// grows.
type lookup struct {
	dense  []uint32 // dense form, when !hashed
	slots  []uint64 // hash form, when hashed
	hashed bool
	n      int    // players held
	top    uint32 // highest player id ever set; bounds the dense form
}

// maxLoad is the load factor (in 1/16) above which the hash table grows.
// Linear probing stays short at 0.81: a miss scans about 15 slots, two cache
// lines.
const maxLoad = 13

// denseFits reports whether a dense array of size ids is worth it for n
// players: up to 3 ids per player it is smaller than the hash table (4 bytes
// per id against about 12 per player), and tiny boards always fit.
func denseFits(size, n int) bool {
	return size <= 3*n+1024
}

// home returns the first slot to probe for player p: a Fibonacci hash spreads
// dense interned ids evenly, then multiply-shift scales it to the table size.
func (l *lookup) home(p uint32) int {
	h := (uint64(p) * 0x9E3779B97F4A7C15) >> 32
	return int((h * uint64(len(l.slots))) >> 32)
}

// get returns the leaf id stored for player p.
func (l *lookup) get(p uint32) (uint32, bool) {
	if !l.hashed {
		if int(p) < len(l.dense) {
			v := l.dense[p]
			return v - 1, v != 0
		}
		return 0, false
	}
	if len(l.slots) == 0 {
		return 0, false
	}
	want := p | hiddenBit
	for i := l.home(p); ; {
		s := l.slots[i]
		if uint32(s) == want {
			return uint32(s >> 32), true
		}
		if s == 0 {
			return 0, false
		}
		if i++; i == len(l.slots) {
			i = 0
		}
	}
}

// set stores leaf id v (below 1<<32-1) for player p and reports whether p
// was new.
func (l *lookup) set(p, v uint32) bool {
	l.top = max(l.top, p)
	if !l.hashed {
		if int(p) >= len(l.dense) {
			need := int(p) + 1
			if !denseFits(need, l.n+1) {
				l.rehash(l.n + 1)
				return l.set(p, v)
			}
			l.redense(min(max(need, len(l.dense)*3/2, 64), 3*(l.n+1)+1024))
		}
		old := l.dense[p]
		l.dense[p] = v + 1
		if old == 0 {
			l.n++
		}
		return old == 0
	}
	if (l.n+1)*16 > len(l.slots)*maxLoad {
		// Grow, or go back to the dense form if the ids allow it.
		if denseFits(int(l.top)+1, l.n+1) {
			l.redense(int(l.top) + 1)
			return l.set(p, v)
		}
		l.rehash(l.n * 5 / 4)
	}
	want := p | hiddenBit
	for i := l.home(p); ; {
		s := l.slots[i]
		if uint32(s) == want || s == 0 {
			l.slots[i] = uint64(v)<<32 | uint64(want)
			if s == 0 {
				l.n++
				return true
			}
			return false
		}
		if i++; i == len(l.slots) {
			i = 0
		}
	}
}

// del removes player p.
func (l *lookup) del(p uint32) bool {
	if !l.hashed {
		if int(p) >= len(l.dense) || l.dense[p] == 0 {
			return false
		}
		l.dense[p] = 0
		l.n--
		// A board that lost most of its players would keep paying for
		// the array; with hysteresis against flapping, switch to hashing.
		if len(l.dense) > 2*(3*l.n+1024) {
			l.rehash(l.n)
		}
		return true
	}
	if len(l.slots) == 0 {
		return false
	}
	want := p | hiddenBit
	i := l.home(p)
	for {
		s := l.slots[i]
		if s == 0 {
			return false
		}
		if uint32(s) == want {
			break
		}
		if i++; i == len(l.slots) {
			i = 0
		}
	}
	// Shift later members of the probe run back instead of leaving a
	// tombstone, so lookups never slow down with churn.
	size := len(l.slots)
	for j := i; ; {
		if j++; j == size {
			j = 0
		}
		s := l.slots[j]
		if s == 0 {
			break
		}
		// The member at j may move into the hole at i only if its home is
		// not cyclically inside (i, j]; otherwise a lookup starting at its
		// home would stop at the hole before reaching it.
		h := l.home(uint32(s) &^ hiddenBit)
		if i <= j {
			if i < h && h <= j {
				continue
			}
		} else if i < h || h <= j {
			continue
		}
		l.slots[i] = s
		i = j
	}
	l.slots[i] = 0
	l.n--
	return true
}

// each calls fn for every player and leaf id held.
func (l *lookup) each(fn func(p, v uint32)) {
	if !l.hashed {
		for p, v := range l.dense {
			if v != 0 {
				fn(uint32(p), v-1)
			}
		}
		return
	}
	for _, s := range l.slots {
		if s != 0 {
			fn(uint32(s)&^hiddenBit, uint32(s>>32))
		}
	}
}

// redense moves the content to a dense array of size ids.
func (l *lookup) redense(size int) {
	d := make([]uint32, size)
	l.each(func(p, v uint32) { d[p] = v + 1 })
	l.dense, l.slots, l.hashed = d, nil, false
}

// rehash moves the content to a hash table sized for n players at 75% load
// (so growing by rehash(n*5/4) at 81% leaves it 60% full).
func (l *lookup) rehash(n int) {
	old := *l
	size := n*16/(maxLoad-1) + 16
	l.slots, l.dense, l.hashed = make([]uint64, size), nil, true
	old.each(func(p, v uint32) {
		for i := l.home(p); ; {
			if l.slots[i] == 0 {
				l.slots[i] = uint64(v)<<32 | uint64(p|hiddenBit)
				return
			}
			if i++; i == size {
				i = 0
			}
		}
	})
}

// reset empties the table and sizes it for n players whose highest id is
// top, so that Load never grows it.
func (l *lookup) reset(n int, top uint32) {
	*l = lookup{top: top}
	if n == 0 {
		return
	}
	if denseFits(int(top)+1, n) {
		l.dense = make([]uint32, int(top)+1)
		return
	}
	l.rehash(n)
}

// bytes returns the memory the table holds.
func (l *lookup) bytes() int {
	return cap(l.dense)*4 + cap(l.slots)*8
}
