package http

import (
	"bytes"
	"strconv"
)

// The framing guard (issue 17 item 20). RFC 9112 §6.1: a request with both
// Content-Length and Transfer-Encoding may be an attempt at request
// smuggling (a proxy in front that frames it by Content-Length sees another
// request boundary than podium, which frames it by Transfer-Encoding), and
// the server MUST close the connection after answering it; an HTTP/1.0
// request with Transfer-Encoding is faulty framing, to be handled the same
// way. net/http reads such a request as chunked, deletes Content-Length
// from its headers, so that a handler cannot tell, and goes on serving the
// connection. So the guard reads the bytes of the connection before
// net/http does and follows HTTP/1.1 framing exactly as net/http does: it
// holds each request head until it is complete, then looks at its framing
// headers, and passes the body through while counting it (Content-Length)
// or following its chunks. A head with both headers is handed on without
// them and with Podium-Framing-Refused added, and nothing after it is read:
// Handler answers it 400 with Connection: close. Everything else passes
// unchanged.
//
// The guard gives up (passes everything from then on) where net/http
// refuses the connection anyway (a malformed head or chunk, an unsupported
// transfer coding, a head past the size limit), where it could only guess
// (trailers it does not follow exactly), and after a WebSocket upgrade.
// Giving up never breaks a request: it only stops looking.

// framingHeader marks a request the guard refused; its value says why. A
// client that sends it itself only gets its own request refused.
const framingHeader = "Podium-Framing-Refused"

// maxHead bounds a held request head: net/http's own limit
// (http.DefaultMaxHeaderBytes plus its 4096 bytes of slack), which refuses
// a longer head with 431 before the guard's limit is reached.
const maxHead = 1<<20 + 4096 + 1024

// maxChunkLine is net/http's bound on a chunk-size line (its bufio buffer).
const maxChunkLine = 4096

// h2Preface is the request line an HTTP/2 connection opens with (RFC 9113
// section 3.4).
const h2Preface = "PRI * HTTP/2.0"

type frameState uint8

const (
	inHead      frameState = iota // a request head
	inBody                        // n bytes of a Content-Length body left
	inChunkLine                   // a chunk-size line
	inChunkData                   // n bytes of a chunk left
	inChunkEnd                    // the CRLF after a chunk's data (n: bytes of it seen)
	inTrailer                     // the trailer section after the last chunk
)

// framer is the guard's state for one connection. Only the connection's
// reader uses it (net/http never reads a connection from two goroutines
// at once).
type framer struct {
	st   frameState
	off  bool   // gave up: everything passes
	done bool   // a refused head was handed on: nothing after it is read
	head []byte // inHead: the head so far
	line []byte // inChunkLine, inTrailer: the line so far
	n    uint64 // inBody, inChunkData: bytes left; inChunkEnd: CRLF bytes seen
	tlen int    // inTrailer: bytes of trailer so far
}

// feed consumes in and appends to out what the reader may see of it.
func (f *framer) feed(out, in []byte) []byte {
	for len(in) > 0 && !f.done {
		if f.off {
			return append(out, in...)
		}
		switch f.st {
		case inHead:
			i := bytes.IndexByte(in, '\n')
			if i < 0 {
				f.head = append(f.head, in...)
				in = nil
			} else {
				f.head = append(f.head, in[:i+1]...)
				in = in[i+1:]
				if f.headEnds() {
					out = f.endHead(out)
					continue
				}
			}
			if len(f.head) > maxHead {
				out = f.giveUp(out)
			}
		case inBody, inChunkData:
			k := min(uint64(len(in)), f.n)
			out = append(out, in[:k]...)
			in = in[k:]
			f.passed(k)
		case inChunkEnd:
			want := byte('\r')
			if f.n == 1 {
				want = '\n'
			}
			if in[0] != want { // net/http: malformed chunked encoding
				out = f.giveUp(out)
				continue
			}
			out = append(out, in[0])
			in = in[1:]
			if f.n++; f.n == 2 {
				f.st = inChunkLine
			}
		case inChunkLine, inTrailer:
			i := bytes.IndexByte(in, '\n')
			k := len(in)
			if i >= 0 {
				k = i + 1
			}
			f.line = append(f.line, in[:k]...)
			out = append(out, in[:k]...)
			in = in[k:]
			if i < 0 {
				if len(f.line) >= maxChunkLine {
					out = f.giveUp(out)
				}
				continue
			}
			if f.st == inChunkLine {
				f.chunkLine()
			} else {
				f.trailerLine()
			}
			f.line = f.line[:0]
		}
	}
	return out
}

