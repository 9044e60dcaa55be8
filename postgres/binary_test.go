package postgres

import (
	"math"
	"slices"
	"testing"
)

// The hand-written binary arrays read back on the server as what was
// written: values, NULLs, empty arrays, every element type the write path
// sends.
func TestBinaryArrays(t *testing.T) {
	s, _ := openTest(t, Options{})
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, c := range []struct {
		name  string
		typ   string
		oid   uint32
		write func(p *params)
		want  string // the array as PostgreSQL prints it
	}{
		{"int8", "bigint[]", oidInt8, func(p *params) {
			p.elemInt8(math.MinInt64)
			p.elemNull()
			p.elemInt8(math.MaxInt64)
			p.elemInt8(-1)
		}, "{-9223372036854775808,NULL,9223372036854775807,-1}"},
		{"int4", "integer[]", oidInt4, func(p *params) { p.elemInt4(math.MinInt32); p.elemInt4(201) }, "{-2147483648,201}"},
		{"int2", "smallint[]", oidInt2, func(p *params) { p.elemInt2(1); p.elemInt2(-2) }, "{1,-2}"},
		{"text", "text[]", oidText, func(p *params) {
			elemText(p, "bøb 🎮")
			elemText(p, "")
			p.elemMeta(nil)
			p.elemMeta([]byte(`{"a":1}`))
		}, `{"bøb 🎮","",NULL,"{\"a\":1}"}`},
		{"bytea", "bytea[]", oidBytea, func(p *params) { elemText(p, []byte{0, 1, 0xff}); elemText(p, []byte{}) }, `{"\\x0001ff","\\x"}`},
		{"keys", "bigint[]", oidInt8, func(p *params) {
			for i := range 3 {
				p.elemKey([]int64{7, 8}, i)
			}
		}, "{7,8,NULL}"},
		{"empty", "bigint[]", oidInt8, func(*params) {}, "{}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var probe params
			c.write(&probe) // count the elements
			var p params
			p.beginArray(c.oid, probe.elems)
			c.write(&p)
			p.endArray()
			p.int8(42) // a scalar after the array
			rr := conn.Conn().PgConn().ExecParams(ctx, "SELECT $1::"+c.typ+"::text, $2::bigint", p.values(), []uint32{0, oidInt8}, binaryFormat, nil)
			res := rr.Read()
			if res.Err != nil {
				t.Fatalf("the server refused the array: %v", res.Err)
			}
			if got := string(res.Rows[0][0]); got != c.want {
				t.Errorf("array read back as %s, want %s", got, c.want)
			}
			if got := string(res.Rows[0][1]); got != "42" {
				t.Errorf("the scalar after the array read back as %s, want 42", got)
			}
		})
	}
}

func TestEndArrayChecksCount(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("endArray accepted fewer elements than announced")
		}
	}()
	var p params
	p.beginArray(oidInt8, 2)
	p.elemInt8(1)
	p.endArray()
}

func TestAppendKeys(t *testing.T) {
	k := func(v int64) []byte { return appendInt8Bytes(v) }
	for _, c := range []struct {
		cols [][]byte
		want []int64
		ok   bool
	}{
		{[][]byte{k(1), nil, nil, nil}, []int64{1}, true},
		{[][]byte{k(math.MinInt64), k(2), k(3), k(math.MaxInt64)}, []int64{math.MinInt64, 2, 3, math.MaxInt64}, true},
		{[][]byte{nil, nil, nil, nil}, nil, true},
		{[][]byte{k(1), nil, k(3), nil}, nil, false}, // a gap: not a prefix
		{[][]byte{{1, 2, 3}, nil, nil, nil}, nil, false},
	} {
		got, err := appendKeys(nil, c.cols)
		if (err == nil) != c.ok || (c.ok && !slices.Equal(got, c.want)) {
			t.Errorf("appendKeys(%v) = %v, %v; want %v (ok %v)", c.cols, got, err, c.want, c.ok)
		}
	}
}

func appendInt8Bytes(v int64) []byte {
	var p params
	p.int8(v)
	return p.values()[0]
}
