package postgres

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/podiumhq/podium"
)

// PostgreSQL's binary wire format, written and read by hand on the hot
// paths. The commit path binds one array per column (INSERT ... SELECT FROM
// unnest(...)); pgx's generic array encoder boxes every element in an
// interface, these append straight into one reusable buffer. The scans
// decode binary bigints from the rows as they arrive.

// Type OIDs of the array elements this package sends.
const (
	oidBytea = 17
	oidInt8  = 20
	oidInt2  = 21
	oidInt4  = 23
	oidText  = 25
)

// binaryFormat makes every parameter or result column binary.
var binaryFormat = []int16{1}

// params builds the parameters of one statement in one buffer; values
// returns them as slices of it, valid until the next reset. An array
// parameter is written as beginArray, exactly n elements, endArray.
type params struct {
	buf  []byte
	ends []int
	vals [][]byte

	// The array being written.
	hdr   int  // offset of its header in buf
	n     int  // elements announced
	elems int  // elements written
	nulls bool // one of them is NULL
}

func (p *params) reset() {
	p.buf, p.ends, p.vals = p.buf[:0], p.ends[:0], p.vals[:0]
}

// values returns the parameters appended since reset.
func (p *params) values() [][]byte {
	start := 0
	p.vals = p.vals[:0]
	for _, end := range p.ends {
		p.vals = append(p.vals, p.buf[start:end:end])
		start = end
	}
	return p.vals
}

// text appends a scalar text parameter.
func (p *params) text(s string) {
	p.buf = append(p.buf, s...)
	p.ends = append(p.ends, len(p.buf))
}

// int8 appends a scalar bigint parameter.
func (p *params) int8(v int64) {
	p.buf = binary.BigEndian.AppendUint64(p.buf, uint64(v))
	p.ends = append(p.ends, len(p.buf))
}

// beginArray starts a one-dimensional array parameter of n elements of
// type oid.
func (p *params) beginArray(oid uint32, n int) {
	p.hdr, p.n, p.elems, p.nulls = len(p.buf), n, 0, false
	dims := uint32(1)
	if n == 0 {
		dims = 0 // an empty array has no dimensions
	}
	b := binary.BigEndian.AppendUint32(p.buf, dims)
	b = binary.BigEndian.AppendUint32(b, 0) // has NULLs: set by endArray
	b = binary.BigEndian.AppendUint32(b, oid)
	if n > 0 {
		b = binary.BigEndian.AppendUint32(b, uint32(n))
		b = binary.BigEndian.AppendUint32(b, 1) // lower bound
	}
	p.buf = b
}

func (p *params) elemInt8(v int64) {
	p.buf = binary.BigEndian.AppendUint32(p.buf, 8)
	p.buf = binary.BigEndian.AppendUint64(p.buf, uint64(v))
	p.elems++
}

func (p *params) elemInt4(v int32) {
	p.buf = binary.BigEndian.AppendUint32(p.buf, 4)
	p.buf = binary.BigEndian.AppendUint32(p.buf, uint32(v))
	p.elems++
}

func (p *params) elemInt2(v int16) {
	p.buf = binary.BigEndian.AppendUint32(p.buf, 2)
	p.buf = binary.BigEndian.AppendUint16(p.buf, uint16(v))
	p.elems++
}

// elemText appends a text or bytea element (the same bytes in binary).
func elemText[T string | []byte](p *params, s T) {
	p.buf = binary.BigEndian.AppendUint32(p.buf, uint32(len(s)))
	p.buf = append(p.buf, s...)
	p.elems++
}

func (p *params) elemNull() {
	p.buf = binary.BigEndian.AppendUint32(p.buf, 0xFFFFFFFF) // length -1
	p.nulls = true
	p.elems++
}

// elemKey appends key i of keys, NULL past the end.
func (p *params) elemKey(keys []int64, i int) {
	if i < len(keys) {
		p.elemInt8(keys[i])
	} else {
		p.elemNull()
	}
}

// elemMeta appends a meta object, NULL when empty.
func (p *params) elemMeta(meta []byte) {
	if podium.StoredMeta(meta) == nil {
		p.elemNull()
	} else {
		elemText(p, meta)
	}
}

// endArray ends the array begun last.
func (p *params) endArray() {
	if p.elems != p.n {
		panic(fmt.Sprintf("postgres: array of %d elements announced, %d written", p.n, p.elems))
	}
	if p.nulls {
		binary.BigEndian.PutUint32(p.buf[p.hdr+4:], 1)
	}
	p.ends = append(p.ends, len(p.buf))
}

var errBadValue = errors.New("malformed binary value")

// int8Value decodes a binary bigint.
func int8Value(v []byte) (int64, error) {
	if len(v) != 8 {
		return 0, errBadValue
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// int2Value decodes a binary smallint.
func int2Value(v []byte) (int16, error) {
	if len(v) != 2 {
		return 0, errBadValue
	}
	return int16(binary.BigEndian.Uint16(v)), nil
}

// appendKeys appends the non-NULL binary bigints of cols, which must be a
// prefix (k1..k4 are NULL past the board's count), to keys.
func appendKeys(keys []int64, cols [][]byte) ([]int64, error) {
	for i, c := range cols {
		if c == nil {
			for _, rest := range cols[i+1:] {
				if rest != nil {
					return keys, errBadValue
				}
			}
			break
		}
		k, err := int8Value(c)
		if err != nil {
			return keys, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}
