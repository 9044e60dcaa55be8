package http

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// The text level of the strict decoder (strictjson.go): whitespace,
// strings with their escapes and UTF-8, numbers, literals, and skipping a
// whole value while checking it.

func (d *decoder) syntax(format string, args ...any) *jsonError {
	return &jsonError{kind: errSyntax, msg: fmt.Sprintf("malformed JSON at byte %d: ", d.i) + fmt.Sprintf(format, args...)}
}

func (d *decoder) eof() *jsonError {
	return &jsonError{kind: errSyntax, msg: "the JSON body ends too early"}
}

func (d *decoder) skipSpace() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// kindAt names the JSON type of the value starting at d.i, "" if no value
// can start there.
func (d *decoder) kindAt() string {
	switch c := d.data[d.i]; {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "number"
	}
	return ""
}

func (d *decoder) badValue() *jsonError {
	r, n := utf8.DecodeRune(d.data[d.i:])
	if r == utf8.RuneError && n <= 1 {
		return &jsonError{kind: errText, msg: fmt.Sprintf("invalid UTF-8 at byte %d", d.i) + ijson}
	}
	return d.syntax("unexpected %q where a value should start", r)
}

func (d *decoder) literal(word string) *jsonError {
	if len(d.data)-d.i < len(word) {
		if bytes.HasPrefix([]byte(word), d.data[d.i:]) {
			return d.eof()
		}
		return d.syntax("unexpected %q in a literal (true, false or null)", d.data[d.i:])
	}
	if string(d.data[d.i:d.i+len(word)]) != word {
		return d.syntax("unexpected %q in a literal (true, false or null)", d.data[d.i:d.i+len(word)])
	}
	d.i += len(word)
	return nil
}

// number checks a JSON number at d.i and says whether it is written as an
// integer (no fraction, no exponent).
func (d *decoder) number() (isInt bool, err *jsonError) {
	data := d.data
	i := d.i
	if data[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(data) && data[i] == '0' {
		i++
	} else if digits() == 0 {
		d.i = i
		if i == len(data) {
			return false, d.eof()
		}
		return false, d.syntax("a number needs digits")
	}
	isInt = true
	if i < len(data) && data[i] == '.' {
		i++
		isInt = false
		if digits() == 0 {
			d.i = i
			if i == len(data) {
				return false, d.eof()
			}
			return false, d.syntax("a number needs digits after its decimal point")
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		isInt = false
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if digits() == 0 {
			d.i = i
			if i == len(data) {
				return false, d.eof()
			}
			return false, d.syntax("a number needs digits in its exponent")
		}
	}
	d.i = i
	return isInt, nil
}

// strPlain marks the bytes a string may hold as they are: printable ASCII
// other than the quote and the backslash.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString checks the string starting at d.i (a quote) and moves past it.
// It returns the bytes between the quotes and whether they hold escapes.
func (d *decoder) scanString() (start, end int, escaped bool, err *jsonError) {
	data := d.data
	i := d.i + 1
	start = i
	for {
		for i < len(data) && strPlain[data[i]] {
			i++
		}
		if i >= len(data) {
			d.i = i
			return 0, 0, false, d.eof()
		}
		switch c := data[i]; {
		case c == '"':
			d.i = i + 1
			return start, i, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(data) {
				d.i = i + 1
				return 0, 0, false, d.eof()
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				_, n, err := d.escapeU(i)
				if err != nil {
					return 0, 0, false, err
				}
				i += n
			default:
				d.i = i
				return 0, 0, false, d.syntax("invalid escape \\%c in a string", rune(data[i+1]))
			}
		case c < 0x20:
			d.i = i
			return 0, 0, false, d.syntax("control character %#02x in a string (escape it)", c)
		default:
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				return 0, 0, false, &jsonError{kind: errText, msg: fmt.Sprintf("invalid UTF-8 at byte %d", i) + ijson}
			}
			i += n
		}
	}
}

// escapeU reads the \uXXXX escape at i (at its backslash), with the low
// half that must follow a high surrogate, and returns the code point and
// the bytes read.
func (d *decoder) escapeU(i int) (rune, int, *jsonError) {
	r, err := d.hex4(i + 2)
	if err != nil {
		return 0, 0, err
	}
	switch {
	case r >= 0xdc00 && r <= 0xdfff:
		return 0, 0, d.loneSurrogate(i, r)
	case r >= 0xd800 && r <= 0xdbff:
		if i+7 < len(d.data) && d.data[i+6] == '\\' && d.data[i+7] == 'u' {
			lo, err := d.hex4(i + 8)
			if err != nil {
				return 0, 0, err
			}
			if lo >= 0xdc00 && lo <= 0xdfff {
				return 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00), 12, nil
			}
		} else if i+7 >= len(d.data) && bytes.HasPrefix([]byte(`\u`), d.data[i+6:]) {
			d.i = len(d.data)
			return 0, 0, d.eof()
		}
		return 0, 0, d.loneSurrogate(i, r)
	}
	return r, 6, nil
}

// ijson ends the message of a text error.
const ijson = ": JSON text must be UTF-8 without lone surrogate escapes (I-JSON, RFC 7493)"

func (d *decoder) loneSurrogate(i int, r rune) *jsonError {
	return &jsonError{kind: errText, msg: fmt.Sprintf("lone surrogate escape \\u%04x at byte %d", r, i) + ijson}
}

func (d *decoder) hex4(i int) (rune, *jsonError) {
	if i+4 > len(d.data) {
		d.i = len(d.data)
		return 0, d.eof()
	}
	var r rune
	for _, c := range d.data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			d.i = i
			return 0, d.syntax("invalid \\u escape (four hex digits needed)")
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}

