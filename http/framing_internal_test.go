package http

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// randomRequests writes n well-framed requests: bodies by Content-Length
// and chunked (with extensions and trailers), holding bytes that look like
// request heads, line endings CRLF or bare LF in heads.
func randomRequests(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	junk := func() []byte {
		parts := []string{"GET / HTTP/1.1\r\n", "Content-Length: 5\r\n", "Transfer-Encoding: chunked\r\n", "\r\n", "0\r\n\r\n", "x", "\n", "\r"}
		var j []byte
		for range rng.IntN(12) {
			j = append(j, parts[rng.IntN(len(parts))]...)
		}
		return j
	}
	for range n {
		eol := "\r\n"
		if rng.IntN(4) == 0 {
			eol = "\n"
		}
		b.WriteString("POST /v1/x?q=" + strconv.Itoa(rng.IntN(1000)) + " HTTP/1.1" + eol + "Host: podium" + eol)
		if rng.IntN(3) == 0 {
			b.WriteString("X-Folded: a" + eol + " b" + eol)
		}
		data := junk()
		switch rng.IntN(3) {
		case 0: // no body
			b.WriteString(eol)
		case 1:
			b.WriteString("content-length:  " + strconv.Itoa(len(data)) + " " + eol + eol)
			b.Write(data)
		case 2:
			b.WriteString("Transfer-Encoding: Chunked" + eol + eol)
			for len(data) > 0 {
				k := 1 + rng.IntN(len(data))
				b.WriteString(strconv.FormatInt(int64(k), 16))
				if rng.IntN(3) == 0 {
					b.WriteString(`;name="v"`)
				}
				b.WriteString("\r\n")
				b.Write(data[:k])
				b.WriteString("\r\n")
				data = data[k:]
			}
			b.WriteString("0\r\n")
			if rng.IntN(3) == 0 {
				b.WriteString("X-Trailer: t\r\n")
			}
			b.WriteString("\r\n")
		}
	}
	return b.Bytes()
}

// feedSplit feeds in to f in random pieces and returns the output.
func feedSplit(rng *rand.Rand, f *framer, in []byte) []byte {
	var out []byte
	for len(in) > 0 {
		k := 1 + rng.IntN(min(len(in), 64))
		out = f.feed(out, in[:k])
		in = in[k:]
	}
	return out
}

func testSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (replay with SEED=%d)", seed, seed)
	return seed
}

// TestFramerTransparent: well-framed requests, split anyhow, pass the
// guard unchanged and it keeps guarding; a conflicting head after them is
// handed on without its framing headers, marked, and ends the stream.
func TestFramerTransparent(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, seed))
	for i := range 300 {
		in := randomRequests(rng, 1+rng.IntN(6))
		var f framer
		out := feedSplit(rng, &f, in)
		if !bytes.Equal(out, in) || f.off || f.done || f.st != inHead || len(f.head) != 0 {
			t.Fatalf("case %d: off=%v done=%v state=%d\nin  %q\nout %q", i, f.off, f.done, f.st, in, out)
		}
		bad := "PUT /v1/y HTTP/1.1\r\nTransfer-Encoding: chunked\r\nHost: a\r\nContent-Length: 3\r\n\r\n"
		out = feedSplit(rng, &f, []byte(bad+"3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n"))
		want := "PUT /v1/y HTTP/1.1\r\nHost: a\r\n" + framingHeader + ": both Content-Length and Transfer-Encoding\r\n\r\n"
		if string(out) != want || !f.done {
			t.Fatalf("case %d: after a conflicting head: done=%v %q", i, f.done, out)
		}
	}
}

// TestFramerGivesUp: where net/http refuses the connection or the guard
// cannot follow exactly, the guard hands everything on unchanged.
func TestFramerGivesUp(t *testing.T) {
	for _, in := range []string{
		"\r\nGET / HTTP/1.1\r\n\r\n",
		"GET / HTTP/9\r\n\r\n",
		"GET /\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nxyz",
		"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy",
		"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\nx\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\n\r\n",
		" GET / HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\n Folded: first\r\n\r\n",
		"GET / HTTP/1.1\r\nNoColon\r\n\r\n",
		"GET / HTTP/1.1\r\n" + strings.Repeat("X-Long: "+strings.Repeat("a", 1000)+"\r\n", maxHead/1000+1),
	} {
		var f framer
		out := f.feed(nil, []byte(in))
		out = f.feed(out, []byte("POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"))
		if !f.off || f.done || !strings.HasPrefix(string(out), in) {
			t.Errorf("%.40q: off=%v done=%v", in, f.off, f.done)
		}
	}
}

// BenchmarkFramer: the guard's cost on a typical submission (head and
// body in one read).
func BenchmarkFramer(b *testing.B) {
	req := []byte("POST /v1/boards/daily/scores HTTP/1.1\r\nHost: podium.example.com\r\nUser-Agent: podium-go/0.1.0\r\n" +
		"Authorization: Bearer pk_0123456789abcdef0123456789abcdef\r\nContent-Type: application/json\r\n" +
		"Idempotency-Key: 3f9c2a1e0b7d4c5a8e6f1d2c3b4a5968\r\nContent-Length: 46\r\nAccept-Encoding: gzip\r\n\r\n" +
		`{"player":"alice","score":1234,"meta":{"x":1}}`)
	var f framer
	out := make([]byte, 0, 4096)
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	for b.Loop() {
		out = f.feed(out[:0], req)
	}
	if f.off || f.st != inHead {
		b.Fatal("the guard lost the framing")
	}
}
