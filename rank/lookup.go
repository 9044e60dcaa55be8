package rank

import "github.com/podiumhq/podium/internal/exthash"

// lookup maps a player id to the id of the leaf that holds its entry. Player
// ids are interned, so they are dense across the server but a board may hold
// any subset of them; lookup has two forms and picks one by density:
//
//   - dense: pages of 4096 uint32s indexed by player id, holding leaf id + 1
//     (0 for none). It costs 4 bytes per id up to the highest one, and a
//     lookup is two loads (the page pointer, from a small array that stays
//     cached, then the slot). It is used while the id range is at most about
//     3 ids per player, where it is smaller than the hash table. A page is
//     allocated when an id in it is first set, and the last one grows by
//     1.5x up to its full 16 KiB, so a tiny board pays for a few hundred
//     bytes.
//   - hash: extendible hashing. A directory indexed by the top bits of a
//     Fibonacci hash of the id points to segments, each an open-addressing
//     table with linear probing over one []uint64 of at most 8192 slots
//     (64 KiB), 8 bytes per slot at 60-81% load, 10-13 bytes per player (a
//     Go map[uint32]uint32 costs 15-40 bytes per entry). A slot packs
//     leaf<<32 | player | hiddenBit; the set top bit of the low word marks
//     it occupied (ids are below 1<<31), so 0 is an empty slot and no
//     metadata is needed. A segment's size need not be a power of two
//     (the home slot is the low 32 hash bits scaled by multiply-shift), so
//     it grows by 1.25x and is sized exactly on Load; a full segment of 8192
//     slots splits in two by the next top hash bit, and the directory
//     doubles when a segment that splits is as deep as it. The directory
//     holds each segment's slice header (tabs), so a lookup is the header,
//     usually cached, then the slot.
//
// Growth is incremental: no single call copies more than one page or one
// segment (64 KiB), plus the directory or the page array (32 bytes per
// segment of 2,000-6,600 players, 24 bytes per page of 4096 ids: 60-100 KiB
// at 10M). The whole table used to be copied at once, which took 100 ms of
// CPU at 10M players (more wall time on a busy machine) under the board
// writer's lock (docs/ARCHITECTURE.md, "Incremental growth of the player
// tables"; figures in docs/BENCHMARKS.md, "Growth pauses at 10M players").
//
// A switch between the forms (a sparse id arriving on a dense board, a
// dense board losing most of its players, a hashed board becoming dense)
// only changes the form new players go to: the other form is drained into
// it one page or one segment per Put or Delete, and get and del consult both
// forms meanwhile. A player is in exactly one form. During a switch both
// forms hold memory: at most what the old form held when it started,
// released page by page or segment by segment.
type lookup struct {
	pages  [][]uint32  // dense form: pages[p>>pageBits][p&pageMask]; nil or short pages hold no one beyond their length
	d      exthash.Dir // hash form: by the top bits of hash(p); no segments when the hash holds no one
	hashed bool        // the form new players go to
	nd, nh int         // players in the dense pages and in the hash
	dlim   uint32      // dense form: ids below dlim need no density check
	filled int         // a switch to dense: pages below it have their full size
	grows  int         // segment growths and splits so far, for step's budget
	top    uint32      // highest player id ever set; bounds the dense form
}

const (
	pageBits = 12
	pageSize = 1 << pageBits
	pageMask = pageSize - 1

	// drainMax and fillMax bound the work of one step of a switch of
	// form: players moved from the dense pages into the hash, and pages
	// given their full size before a segment moves into them.
	drainMax = 512
	fillMax  = 8

	// maxDepth bounds the directory by the 32 hash bits below its top that
	// stay apart from a home slot's: a segment that deep grows past
	// exthash.MaxSeg instead of splitting (64 KiB segments, rehashed in
	// about 50 µs; at 81% load, exthash.MaxLoad, a miss scans about 15
	// slots, two cache lines).
	maxDepth = 32
)

// denseFits reports whether a dense array of size ids is worth it for n
// players: up to 3 ids per player it is smaller than the hash table (4 bytes
// per id against about 12 per player), and tiny boards always fit.
func denseFits(size, n int) bool {
	return size <= 3*n+1024
}

// hash spreads dense interned ids evenly over 64 bits (Fibonacci hashing):
// the top bits pick the directory entry, the bits below them the slot.
func hash(p uint32) uint64 { return uint64(p) * 0x9E3779B97F4A7C15 }

// slotHash is a slot word's hash, by its player.
func slotHash(x uint64) uint64 { return hash(uint32(x) &^ hiddenBit) }

// len returns the number of players held.
func (l *lookup) len() int { return l.nd + l.nh }

