// Package evidence is the evidence (replay) feature: it checks uploads as
// they stream in and bounds what they may cost (a validator for one gzip
// member of JSON Lines, and byte and concurrency budgets, budget.go), and
// its Module, registered with the engine, stores them with their
// submission and sweeps them when they expire (module.go). It knows
// nothing of HTTP; the http package maps its errors to statuses.
//
// The limits follow the design in ../shared/seeds/002 §7.1: the compressed
// body is counted as it arrives and cut past its limit whatever length was
// declared; it is inflated while it streams, never into memory first, and
// stopped past the inflated limit (an absolute output bound, not a
// compression ratio, is what stops a gzip bomb); the events are counted
// and each line bounded; exactly one gzip member is accepted, so neither
// concatenated members nor trailing bytes can smuggle data past the hashes.
package evidence

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"unicode/utf8"
)

// Default limits (seed 002 §7.1).
const (
	DefaultMaxBytes         = 1 << 20 // compressed, as sent
	DefaultMaxInflatedBytes = 8 << 20
	DefaultMaxEvents        = 20_000
	DefaultMaxLineBytes     = 64 << 10
)

// Limits bound one upload. Zero fields mean the defaults.
type Limits struct {
	MaxBytes         int64 // compressed bytes
	MaxInflatedBytes int64
	MaxEvents        int
	MaxLineBytes     int // one event line, without its newline
}

func (l Limits) filled() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxInflatedBytes <= 0 {
		l.MaxInflatedBytes = DefaultMaxInflatedBytes
	}
	if l.MaxEvents <= 0 {
		l.MaxEvents = DefaultMaxEvents
	}
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = DefaultMaxLineBytes
	}
	return l
}

// Reasons an upload is refused; they label the metrics and tell the
// http package which status to answer.
const (
	ReasonTooLarge         = "too_large"          // compressed bytes over the limit (413)
	ReasonInflatedTooLarge = "inflated_too_large" // inflated bytes over the limit (422)
	ReasonTooManyEvents    = "too_many_events"    // (422)
	ReasonLineTooLong      = "line_too_long"      // (422)
	ReasonBadEvent         = "bad_event"          // a line that is not a JSON object (422)
	ReasonEmpty            = "empty"              // no events (422)
	ReasonBadGzip          = "bad_gzip"           // not gzip, corrupt or truncated (422)
	ReasonConcatenated     = "concatenated"       // a second gzip member (422)
	ReasonTrailing         = "trailing_data"      // bytes after the member (422)
)

