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

	"github.com/podiumhq/podium/internal/exthash"
)

const chunkSize = 64 << 10

const (
	refBits = 13
	refSize = 1 << refBits // refs per chunk, 96 KiB
	refMask = refSize - 1

	// maxDepth bounds the directory (16M entries); a segment that deep
	// grows past exthash.MaxSeg instead of splitting.
	maxDepth = 24
)

// Table interns strings. The zero value is not usable; call New.
type Table struct {
	seed   maphash.Seed
	chunks [][]byte // append-only; a chunk is never reallocated once strings point into it
	refs   [][]ref  // id -> location of its bytes, in chunks of refSize, never reallocated
	n      int      // strings interned
	// d holds one slot word per string: fingerprint<<32 | id+1, where
	// the fingerprint is the top 32 bits of the string's hash (0: empty).
	d exthash.Dir
}

type ref struct {
	chunk uint32
	off   uint32
	n     uint32
}

// New returns an empty table sized for about n strings.
func New(n int) *Table {
	t := &Table{seed: maphash.MakeSeed()}
	t.d.Size(n)
	return t
}

// slotHash is the hash the directory files a slot word by: its
// fingerprint on top (the directory uses the top bits), remixed below (an
// odd multiplier, so that the fingerprint's low bits reach the top ones of
// the home slot's multiply-shift). It depends on the fingerprint alone, so
// no string is rehashed when a segment grows or splits.
func slotHash(v uint64) uint64 { return fpHash(uint32(v >> 32)) }

func fpHash(fp uint32) uint64 { return uint64(fp)<<32 | uint64(fp*0x9E3779B9) }

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
func (t *Table) find(s string) (id uint32, ok bool, seg *exthash.Segment, slot int, fp uint32) {
	fp = uint32(maphash.String(t.seed, s) >> 32)
	h := fpHash(fp)
	slots := t.d.Tabs[h>>(64-t.d.Depth)]
	for i := exthash.Home(h, len(slots)); ; {
		v := slots[i]
		if v == 0 {
			return 0, false, t.d.Seg(h), i, fp
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
	if seg.Full() {
		t.d.Grow(seg, fpHash(fp), maxDepth, slotHash)
		_, _, seg, i, _ = t.find(s)
	}
	id = uint32(t.n)
	if id&refMask == 0 {
		t.refs = append(t.refs, make([]ref, 0, refSize))
	}
	last := len(t.refs) - 1
	t.refs[last] = append(t.refs[last], t.store(s))
	t.n++
	seg.Slots[i] = uint64(fp)<<32 | uint64(id+1)
	seg.N++
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

// Reserve makes room for n more strings without growing the lookup table
// on the way (the startup load knows how many players it will read). It
// lays the table out again, copying what it holds: meant for startup,
// before the table fills.
func (t *Table) Reserve(n int) {
	old := t.d
	t.d.Size(t.n + n)
	old.Each(func(s *exthash.Segment) {
		for _, v := range s.Slots {
			if v != 0 {
				h := slotHash(v)
				t.d.Seg(h).Put(v, h)
			}
		}
	})
}

// Bytes estimates the heap bytes the table holds.
func (t *Table) Bytes() int {
	n := t.d.Bytes() + cap(t.refs)*24
	for _, r := range t.refs {
		n += cap(r) * int(unsafe.Sizeof(ref{}))
	}
	for _, c := range t.chunks {
		n += cap(c)
	}
	return n
}