// get returns the leaf id stored for player p. It never changes l, so
// readers may share it.
func (l *lookup) get(p uint32) (uint32, bool) {
	if k := int(p >> pageBits); k < len(l.pages) {
		if pg, i := l.pages[k], int(p&pageMask); i < len(pg) {
			if v := pg[i]; v != 0 {
				return v - 1, true
			}
		}
	}
	if l.nh == 0 {
		return 0, false
	}
	h := hash(p)
	slots := l.d.Tabs[h>>(64-l.d.Depth)]
	want := p | hiddenBit
	for i := exthash.Home(h, len(slots)); ; {
		v := slots[i]
		if uint32(v) == want {
			return uint32(v >> 32), true
		}
		if v == 0 {
			return 0, false
		}
		if i++; i == len(slots) {
			i = 0
		}
	}
}

// set stores leaf id v (below 1<<32-1) for player p and reports whether p
// was new.
func (l *lookup) set(p, v uint32) bool {
	if !l.hashed && p < l.dlim && l.nh == 0 {
		// The common dense case, with no switch under way.
		if k := int(p >> pageBits); k < len(l.pages) {
			if pg, i := l.pages[k], int(p&pageMask); i < len(pg) {
				l.top = max(l.top, p)
				old := pg[i]
				pg[i] = v + 1
				if old == 0 {
					l.nd++
				}
				return old == 0
			}
		}
	}
	l.top = max(l.top, p)
	n := l.len()
	if !l.hashed && p >= l.dlim {
		if denseFits(int(p)+1, n+1) {
			l.dlim = uint32(min(max(int(p)+1, int(l.dlim)*3/2, 64), 3*(n+1)+1024))
		} else {
			l.hashed = true
		}
	}
	// A player in the other form (a switch is under way) moves over.
	if l.hashed {
		if l.nd > 0 {
			l.ddel(p)
		}
		if !l.hset(p, v, true) {
			// The ids turned out dense enough: hset switched l to
			// the dense form instead of growing.
			l.dset(p, v)
		}
	} else {
		if l.nh > 0 {
			l.hdel(p)
		}
		l.dset(p, v)
	}
	return l.len() > n
}

// del removes player p.
func (l *lookup) del(p uint32) bool {
	if !(l.nd > 0 && l.ddel(p)) && !(l.nh > 0 && l.hdel(p)) {
		return false
	}
	// A board that lost most of its players would keep paying for the
	// dense range; with hysteresis against flapping, switch to hashing.
	if !l.hashed && int(l.dlim) > 2*(3*l.len()+1024) {
		l.hashed = true
	}
	return true
}

// step moves one page or one segment of the form new players no longer go
// to into the other, so a switch of form completes over as many calls as
// the old form has pages or segments, each bounded. The tree calls it once
// per Put or Delete, not per set: a write that regroups leaves sets the
// lookup of a hundred players or more.
func (l *lookup) step() {
	if l.hashed && l.nd > 0 {
		// Move the top entries of the last page, scanning at most two
		// pages of ids, moving at most drainMax players and stopping
		// after an insert that grew a segment: the players of a page
		// spread over every segment, which fill up together, so a whole
		// page could split hundreds of them in one call.
		grows := l.grows
		moved, scanned := 0, 0
		for l.nd > 0 && moved < drainMax && scanned < 2*pageSize && l.grows == grows {
			k := len(l.pages) - 1
			pg := l.pages[k]
			i := len(pg) - 1
			for ; i >= 0 && moved < drainMax && l.grows == grows; i-- {
				if x := pg[i]; x != 0 {
					l.hset(uint32(k<<pageBits|i), x-1, false)
					l.nd--
					moved++
				}
			}
			scanned += len(pg) - 1 - i
			if i < 0 {
				l.pages = l.pages[:k]
			} else {
				l.pages[k] = pg[:i+1]
			}
		}
		if l.nd == 0 {
			l.pages = nil
		}
		return
	}
	if !l.hashed && l.nh > 0 {
		// First give every page up to the highest id its full size, a
		// few per call, so that the moves below allocate nothing.
		for n := 0; l.filled <= int(l.top>>pageBits); l.filled++ {
			k := l.filled
			if k >= len(l.pages) {
				l.pages = append(l.pages, make([][]uint32, k+1-len(l.pages))...)
			}
			if len(l.pages[k]) < pageSize {
				if n == fillMax {
					return
				}
				full := make([]uint32, pageSize)
				copy(full, l.pages[k])
				l.pages[k] = full
				n++
			}
		}
		at := 0
		for l.d.Segs[at].N == 0 {
			at++
		}
		s := l.d.Segs[at]
		for _, x := range s.Slots {
			if x != 0 {
				l.dset(uint32(x)&^hiddenBit, uint32(x>>32))
			}
		}
		l.nh -= s.N
		s.N, s.Slots = 0, exthash.NewSlots(16)
		l.d.File(s, at)
		if l.nh == 0 {
			l.d = exthash.Dir{}
		}
	}
}

