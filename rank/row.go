package rank

// row is the in-tree form of an entry's sort position: the n keys, then At,
// then Seq, each as one int64 word, arranged so that plain lexicographic
// int64 comparison gives the index order. Keys of descending direction are
// stored bitwise-NOTed (^v is strictly decreasing in v over the whole int64
// range, unlike -v which overflows at math.MinInt64), and Seq has its sign bit
// flipped so that unsigned order becomes signed order. One array type per key
// count keeps a 1-key row at 24 bytes instead of paying for 4 keys.
type row interface {
	[3]int64 | [4]int64 | [5]int64 | [6]int64
}

// hiddenBit marks a hidden player in the per-slot player word. Player ids are
// below 1<<31, so the top bit is free and hiding costs no extra memory.
const hiddenBit = 1 << 31

// seqFlip maps uint64 order onto int64 order.
const seqFlip = 1 << 63

// cmpRow returns -1, 0 or 1 as a ranks ahead of, equal to, or behind b.
func cmpRow[R row](a, b *R) int {
	for i := 0; i < len(*a); i++ {
		if x, y := (*a)[i], (*b)[i]; x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// encode builds the row of e under the per-key XOR masks (0 for ascending,
// -1, i.e. all bits, for descending).
func encode[R row](mask *[4]int64, e *Entry) R {
	var r R
	n := len(r) - 2
	for i := 0; i < n; i++ {
		r[i] = e.Keys[i] ^ mask[i]
	}
	r[n] = e.At
	r[n+1] = int64(e.Seq ^ seqFlip)
	return r
}

// decode rebuilds the entry held in a row and its player word. Unused keys
// come back as 0.
func decode[R row](mask *[4]int64, r *R, pl uint32) Entry {
	e := Entry{Player: pl &^ hiddenBit, Hidden: pl&hiddenBit != 0}
	n := len(*r) - 2
	for i := 0; i < n; i++ {
		e.Keys[i] = (*r)[i] ^ mask[i]
	}
	e.At = (*r)[n]
	e.Seq = uint64((*r)[n+1]) ^ seqFlip
	return e
}

// visible is 1 for a visible player word and 0 for a hidden one, so counts can
// be adjusted without branches at the call sites.
func visible(pl uint32) int {
	return int(pl>>31) ^ 1
}
