// Package intern maps strings (player ids) to dense uint32 ids and back,
// compactly: the bytes live in append-only chunks and the lookup is an
// open-addressing table of 8-byte slots (id and a hash fingerprint, so a
// probe compares bytes only on a likely match), so a player costs about its
// length plus 20-28 bytes instead of the ~80 bytes of a map[string]uint32
// plus a []string.
//
// Nothing grows by copying itself whole, so that interning a new player
// never stalls the server (the table is behind one server-wide lock): the
// id-to-string refs are chunks of 8192 that are never reallocated, and the
// slots are split by extendible hashing into segments of at most 8192 slots
// (64 KiB) under a directory indexed by the top fingerprint bits. A full
// segment grows by 1.25x and, at 8192 slots, splits in two; a slot's home
// comes from its fingerprint alone, so neither rehashes a string. The table
// used to double its slots in one step, rehashing every string: 0.9-1.1 s of
// CPU at 6.3M players (docs/BENCHMARKS.md, "Growth pauses at 10M players").
//
// A Table is not safe for concurrent use; callers hold a lock.
package intern

import (
	"hash/maphash"
	"unsafe"
)

const chunkSize = 64 << 10

const (
	refBits = 13
	refSize = 1 << refBits // refs per chunk, 96 KiB
	refMask = refSize - 1

	maxSeg  = 8192 // slots of a segment before it splits
	maxLoad = 13   // in 1/16: a segment grows above 81% full
)

// Table interns strings. The zero value is not usable; call New.
type Table struct {
	seed   maphash.Seed
	chunks [][]byte   // append-only; a chunk is never reallocated once strings point into it
	refs   [][]ref    // id -> location of its bytes, in chunks of refSize, never reallocated
	n      int        // strings interned
	dir    []*segment // by the top depth bits of the fingerprint
	tabs   [][]uint64 // dir[i].slots, so that a lookup loads one slice header before the slot
	depth  uint8
}

// segment is one open-addressing table: 0 = empty, else
// fingerprint<<32 | id+1, where the fingerprint is the top 32 bits of the
// string's hash.
type segment struct {
	slots []uint64
	depth uint8 // local depth, <= the directory's
	n     int
}

type ref struct {
	chunk uint32
	off   uint32
	n     uint32
}

// New returns an empty table sized for about n strings.
func New(n int) *Table {
	t := &Table{seed: maphash.MakeSeed()}
	t.size(n)
	return t
}

// size lays out an empty directory whose segments hold n strings at 75%
// load without growing.
func (t *Table) size(n int) {
	t.depth = 0
	for uint64(n)*16 > uint64(maxSeg*(maxLoad-1))<<t.depth {
		t.depth++
	}
	t.dir, t.tabs = make([]*segment, 1<<t.depth), make([][]uint64, 1<<t.depth)
	for i := range t.dir {
		t.dir[i] = &segment{slots: newSlots(segSize(n >> t.depth)), depth: t.depth}
		t.tabs[i] = t.dir[i].slots
	}
}

// segSize returns a segment size for n strings at 75% load.
func segSize(n int) int {
	size := n*16/(maxLoad-1) + 16
	// Above 32 KiB Go allocates whole 8 KiB pages: take the page
	// boundary below if it still holds n under maxLoad.
	if r := size &^ 1023; size > 4096 && r >= n*16/maxLoad+16 {
		size = r
	}
	return min(maxSeg, size)
}

// newSlots returns a zeroed segment of at least n slots, as many as the
// allocation holds (Go rounds a request up to its size class or to whole
// pages; those slots would be paid for and left unused).
func newSlots(n int) []uint64 {
	s := append([]uint64(nil), make([]uint64, n)...)
	return s[:cap(s)]
}

// home returns the first slot to probe for fingerprint fp in a segment of
// size slots: the fingerprint remixed (an odd multiplier, so that its low
// bits reach the top ones; the directory uses the top bits as they are),
// scaled by multiply-shift. It does not depend on the depth, so a slot's
// home stays put when the directory doubles.
func home(fp uint32, size int) int {
	return int(uint64(fp*0x9E3779B9) * uint64(size) >> 32)
}

// Len returns the number of interned strings.
func (t *Table) Len() int { return t.n }

// String returns the string with id. It panics if id was never returned.
func (t *Table) String(id uint32) string {
	r := t.refs[id>>refBits][id&refMask]
	if r.n == 0 {
		return ""
	}
	b := t.chunks[r.chunk][r.off : r.off+r.n]
	return unsafe.String(&b[0], len(b))
}

// find returns the id of s, or the segment and the empty slot where it
// would go.
func (t *Table) find(s string) (id uint32, ok bool, seg *segment, slot int, fp uint32) {
	fp = uint32(maphash.String(t.seed, s) >> 32)
	slots := t.tabs[fp>>(32-t.depth)]
	for i := home(fp, len(slots)); ; {
		v := slots[i]
		if v == 0 {
			return 0, false, t.dir[fp>>(32-t.depth)], i, fp
		}
		if uint32(v>>32) == fp {
			if id := uint32(v) - 1; t.String(id) == s {
				return id, true, nil, 0, fp
			}
		}
		if i++; i == len(slots) {
			i = 0
		}
	}
}

