package http

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/podiumhq/podium"
)

// This file and jsontext.go are podium's one JSON decoder for request
// bodies and WebSocket messages. It reads the bytes once and, in the same
// pass, checks the I-JSON rules (RFC 7493: valid UTF-8, no lone surrogate escapes, each name
// once per object) and fills the target struct, matching field names
// exactly as written in the json tags (encoding/json folds case and lets
// the last duplicate win, so {"player":"a","pLaYeR":"b"} meant "b").
//
// It supports what podium's bodies use: strings, bools, integers, pointers,
// slices, structs and json.RawMessage (any JSON value, itself checked).
// Targets are described by plans built once per type.

// maxDepth bounds the nesting of arrays and objects, so that a body of a
// million '[' cannot grow the stack without bound.
const maxDepth = 1000

// jsonErrKind sorts decoding errors by what they mean for the request.
type jsonErrKind uint8

const (
	errSyntax    jsonErrKind = iota // not JSON: malformed, truncated, trailing data, too deep
	errText                         // JSON, but not I-JSON text: invalid UTF-8, a lone surrogate escape
	errDuplicate                    // a name given twice in one object (not I-JSON either)
	errShape                        // I-JSON that does not fit: unknown field, wrong type, out of range
)

// jsonError is a decoding error. Shape and duplicate errors name the field:
// path holds its parts innermost first (".name" or "[i]"), added while
// the decoder unwinds.
type jsonError struct {
	kind    jsonErrKind
	msg     string // complete for syntax and text errors, else a format with %s for the field
	rootMsg string // for an error about the decoded value itself: follows "the body"
	path    []string
	hint    string // appended after the message
}

func (e *jsonError) Error() string { return e.message("the body") }

// field renders the path: keys[1].order.
func (e *jsonError) field() string {
	var b strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		b.WriteString(e.path[i])
	}
	return strings.TrimPrefix(b.String(), ".")
}

// message renders the error; root names the value decoded ("the body",
// "the submission") for an error about the value itself.
func (e *jsonError) message(root string) string {
	switch {
	case e.kind == errSyntax || e.kind == errText:
		return e.msg
	case len(e.path) == 0 && e.rootMsg != "":
		return root + e.rootMsg
	}
	return fmt.Sprintf(e.msg, e.field()) + e.hint
}

// toPodium turns the error into the API's: invalid_json for a body that is
// not I-JSON, invalid_argument for one that does not fit.
func (e *jsonError) toPodium(root string) error {
	code := podium.ECodeInvalidJSON
	if e.kind == errShape {
		code = podium.ECodeInvalid
	}
	return podium.Errorf(code, "%s", e.message(root))
}

func (e *jsonError) in(part string) *jsonError {
	if e.kind == errShape || e.kind == errDuplicate {
		e.path = append(e.path, part)
	}
	return e
}

// decoder reads one JSON text.
type decoder struct {
	data    []byte
	i       int
	depth   int
	scratch []byte  // unescaped strings
	itemErr []error // kBatch: the error of each failed submission, nil if none
	extra   int     // kBatch: submissions past podium.MaxBatchItems
}

func shape(format string, args ...any) *jsonError {
	return &jsonError{kind: errShape, msg: fmt.Sprintf(format, args...)}
}

// value decodes the value at d.i into v, following p.
func (d *decoder) value(v reflect.Value, p *plan) *jsonError {
	d.skipSpace()
	if d.i >= len(d.data) {
		return d.eof()
	}
	got := d.kindAt()
	if got == "" {
		return d.badValue()
	}
	if got == "null" {
		// As encoding/json: null leaves a value as it is and clears a
		// pointer or slice; a RawMessage keeps the literal.
		if err := d.literal("null"); err != nil {
			return err
		}
		switch p.kind {
		case kPtr, kSlice, kInt64s, kStrings, kBatch:
			v.SetZero()
		case kRaw:
			v.SetBytes([]byte("null"))
		}
		return nil
	}
	switch p.kind {
	case kString:
		if got != "string" {
			return wrongType(got, "string")
		}
		s, err := d.str()
		if err != nil {
			return err
		}
		v.SetString(s)
	case kBool:
		if got != "boolean" {
			return wrongType(got, "boolean")
		}
		if d.data[d.i] == 't' {
			v.SetBool(true)
			return d.literal("true")
		}
		v.SetBool(false)
		return d.literal("false")
	case kInt:
		n, err := d.integer(got)
		if err != nil {
			return err
		}
		if v.OverflowInt(n) {
			return shape("field %%s must be an integer from %d to %d (got %d)", minInt(v.Type().Bits()), maxInt(v.Type().Bits()), n)
		}
		v.SetInt(n)
	case kInt64s:
		if got != "array" {
			return wrongType(got, "array")
		}
		return d.int64s(v.Addr().Interface().(*[]int64))
	case kStrings:
		if got != "array" {
			return wrongType(got, "array")
		}
		return d.stringList(v.Addr().Interface().(*[]string))
	case kPtr:
		if v.IsNil() {
			v.Set(reflect.New(p.elem.typ))
		}
		return d.value(v.Elem(), p.elem)
	case kSlice:
		if got != "array" {
			return wrongType(got, "array")
		}
		return d.slice(v, p)
	case kStruct:
		if got != "object" {
			return wrongType(got, "object")
		}
		return d.object(v, p)
	case kRaw:
		start := d.i
		if err := d.skip(true); err != nil {
			return err
		}
		v.SetBytes(append([]byte(nil), d.data[start:d.i]...))
	case kBatch:
		if got != "array" {
			return wrongType(got, "array")
		}
		return d.batch(v.Addr().Interface().(*batchItems), p.elem)
	}
	return nil
}