// Error is a refusal of the upload's content or size.
type Error struct {
	Reason string
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// ReadError is a failure to read the body itself (the client went away, a
// timeout, a budget that refused more bytes): not the content's fault.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return "read the body: " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// Result is an accepted upload.
type Result struct {
	// Compressed holds the bytes as sent (at most MaxBytes).
	Compressed []byte
	// CompressedSHA256 is the SHA-256 of Compressed, ContentSHA256 that
	// of the inflated JSON Lines.
	CompressedSHA256, ContentSHA256 [32]byte
	Inflated                        int64
	Events                          int
}

// counter reads the body, counts and hashes what it passes and keeps a
// copy; past max it fails with an *Error instead of reading more.
type counter struct {
	r    io.Reader
	max  int64
	n    int64
	buf  bytes.Buffer
	h    hash.Hash
	err  error // the first error of r other than io.EOF
	over bool
}

func (c *counter) Read(p []byte) (int, error) {
	if c.over {
		return 0, c.err
	}
	// One byte past the limit is enough to know it was passed.
	if room := c.max + 1 - c.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		c.over = true
		c.err = &Error{ReasonTooLarge, fmt.Sprintf("the evidence is larger than %d bytes (compressed)", c.max)}
		return 0, c.err
	}
	c.buf.Write(p[:n])
	c.h.Write(p[:n])
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// Validate reads one gzip member of JSON Lines from r and checks it
// against lim. It returns an *Error when the content breaks a rule, a
// *ReadError when r fails (its error is kept: the caller can tell a timeout
// or a refused budget), and reads nothing past the first broken limit.
// received is how many bytes it read from r, whatever the outcome.
func Validate(r io.Reader, lim Limits) (res *Result, received int64, err error) {
	res, c, err := validateAll(r, lim)
	return res, c.n, err
}

func validateAll(r io.Reader, lim Limits) (*Result, *counter, error) {
	lim = lim.filled()
	c := &counter{r: r, max: lim.MaxBytes, h: sha256.New()}
	if lim.MaxBytes < 64<<10 {
		c.buf.Grow(int(lim.MaxBytes))
	} else {
		c.buf.Grow(64 << 10)
	}
	// gzip reads through a bufio.Reader of ours, so that after the member
	// ends we can see exactly which bytes are left.
	br := bufio.NewReaderSize(c, 32<<10)
	res, err := validate(br, lim)
	if err == nil {
		err = checkEnd(br)
	}
	if c.err != nil {
		var e *Error
		if errors.As(c.err, &e) {
			return nil, c, e
		}
		return nil, c, &ReadError{c.err}
	}
	if err != nil {
		return nil, c, err
	}
	res.Compressed = c.buf.Bytes()
	copy(res.CompressedSHA256[:], c.h.Sum(nil))
	return res, c, nil
}

// checkEnd refuses whatever follows the gzip member.
func checkEnd(br *bufio.Reader) error {
	b, err := br.Peek(2)
	switch {
	case len(b) == 0 && err == io.EOF:
		return nil
	case len(b) == 2 && b[0] == 0x1f && b[1] == 0x8b:
		return &Error{ReasonConcatenated, "the evidence holds more than one gzip member; send exactly one"}
	case len(b) > 0:
		return &Error{ReasonTrailing, "the evidence has bytes after its gzip member"}
	}
	return &Error{ReasonBadGzip, fmt.Sprintf("could not read the evidence: %v", err)}
}

func badGzip(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{ReasonBadGzip, "the gzip stream is truncated"}
	}
	return &Error{ReasonBadGzip, fmt.Sprintf("the evidence is not valid gzip: %v", err)}
}

func validate(br *bufio.Reader, lim Limits) (*Result, error) {
	zr, err := gzip.NewReader(br)
	if err != nil {
		if err == io.EOF {
			return nil, &Error{ReasonEmpty, "the evidence is empty"}
		}
		return nil, badGzip(err)
	}
	zr.Multistream(false)
	res := &Result{}
	ch := sha256.New()
	line := make([]byte, 0, 4<<10)
	chunk := make([]byte, 32<<10)
	for {
		n, rerr := zr.Read(chunk)
		if n > 0 {
			res.Inflated += int64(n)
			if res.Inflated > lim.MaxInflatedBytes {
				return nil, &Error{ReasonInflatedTooLarge, fmt.Sprintf("the evidence inflates to more than %d bytes", lim.MaxInflatedBytes)}
			}
			ch.Write(chunk[:n])
			data := chunk[:n]
			for len(data) > 0 {
				i := bytes.IndexByte(data, '\n')
				part := data
				if i >= 0 {
					part = data[:i]
				}
				if len(line)+len(part) > lim.MaxLineBytes {
					return nil, &Error{ReasonLineTooLong, fmt.Sprintf("line %d is longer than %d bytes", res.Events+1, lim.MaxLineBytes)}
				}
				line = append(line, part...)
				if i < 0 {
					break
				}
				if err := event(res, line, lim); err != nil {
					return nil, err
				}
				line, data = line[:0], data[i+1:]
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, badGzip(rerr)
		}
	}
	if len(line) > 0 { // the last line need not end with a newline
		if err := event(res, line, lim); err != nil {
			return nil, err
		}
	}
	if res.Events == 0 {
		return nil, &Error{ReasonEmpty, "the evidence holds no events"}
	}
	copy(res.ContentSHA256[:], ch.Sum(nil))
	return res, nil
}

// event checks one line: a JSON object in valid UTF-8.
func event(res *Result, line []byte, lim Limits) error {
	res.Events++
	if res.Events > lim.MaxEvents {
		return &Error{ReasonTooManyEvents, fmt.Sprintf("the evidence holds more than %d events", lim.MaxEvents)}
	}
	trimmed := bytes.TrimLeft(line, " \t\r")
	if len(trimmed) == 0 || trimmed[0] != '{' || !utf8.Valid(line) || !json.Valid(line) {
		return &Error{ReasonBadEvent, fmt.Sprintf("line %d is not a JSON object (JSON Lines: one object per line)", res.Events)}
	}
	return nil
}
