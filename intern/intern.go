// Package intern maps strings (player ids) to dense uint32 ids and back,
// compactly: the bytes live in append-only chunks and the lookup is an
// open-addressing table of 8-byte slots (id and a hash fingerprint, so a
// probe compares bytes only on a likely match), so a player costs about its
// length plus 20-28 bytes instead of the ~80 bytes of a map[string]uint32
// plus a []string.
//
// A Table is not safe for concurrent use; callers hold a lock.
package intern

import (
	"hash/maphash"
	"unsafe"
)

const chunkSize = 64 << 10

// Table interns strings. The zero value is not usable; call New.
type Table struct {
	seed   maphash.Seed
	chunks [][]byte // append-only; a chunk is never reallocated once strings point into it
	refs   []ref    // id -> location of its bytes
	slots  []uint64 // open addressing; 0 = empty, else fingerprint<<32 | id+1
	mask   uint64
}

type ref struct {
	chunk uint32
	off   uint32
	n     uint32
}

// New returns an empty table sized for about n strings.
func New(n int) *Table {
	t := &Table{seed: maphash.MakeSeed()}
	size := 16
	for size*3 < n*4 { // keep load <= 3/4
		size *= 2
	}
	t.slots = make([]uint64, size)
	t.mask = uint64(size - 1)
	t.refs = make([]ref, 0, n)
	return t
}

// Len returns the number of interned strings.
func (t *Table) Len() int { return len(t.refs) }

// String returns the string with id. It panics if id was never returned.
func (t *Table) String(id uint32) string {
	r := t.refs[id]
	if r.n == 0 {
		return ""
	}
	b := t.chunks[r.chunk][r.off : r.off+r.n]
	return unsafe.String(&b[0], len(b))
}

// slot packs an id with the top 32 bits of its string's hash.
func slot(h uint64, id uint32) uint64 { return h&^(1<<32-1) | uint64(id+1) }

// Lookup returns the id of s if it is interned.
func (t *Table) Lookup(s string) (uint32, bool) {
	h := maphash.String(t.seed, s)
	fp := h &^ (1<<32 - 1)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		v := t.slots[i]
		if v == 0 {
			return 0, false
		}
		if v&^(1<<32-1) == fp {
			if id := uint32(v) - 1; t.String(id) == s {
				return id, true
			}
		}
	}
}

// Intern returns the id of s, adding it if needed. New ids are dense:
// 0, 1, 2, ...
func (t *Table) Intern(s string) uint32 {
	h := maphash.String(t.seed, s)
	fp := h &^ (1<<32 - 1)
	i := h & t.mask
	for ; ; i = (i + 1) & t.mask {
		v := t.slots[i]
		if v == 0 {
			break
		}
		if v&^(1<<32-1) == fp {
			if id := uint32(v) - 1; t.String(id) == s {
				return id
			}
		}
	}
	id := uint32(len(t.refs))
	t.refs = append(t.refs, t.store(s))
	t.slots[i] = slot(h, id)
	if uint64(len(t.refs))*4 > uint64(len(t.slots))*3 {
		t.grow()
	}
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

func (t *Table) grow() {
	old := t.slots
	t.slots = make([]uint64, len(old)*2)
	t.mask = uint64(len(t.slots) - 1)
	for _, v := range old {
		if v == 0 {
			continue
		}
		h := maphash.String(t.seed, t.String(uint32(v)-1))
		i := h & t.mask
		for t.slots[i] != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = v
	}
}

// Reserve makes room for n more strings without growing the lookup table
// on the way (the startup load knows how many players it will read).
func (t *Table) Reserve(n int) {
	for uint64(len(t.refs)+n)*4 > uint64(len(t.slots))*3 {
		t.grow()
	}
	if cap(t.refs)-len(t.refs) < n {
		refs := make([]ref, len(t.refs), len(t.refs)+n)
		copy(refs, t.refs)
		t.refs = refs
	}
}

// Bytes estimates the heap bytes the table holds.
func (t *Table) Bytes() int {
	n := cap(t.slots)*8 + cap(t.refs)*int(unsafe.Sizeof(ref{}))
	for _, c := range t.chunks {
		n += cap(c)
	}
	return n
}