// unescape returns the text of a checked string with escapes, in scratch.
func (d *decoder) unescape(start, end int) []byte {
	b := d.scratch[:0]
	data := d.data
	for i := start; i < end; {
		c := data[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		switch data[i+1] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, n, _ := d.escapeU(i)
			b = utf8.AppendRune(b, r)
			i += n
			continue
		default: // " \ /
			b = append(b, data[i+1])
		}
		i += 2
	}
	d.scratch = b
	return b
}

// open enters an array or object at d.i.
func (d *decoder) open() *jsonError {
	d.depth++
	if d.depth > maxDepth {
		return d.syntax("JSON nested deeper than %d levels", maxDepth)
	}
	d.i++
	return nil
}

// next moves past the separator after an element: more reports whether
// another element follows; closer is ']' or '}'.
func (d *decoder) next(closer byte) (more bool, err *jsonError) {
	d.skipSpace()
	if d.i >= len(d.data) {
		return false, d.eof()
	}
	switch d.data[d.i] {
	case ',':
		d.i++
		return true, nil
	case closer:
		d.i++
		d.depth--
		return false, nil
	}
	return false, d.syntax("unexpected %q after an element (want ',' or '%c')", rune(d.data[d.i]), closer)
}

// empty reports whether the array or object just opened closes at once.
func (d *decoder) empty(closer byte) bool {
	d.skipSpace()
	if d.i < len(d.data) && d.data[d.i] == closer {
		d.i++
		d.depth--
		return true
	}
	return false
}

// name reads an object member's name and the colon after it. The bytes
// are only valid until the next string is unescaped.
func (d *decoder) name() (name []byte, escaped bool, err *jsonError) {
	d.skipSpace()
	if d.i >= len(d.data) {
		return nil, false, d.eof()
	}
	if d.data[d.i] != '"' {
		return nil, false, d.syntax("unexpected %q where a quoted field name should be", rune(d.data[d.i]))
	}
	start, end, esc, err := d.scanString()
	if err != nil {
		return nil, false, err
	}
	d.skipSpace()
	if d.i >= len(d.data) {
		return nil, false, d.eof()
	}
	if d.data[d.i] != ':' {
		return nil, false, d.syntax("unexpected %q after a field name (want ':')", rune(d.data[d.i]))
	}
	d.i++
	if esc {
		return d.unescape(start, end), true, nil
	}
	return d.data[start:end], false, nil
}

// skip checks the value at d.i and moves past it. With dups it also
// refuses a name given twice in one object.
func (d *decoder) skip(dups bool) *jsonError {
	d.skipSpace()
	if d.i >= len(d.data) {
		return d.eof()
	}
	switch d.kindAt() {
	case "string":
		_, _, _, err := d.scanString()
		return err
	case "number":
		_, err := d.number()
		return err
	case "boolean":
		if d.data[d.i] == 't' {
			return d.literal("true")
		}
		return d.literal("false")
	case "null":
		return d.literal("null")
	case "array":
		if err := d.open(); err != nil {
			return err
		}
		if d.empty(']') {
			return nil
		}
		for n := 0; ; n++ {
			if err := d.skip(dups); err != nil {
				return err.in("[" + strconv.Itoa(n) + "]")
			}
			more, err := d.next(']')
			if err != nil || !more {
				return err
			}
		}
	case "object":
		return d.skipObject(dups)
	}
	return d.badValue()
}

// skipObject is skip for an object. Names are compared as decoded, so
// "a" and "\u0061" are the same name.
func (d *decoder) skipObject(dups bool) *jsonError {
	if err := d.open(); err != nil {
		return err
	}
	if d.empty('}') {
		return nil
	}
	// Most objects (meta) have a few names: compare them in a small array,
	// and switch to a map past that so that a large object stays linear.
	var small [8][]byte
	names := small[:0]
	var many map[string]struct{}
	for {
		name, esc, err := d.name()
		if err != nil {
			return err
		}
		if dups {
			dup := false
			if many != nil {
				_, dup = many[string(name)]
				if !dup {
					many[string(name)] = struct{}{}
				}
			} else {
				for _, prev := range names {
					if bytes.Equal(prev, name) {
						dup = true
						break
					}
				}
				if !dup {
					if len(names) == len(small) {
						many = make(map[string]struct{}, 2*len(small))
						for _, prev := range names {
							many[string(prev)] = struct{}{}
						}
						many[string(name)] = struct{}{}
					} else {
						if esc { // the name is in scratch: keep a copy
							name = append([]byte(nil), name...)
						}
						names = append(names, name)
					}
				}
			}
			if dup {
				return &jsonError{kind: errDuplicate, msg: `duplicate field "%s": a name may appear once per object`, path: []string{"." + string(name)}}
			}
		}
		if err := d.skip(dups); err != nil {
			return err.in("." + string(name))
		}
		more, err := d.next('}')
		if err != nil || !more {
			return err
		}
	}
}

// firstNonShape checks the whole of data as I-JSON and returns the first
// error that makes it something else than a shape problem, if any. A body
// that is not I-JSON is answered as such whatever else is wrong with it.
func firstNonShape(data []byte) *jsonError {
	d := decoder{data: data}
	d.skipSpace()
	if d.i >= len(data) {
		return nil
	}
	if err := d.skip(true); err != nil {
		return err
	}
	d.skipSpace()
	if d.i < len(data) {
		return &jsonError{kind: errSyntax, msg: fmt.Sprintf("the body has data after the JSON value (at byte %d)", d.i)}
	}
	return nil
}