// Lookup returns the id of s if it is interned.
func (t *Table) Lookup(s string) (uint32, bool) {
	id, ok, _, _, _ := t.find(s)
	return id, ok
}

// Intern returns the id of s, adding it if needed. New ids are dense:
// 0, 1, 2, ...
func (t *Table) Intern(s string) uint32 {
	id, ok, seg, i, fp := t.find(s)
	if ok {
		return id
	}
	if (seg.n+1)*16 > len(seg.slots)*maxLoad {
		t.grow(seg, fp)
		_, _, seg, i, _ = t.find(s)
	}
	id = uint32(t.n)
	if id&refMask == 0 {
		t.refs = append(t.refs, make([]ref, 0, refSize))
	}
	last := len(t.refs) - 1
	t.refs[last] = append(t.refs[last], t.store(s))
	t.n++
	seg.slots[i] = uint64(fp)<<32 | uint64(id+1)
	seg.n++
	return id
}

func (t *Table) store(s string) ref {
	if len(s) == 0 {
		return ref{}
	}
	if len(s) > chunkSize/4 { // a long string gets a chunk of its own
		t.chunks = append(t.chunks, []byte(s))
		return ref{chunk: uint32(len(t.chunks) - 1), off: 0, n: uint32(len(s))}
	}
	last := len(t.chunks) - 1
	if last < 0 || cap(t.chunks[last])-len(t.chunks[last]) < len(s) {
		t.chunks = append(t.chunks, make([]byte, 0, chunkSize))
		last++
	}
	c := t.chunks[last]
	off := len(c)
	t.chunks[last] = append(c, s...)
	return ref{chunk: uint32(last), off: uint32(off), n: uint32(len(s))}
}

// grow makes room in segment s, which holds fingerprint fp: it grows by
// 1.25x up to maxSeg slots, then splits in two by the next fingerprint
// bit, doubling the directory when s is as deep as it.
func (t *Table) grow(s *segment, fp uint32) {
	if len(s.slots) < maxSeg || s.depth >= 24 {
		old := s.slots
		s.slots = newSlots(max(segSize(s.n*5/4), len(old)+1))
		s.n = 0
		s.refill(old, nil)
		t.file(s, int(fp>>(32-t.depth)))
		return
	}
	if s.depth == t.depth {
		d := make([]*segment, 2*len(t.dir))
		tabs := make([][]uint64, 2*len(t.dir))
		for i, x := range t.dir {
			d[2*i], d[2*i+1] = x, x
			tabs[2*i], tabs[2*i+1] = x.slots, x.slots
		}
		t.dir, t.tabs, t.depth = d, tabs, t.depth+1
	}
	bit := uint32(1) << (31 - s.depth)
	n1 := 0
	for _, v := range s.slots {
		if v != 0 && uint32(v>>32)&bit != 0 {
			n1++
		}
	}
	a := &segment{slots: newSlots(segSize(s.n - n1)), depth: s.depth + 1}
	b := &segment{slots: newSlots(segSize(n1)), depth: s.depth + 1}
	a.refill(s.slots, func(v uint64) bool { return uint32(v>>32)&bit == 0 })
	b.refill(s.slots, func(v uint64) bool { return uint32(v>>32)&bit != 0 })
	span := 1 << (t.depth - s.depth)
	first := int(fp>>(32-t.depth)) &^ (span - 1)
	t.file(a, first)
	t.file(b, first+span/2)
}

// file points the directory entries of segment s, which include entry at,
// to it and its slots.
func (t *Table) file(s *segment, at int) {
	span := 1 << (t.depth - s.depth)
	first := at &^ (span - 1)
	for i := first; i < first+span; i++ {
		t.dir[i], t.tabs[i] = s, s.slots
	}
}

// refill puts the occupied slots of old that keep accepts (all when keep is
// nil) into s.
func (s *segment) refill(old []uint64, keep func(uint64) bool) {
	for _, v := range old {
		if v == 0 || keep != nil && !keep(v) {
			continue
		}
		for i := home(uint32(v>>32), len(s.slots)); ; {
			if s.slots[i] == 0 {
				s.slots[i] = v
				s.n++
				break
			}
			if i++; i == len(s.slots) {
				i = 0
			}
		}
	}
}

// Reserve makes room for n more strings without growing the lookup table
// on the way (the startup load knows how many players it will read). It
// lays the table out again, copying what it holds: meant for startup,
// before the table fills.
func (t *Table) Reserve(n int) {
	old, depth := t.dir, t.depth
	t.size(t.n + n)
	for i := 0; i < len(old); {
		s := old[i]
		for _, v := range s.slots {
			if v == 0 {
				continue
			}
			fp := uint32(v >> 32)
			seg := t.dir[fp>>(32-t.depth)]
			seg.refill([]uint64{v}, nil)
		}
		i += 1 << (depth - s.depth)
	}
}

// Bytes estimates the heap bytes the table holds.
func (t *Table) Bytes() int {
	n := cap(t.dir)*8 + cap(t.tabs)*24 + cap(t.refs)*24
	for _, r := range t.refs {
		n += cap(r) * int(unsafe.Sizeof(ref{}))
	}
	for i := 0; i < len(t.dir); {
		s := t.dir[i]
		n += cap(s.slots)*8 + 40
		i += 1 << (t.depth - s.depth)
	}
	for _, c := range t.chunks {
		n += cap(c)
	}
	return n
}