// passed counts n body bytes read around feed (they pass as they are).
func (f *framer) passed(n uint64) {
	if f.n -= n; f.n == 0 {
		if f.st == inBody {
			f.st = inHead
		} else {
			f.st = inChunkEnd
		}
	}
}

// giveUp stops guarding: what is held is handed on as it is.
func (f *framer) giveUp(out []byte) []byte {
	f.off = true
	out = append(out, f.head...)
	f.head, f.line = nil, nil
	return out
}

// headEnds reports whether the head's last line (ending in LF) is empty,
// which ends the head. net/http reads lines with bufio.ReadLine: a line
// ends at LF, with one CR before it dropped.
func (f *framer) headEnds() bool {
	h := f.head
	if bytes.HasSuffix(h, []byte("\r\n")) {
		h = h[:len(h)-2]
	} else {
		h = h[:len(h)-1]
	}
	if len(h) == 0 {
		return true // an empty first line: net/http refuses it (see endHead)
	}
	return h[len(h)-1] == '\n'
}

// nextLine cuts the first line off h: its text without the line ending,
// and the rest.
func nextLine(h []byte) (text, rest []byte) {
	i := bytes.IndexByte(h, '\n')
	text, rest = h[:i], h[i+1:]
	if len(text) > 0 && text[len(text)-1] == '\r' {
		text = text[:len(text)-1]
	}
	return text, rest
}

// framingKind says whether a header line is Content-Length ('c'),
// Transfer-Encoding ('t'), a continuation of the line before (' ': obs-fold,
// which net/http joins to it) or another header (0).
func framingKind(text []byte) (kind byte, value []byte, ok bool) {
	if text[0] == ' ' || text[0] == '\t' {
		return ' ', trimOWS(text), true
	}
	name, value, found := bytes.Cut(text, []byte(":"))
	switch {
	case !found:
		return 0, nil, false // net/http: malformed MIME header line
	case len(name) == len("Content-Length") && bytes.EqualFold(name, []byte("Content-Length")):
		return 'c', trimOWS(value), true
	case len(name) == len("Transfer-Encoding") && bytes.EqualFold(name, []byte("Transfer-Encoding")):
		return 't', trimOWS(value), true
	}
	return 0, nil, true
}

