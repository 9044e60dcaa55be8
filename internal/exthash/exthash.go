// Package exthash is the table under the rank index's player lookup and the
// intern table: extendible hashing over open-addressing segments of uint64
// slot words, so that no insert copies more than one segment.
//
// A Dir indexes segments by the top Depth bits of a 64-bit hash; a segment
// is one []uint64 with linear probing, 0 an empty slot, the home slot the
// low 32 hash bits scaled by multiply-shift (Home), which do not depend on
// the depth, so a slot's home stays put when the directory doubles. A
// segment's size need not be a power of two: it grows by 1.25x up to
// MaxSeg slots (64 KiB) and is sized exactly for a known count; a full
// segment splits in two by the next hash bit, and the directory doubles
// when a segment that splits is as deep as it. The directory also holds
// each segment's slice header (Tabs), so a lookup loads the header, usually
// cached, then the slot.
//
// What a slot word holds, and its hash, are the caller's: the methods that
// move words take the hash function. Lookups are the caller's too (they
// compare words their own way); they probe Tabs[h>>(64-Depth)] from Home.
// A Dir is not safe for concurrent use.
package exthash

import "fmt"

const (
	// MaxSeg is the slots of a segment before it splits.
	MaxSeg = 8192
	// MaxLoad is the load, in 1/16, above which a segment grows (81%).
	MaxLoad = 13
)

// Segment is one open-addressing table.
type Segment struct {
	Slots []uint64
	Depth uint8 // local depth, <= the directory's
	N     int   // occupied slots
}

// Dir is the directory: 1<<Depth entries, a segment of local depth d
// filling the 1<<(Depth-d) entries that start at its prefix.
type Dir struct {
	Segs  []*Segment
	Tabs  [][]uint64 // Segs[i].Slots
	Depth uint8
}

// Home returns the first slot to probe for hash h in a segment of size
// slots.
func Home(h uint64, size int) int {
	return int(uint64(uint32(h)) * uint64(size) >> 32)
}

// SegSize returns a segment size for n words at 75% load (so growing by
// 1.25x at 81% leaves it 60% full).
func SegSize(n int) int {
	size := n*16/(MaxLoad-1) + 16
	// Above 32 KiB Go allocates whole 8 KiB pages: take the page
	// boundary below if it still holds n under MaxLoad.
	if r := size &^ 1023; size > 4096 && r >= n*16/MaxLoad+16 {
		size = r
	}
	return min(MaxSeg, size)
}

// NewSlots returns a zeroed segment of at least n slots, as many as the
// allocation holds (Go rounds a request up to its size class or to whole
// pages; those slots would be paid for and left unused).
func NewSlots(n int) []uint64 {
	s := append([]uint64(nil), make([]uint64, n)...)
	return s[:cap(s)]
}

// Full reports whether s must grow before it takes one more word.
func (s *Segment) Full() bool { return (s.N+1)*16 > len(s.Slots)*MaxLoad }

// Size lays d out empty, with segments that hold n words at 75% load
// without growing.
func (d *Dir) Size(n int) {
	d.Depth = 0
	for uint64(n)*16 > uint64(MaxSeg*(MaxLoad-1))<<d.Depth {
		d.Depth++
	}
	d.Segs, d.Tabs = make([]*Segment, 1<<d.Depth), make([][]uint64, 1<<d.Depth)
	for i := range d.Segs {
		d.Segs[i] = &Segment{Slots: NewSlots(SegSize(n >> d.Depth)), Depth: d.Depth}
		d.Tabs[i] = d.Segs[i].Slots
	}
}

// Seg returns the segment filed for hash h.
func (d *Dir) Seg(h uint64) *Segment { return d.Segs[h>>(64-d.Depth)] }