func wrongType(got, want string) *jsonError {
	e := shape("field %%s has the wrong type (got %s, want %s)", got, want)
	e.rootMsg = " must be a JSON " + want
	return e
}

func minInt(bits int) int64 { return -1 << (bits - 1) }
func maxInt(bits int) int64 { return 1<<(bits-1) - 1 }

// integer reads a number that must be an integer in the int64 range.
func (d *decoder) integer(got string) (int64, *jsonError) {
	if got != "number" {
		return 0, shape("field %%s must be an integer in the int64 range (got %s)", got)
	}
	start := d.i
	isInt, err := d.number()
	if err != nil {
		return 0, err
	}
	text := d.data[start:d.i]
	if isInt {
		if n, err := strconv.ParseInt(string(text), 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, shape("field %%s must be an integer in the int64 range (got number %s)", text)
}

// str reads a string value.
func (d *decoder) str() (string, *jsonError) {
	start, end, esc, err := d.scanString()
	if err != nil {
		return "", err
	}
	if esc {
		return string(d.unescape(start, end)), nil
	}
	return string(d.data[start:end]), nil
}

func (d *decoder) int64s(dst *[]int64) *jsonError {
	if err := d.open(); err != nil {
		return err
	}
	var buf [8]int64
	out := buf[:0]
	if !d.empty(']') {
		for {
			d.skipSpace()
			if d.i >= len(d.data) {
				return d.eof()
			}
			got := d.kindAt()
			if got == "" {
				return d.badValue()
			}
			n, err := d.integer(got)
			if err != nil {
				return err.in("[" + strconv.Itoa(len(out)) + "]")
			}
			out = append(out, n)
			more, err := d.next(']')
			if err != nil {
				return err
			}
			if !more {
				break
			}
		}
	}
	*dst = append(make([]int64, 0, len(out)), out...)
	return nil
}

func (d *decoder) stringList(dst *[]string) *jsonError {
	if err := d.open(); err != nil {
		return err
	}
	out := []string{}
	if !d.empty(']') {
		for {
			d.skipSpace()
			if d.i >= len(d.data) {
				return d.eof()
			}
			got := d.kindAt()
			if got == "" {
				return d.badValue()
			}
			if got != "string" {
				return wrongType(got, "string").in("[" + strconv.Itoa(len(out)) + "]")
			}
			s, err := d.str()
			if err != nil {
				return err
			}
			out = append(out, s)
			more, err := d.next(']')
			if err != nil {
				return err
			}
			if !more {
				break
			}
		}
	}
	*dst = out
	return nil
}

func (d *decoder) slice(v reflect.Value, p *plan) *jsonError {
	if err := d.open(); err != nil {
		return err
	}
	v.Set(reflect.MakeSlice(p.typ, 0, 4))
	if d.empty(']') {
		return nil
	}
	for n := 0; ; n++ {
		v.Grow(1)
		v.SetLen(n + 1)
		if err := d.value(v.Index(n), p.elem); err != nil {
			return err.in("[" + strconv.Itoa(n) + "]")
		}
		more, err := d.next(']')
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
	}
}

// object fills the struct v from the object at d.i: every name must be one
// of the struct's, exactly, and appear once.
func (d *decoder) object(v reflect.Value, p *plan) *jsonError {
	if err := d.open(); err != nil {
		return err
	}
	if d.empty('}') {
		return nil
	}
	var seen uint64
	for {
		name, _, err := d.name()
		if err != nil {
			return err
		}
		fi := -1
		for j := range p.fields {
			if string(name) == p.fields[j].name {
				fi = j
				break
			}
		}
		if fi < 0 {
			return unknownField(string(name), p)
		}
		f := &p.fields[fi]
		if seen&(1<<fi) != 0 {
			return &jsonError{kind: errDuplicate, msg: `duplicate field "%s": a name may appear once per object`, path: []string{"." + f.name}}
		}
		seen |= 1 << fi
		if err := d.value(v.Field(f.index), f.plan); err != nil {
			return err.in("." + f.name)
		}
		more, err := d.next('}')
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
	}
}

func unknownField(name string, p *plan) *jsonError {
	e := &jsonError{kind: errShape, msg: `unknown field "%s"`, path: []string{"." + name}}
	for _, f := range p.fields {
		if strings.EqualFold(name, f.name) {
			e.hint = fmt.Sprintf(" (field names are case-sensitive; did you mean %q?)", f.name)
		}
	}
	return e
}

// decode decodes the one JSON value of data into v (a pointer), checking
// that nothing follows it.
func (d *decoder) decode(v reflect.Value, p *plan) *jsonError {
	d.skipSpace()
	if d.i >= len(d.data) {
		return &jsonError{kind: errSyntax, msg: "the body is empty; send a JSON object"}
	}
	if err := d.value(v, p); err != nil {
		return err
	}
	d.skipSpace()
	if d.i < len(d.data) {
		return &jsonError{kind: errSyntax, msg: fmt.Sprintf("the body has data after the JSON value (at byte %d)", d.i)}
	}
	return nil
}