// endHead decides about a complete head and hands it on.
func (f *framer) endHead(out []byte) []byte {
	h := f.head
	f.head = f.head[:0] // h is handed on below, before the next feed reuses it
	line, rest := nextLine(h)
	atLeast11, ok := requestVersion(line)
	if !ok || string(line) == h2Preface {
		// net/http: malformed request line or version; or the HTTP/2
		// connection preface (h2c.go), after which come frames.
		f.off = true
		return append(out, h...)
	}
	var (
		cls, tes   int    // Content-Length and Transfer-Encoding lines
		cl, te     []byte // the first value of each
		clDiffers  bool   // another Content-Length value than the first
		folded     bool   // a framing header continued on the next line
		prev, kind byte
		value      []byte
	)
	for n := 0; ; n++ {
		if line, rest = nextLine(rest); len(line) == 0 {
			break
		}
		if kind, value, ok = framingKind(line); !ok || kind == ' ' && n == 0 {
			f.off = true // net/http: malformed header
			return append(out, h...)
		}
		switch kind {
		case 'c':
			if cls++; cls == 1 {
				cl = value
			} else if !bytes.Equal(value, cl) {
				clDiffers = true
			}
		case 't':
			if tes++; tes == 1 {
				te = value
			}
		case ' ':
			if prev == 'c' || prev == 't' {
				folded = true
			}
			kind = prev
		}
		prev = kind
	}
	if tes > 0 && (cls > 0 || !atLeast11) {
		why := "both Content-Length and Transfer-Encoding"
		if cls == 0 {
			why = "Transfer-Encoding in an HTTP/1.0 request"
		}
		// The head without its framing headers (and their continuations).
		prev = 0
		for r := h; ; {
			start := r
			line, r = nextLine(r)
			if len(line) == 0 {
				break
			}
			if kind, _, _ = framingKind(line); kind == ' ' {
				kind = prev
			}
			if prev = kind; kind != 'c' && kind != 't' || len(start) == len(h) {
				out = append(out, start[:len(start)-len(r)]...)
			}
		}
		out = append(out, framingHeader+": "+why+"\r\n\r\n"...)
		f.done = true
		return out
	}
	out = append(out, h...)
	switch {
	case folded:
		f.off = true // a folded framing header: rare enough not to follow
	case tes > 0:
		if tes != 1 || !bytes.EqualFold(te, []byte("chunked")) {
			f.off = true // net/http: 501, and the connection closes
			return out
		}
		f.st = inChunkLine
	case cls > 0:
		n, err := strconv.ParseUint(string(cl), 10, 63)
		if clDiffers || err != nil {
			f.off = true // net/http: 400, conflicting or bad Content-Length
			return out
		}
		if n > 0 {
			f.st, f.n = inBody, n
		}
	}
	return out
}

// requestVersion reads the version of a request line as net/http does:
// the line is method, target and version split at the first two spaces,
// and the version is HTTP/x.y with one digit each.
func requestVersion(line []byte) (atLeast11, ok bool) {
	_, rest, ok1 := bytes.Cut(line, []byte(" "))
	_, v, ok2 := bytes.Cut(rest, []byte(" "))
	if !ok1 || !ok2 || len(v) != len("HTTP/1.1") || !bytes.HasPrefix(v, []byte("HTTP/")) || v[6] != '.' ||
		v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9' {
		return false, false
	}
	major, minor := v[5]-'0', v[7]-'0'
	return major > 1 || major == 1 && minor >= 1, true
}

func trimOWS(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

// chunkLine reads a chunk-size line as net/http's chunked reader does: it
// must end in CRLF with no other CR, extensions after ';' are dropped, and
// the size is at most 16 hex digits.
func (f *framer) chunkLine() {
	l := f.line
	if bytes.IndexByte(l, '\r') != len(l)-2 || len(l)-2 >= maxChunkLine {
		f.off = true
		return
	}
	l = bytes.TrimRight(l[:len(l)-2], " \t")
	l, _, _ = bytes.Cut(l, []byte(";"))
	if len(l) == 0 || len(l) > 16 {
		f.off = true
		return
	}
	n, err := strconv.ParseUint(string(l), 16, 64)
	if err != nil {
		f.off = true
		return
	}
	if n == 0 {
		f.st, f.tlen = inTrailer, 0
	} else {
		f.st, f.n = inChunkData, n
	}
}

// trailerLine follows the trailer section: lines up to an empty CRLF
// line. net/http reads trailers with rules of its own (a peek for CRLF
// CRLF within its 4 KiB buffer); anything but plain CRLF lines within that
// makes the guard give up.
func (f *framer) trailerLine() {
	l := f.line
	f.tlen += len(l)
	if !bytes.HasSuffix(l, []byte("\r\n")) || f.tlen > maxChunkLine {
		f.off = true
		return
	}
	if len(l) == 2 {
		f.st = inHead
	}
}