// Grow makes room in segment s, which holds hash h: it grows by 1.25x up
// to MaxSeg slots (or past it once s is maxDepth deep), and then splits in
// two by the next hash bit. hash gives a word's hash.
func (d *Dir) Grow(s *Segment, h uint64, maxDepth uint8, hash func(uint64) uint64) {
	if len(s.Slots) < MaxSeg || s.Depth >= maxDepth {
		old := s.Slots
		s.Slots = NewSlots(max(SegSize(s.N*5/4), len(old)+1))
		s.N = 0
		for _, x := range old {
			if x != 0 {
				s.Put(x, hash(x))
			}
		}
		d.File(s, int(h>>(64-d.Depth)))
		return
	}
	if s.Depth == d.Depth {
		// Double the directory: each entry becomes two.
		segs := make([]*Segment, 2*len(d.Segs))
		tabs := make([][]uint64, 2*len(d.Segs))
		for i, t := range d.Segs {
			segs[2*i], segs[2*i+1] = t, t
			tabs[2*i], tabs[2*i+1] = t.Slots, t.Slots
		}
		d.Segs, d.Tabs, d.Depth = segs, tabs, d.Depth+1
	}
	// s fills the 1<<(Depth-s.Depth) entries starting at its prefix; the
	// first half goes to a (next bit 0), the second to b.
	bit := uint64(1) << (63 - s.Depth)
	n1 := 0
	for _, x := range s.Slots {
		if x != 0 && hash(x)&bit != 0 {
			n1++
		}
	}
	a := &Segment{Slots: NewSlots(SegSize(s.N - n1)), Depth: s.Depth + 1}
	b := &Segment{Slots: NewSlots(SegSize(n1)), Depth: s.Depth + 1}
	for _, x := range s.Slots {
		if x == 0 {
			continue
		}
		xh := hash(x)
		t := a
		if xh&bit != 0 {
			t = b
		}
		t.Put(x, xh)
	}
	span := 1 << (d.Depth - s.Depth)
	first := int(h>>(64-d.Depth)) &^ (span - 1)
	d.File(a, first)
	d.File(b, first+span/2)
}

// File points the directory entries of segment s, which include entry at,
// to it and its slots.
func (d *Dir) File(s *Segment, at int) {
	span := 1 << (d.Depth - s.Depth)
	first := at &^ (span - 1)
	for i := first; i < first+span; i++ {
		d.Segs[i], d.Tabs[i] = s, s.Slots
	}
}

// Put adds word x, with hash h, which s does not hold, to s.
func (s *Segment) Put(x, h uint64) {
	for i := Home(h, len(s.Slots)); ; {
		if s.Slots[i] == 0 {
			s.Slots[i] = x
			s.N++
			return
		}
		if i++; i == len(s.Slots) {
			i = 0
		}
	}
}

// Each calls fn once for every segment.
func (d *Dir) Each(fn func(s *Segment)) {
	for i := 0; i < len(d.Segs); {
		s := d.Segs[i]
		fn(s)
		i += 1 << (d.Depth - s.Depth)
	}
}

// Bytes returns the memory d holds: the directory and the segments.
func (d *Dir) Bytes() int {
	b := cap(d.Segs)*8 + cap(d.Tabs)*24
	d.Each(func(s *Segment) { b += cap(s.Slots)*8 + 40 })
	return b
}

// Check verifies the directory's shape (each segment fills the aligned run
// of entries its prefix names, and Tabs holds its slots), every segment's
// count and load, and that every word is filed under its hash's prefix and
// reachable from its home. It returns the words held. For tests.
func (d *Dir) Check(hash func(uint64) uint64) (int, error) {
	if len(d.Segs) != 1<<d.Depth || len(d.Tabs) != len(d.Segs) {
		return 0, fmt.Errorf("directory of %d entries at depth %d", len(d.Segs), d.Depth)
	}
	total := 0
	for i := 0; i < len(d.Segs); {
		s := d.Segs[i]
		if s.Depth > d.Depth {
			return 0, fmt.Errorf("segment at %d deeper (%d) than the directory (%d)", i, s.Depth, d.Depth)
		}
		span := 1 << (d.Depth - s.Depth)
		if i%span != 0 {
			return 0, fmt.Errorf("segment at %d not aligned to its span %d", i, span)
		}
		for j := i; j < i+span; j++ {
			if d.Segs[j] != s || len(d.Tabs[j]) != len(s.Slots) || &d.Tabs[j][0] != &s.Slots[0] {
				return 0, fmt.Errorf("directory entry %d does not point to the segment at %d", j, i)
			}
		}
		if s.N*16 > len(s.Slots)*MaxLoad {
			return 0, fmt.Errorf("segment at %d: %d words in %d slots", i, s.N, len(s.Slots))
		}
		n := 0
		for k, x := range s.Slots {
			if x == 0 {
				continue
			}
			n++
			h := hash(x)
			if int(h>>(64-d.Depth))&^(span-1) != i {
				return 0, fmt.Errorf("word %x filed in the segment at %d, its hash says %d", x, i, h>>(64-d.Depth))
			}
			for j := Home(h, len(s.Slots)); j != k; j = (j + 1) % len(s.Slots) {
				if s.Slots[j] == 0 {
					return 0, fmt.Errorf("word %x at slot %d of segment %d unreachable from its home %d", x, k, i, Home(h, len(s.Slots)))
				}
			}
		}
		if n != s.N {
			return 0, fmt.Errorf("segment at %d holds %d words, counted %d", i, n, s.N)
		}
		total += n
		i += span
	}
	return total, nil
}