// dset stores v for p in the dense pages, adding or lengthening p's page.
func (l *lookup) dset(p, v uint32) {
	k, i := int(p>>pageBits), int(p&pageMask)
	if k >= len(l.pages) {
		l.pages = append(l.pages, make([][]uint32, k+1-len(l.pages))...)
	}
	pg := l.pages[k]
	if i >= len(pg) {
		grown := make([]uint32, min(pageSize, max(i+1, len(pg)*3/2, 64)))
		copy(grown, pg)
		l.pages[k], pg = grown, grown
	}
	if pg[i] == 0 {
		l.nd++
	}
	pg[i] = v + 1
}

// ddel removes p from the dense pages.
func (l *lookup) ddel(p uint32) bool {
	k, i := int(p>>pageBits), int(p&pageMask)
	if k >= len(l.pages) || i >= len(l.pages[k]) || l.pages[k][i] == 0 {
		return false
	}
	l.pages[k][i] = 0
	l.nd--
	return true
}

// hset stores v for p in the hash. When p is new and its segment is full,
// it grows or splits the segment; but if switchOK is set and the ids have
// become dense enough, it switches l to the dense form instead, stores
// nothing and returns false.
func (l *lookup) hset(p, v uint32, switchOK bool) bool {
	if l.d.Segs == nil {
		s := &exthash.Segment{Slots: exthash.NewSlots(16)}
		l.d = exthash.Dir{Segs: []*exthash.Segment{s}, Tabs: [][]uint64{s.Slots}}
	}
	h := hash(p)
	want := p | hiddenBit
	for {
		// Probe through tabs, as get does; the segment itself is needed
		// only to add a player.
		at := h >> (64 - l.d.Depth)
		slots := l.d.Tabs[at]
		i := exthash.Home(h, len(slots))
		for {
			x := slots[i]
			if uint32(x) == want {
				slots[i] = uint64(v)<<32 | uint64(want)
				return true
			}
			if x == 0 {
				break
			}
			if i++; i == len(slots) {
				i = 0
			}
		}
		s := l.d.Segs[at]
		if !s.Full() {
			slots[i] = uint64(v)<<32 | uint64(want)
			s.N++
			l.nh++
			return true
		}
		if switchOK && denseFits(int(l.top)+1, l.len()+1) {
			l.hashed, l.dlim, l.filled = false, l.top+1, 0
			return false
		}
		l.grows++
		l.d.Grow(s, h, maxDepth, slotHash)
	}
}

// hdel removes p from the hash.
func (l *lookup) hdel(p uint32) bool {
	h := hash(p)
	s := l.d.Seg(h)
	slots := s.Slots
	want := p | hiddenBit
	i := exthash.Home(h, len(slots))
	for {
		x := slots[i]
		if x == 0 {
			return false
		}
		if uint32(x) == want {
			break
		}
		if i++; i == len(slots) {
			i = 0
		}
	}
	// Shift later members of the probe run back instead of leaving a
	// tombstone, so lookups never slow down with churn.
	size := len(slots)
	for j := i; ; {
		if j++; j == size {
			j = 0
		}
		x := slots[j]
		if x == 0 {
			break
		}
		// The member at j may move into the hole at i only if its home is
		// not cyclically inside (i, j]; otherwise a lookup starting at its
		// home would stop at the hole before reaching it.
		k := exthash.Home(hash(uint32(x)&^hiddenBit), size)
		if i <= j {
			if i < k && k <= j {
				continue
			}
		} else if i < k || k <= j {
			continue
		}
		slots[i] = x
		i = j
	}
	slots[i] = 0
	s.N--
	l.nh--
	return true
}

// each calls fn for every player and leaf id held.
func (l *lookup) each(fn func(p, v uint32)) {
	for k, pg := range l.pages {
		for i, x := range pg {
			if x != 0 {
				fn(uint32(k<<pageBits|i), x-1)
			}
		}
	}
	l.d.Each(func(s *exthash.Segment) {
		for _, x := range s.Slots {
			if x != 0 {
				fn(uint32(x)&^hiddenBit, uint32(x>>32))
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
		l.dlim = top + 1
		l.pages = make([][]uint32, int(top>>pageBits)+1)
		for k := range l.pages {
			l.pages[k] = make([]uint32, min(pageSize, int(top)+1-k<<pageBits))
		}
		return
	}
	l.hashed = true
	l.d.Size(n)
}

// bytes returns the memory the table holds.
func (l *lookup) bytes() int {
	b := cap(l.pages)*24 + l.d.Bytes()
	for _, pg := range l.pages {
		b += cap(pg) * 4
	}
	return b
}
