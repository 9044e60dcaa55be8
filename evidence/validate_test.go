package evidence

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func reason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	if err != nil {
		return "read:" + err.Error()
	}
	return ""
}

// A reader that fails if read past n bytes: proves a limit stops reading.
type fence struct {
	r io.Reader
	n int64
	t *testing.T
}

func (f *fence) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	f.n -= int64(n)
	if f.n < 0 {
		f.t.Fatalf("read %d bytes past the fence", -f.n)
	}
	return n, err
}

func TestValidate(t *testing.T) {
	small := Limits{MaxBytes: 4096, MaxInflatedBytes: 1 << 16, MaxEvents: 3, MaxLineBytes: 100}
	ok := "{\"t\":1}\n{\"t\":2,\"k\":\"x\"}\n"
	bomb := gz(t, strings.Repeat("{\"a\":0}\n", 1<<15)) // 256 KiB inflated, tiny compressed
	cases := []struct {
		name string
		body []byte
		lim  Limits
		want string
	}{
		{"OK", gz(t, ok), small, ""},
		{"OKNoFinalNewline", gz(t, "{\"t\":1}"), small, ""},
		{"Bomb", bomb, Limits{MaxInflatedBytes: 1 << 16}, ReasonInflatedTooLarge},
		{"TooManyEvents", gz(t, strings.Repeat("{}\n", 4)), small, ReasonTooManyEvents},
		{"LineTooLong", gz(t, "{\"a\":\""+strings.Repeat("x", 100)+"\"}\n"), small, ReasonLineTooLong},
		{"NotObject", gz(t, "[1]\n"), small, ReasonBadEvent},
		{"NotJSON", gz(t, "{\"a\":}\n"), small, ReasonBadEvent},
		{"EmptyLine", gz(t, "{}\n\n{}\n"), small, ReasonBadEvent},
		{"BadUTF8", gz(t, "{\"a\":\"\xff\"}\n"), small, ReasonBadEvent},
		{"NoEvents", gz(t, ""), small, ReasonEmpty},
		{"EmptyBody", nil, small, ReasonEmpty},
		{"NotGzip", []byte("{\"a\":1}\n"), small, ReasonBadGzip},
		{"Truncated", gz(t, ok)[:20], small, ReasonBadGzip},
		{"Concatenated", append(gz(t, ok), gz(t, ok)...), small, ReasonConcatenated},
		{"Trailing", append(gz(t, ok), "junk"...), small, ReasonTrailing},
		{"TrailingZero", append(gz(t, ok), 0), small, ReasonTrailing},
		{"TooLarge", bytes.Repeat([]byte{0x1f}, 5000), small, ReasonTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lim := c.lim.filled()
			// Never more than one byte past the compressed limit is read.
			res, n, err := Validate(&fence{r: bytes.NewReader(c.body), n: lim.MaxBytes + 1, t: t}, c.lim)
			if got := reason(err); got != c.want {
				t.Fatalf("reason %q, want %q (%v)", got, c.want, err)
			}
			if n > lim.MaxBytes+1 {
				t.Fatalf("received %d", n)
			}
			if c.want != "" {
				return
			}
			if !bytes.Equal(res.Compressed, c.body) || res.CompressedSHA256 != sha256.Sum256(c.body) || n != int64(len(c.body)) {
				t.Fatalf("compressed copy or hash differs")
			}
			zr, _ := gzip.NewReader(bytes.NewReader(c.body))
			plain, _ := io.ReadAll(zr)
			if res.ContentSHA256 != sha256.Sum256(plain) || res.Inflated != int64(len(plain)) {
				t.Fatalf("content hash or size differs")
			}
		})
	}
}

// TestValidateBombStopsEarly: a bomb is stopped after the inflated limit,
// not after inflating everything.
func TestValidateBombStopsEarly(t *testing.T) {
	body := gz(t, strings.Repeat("{\"a\":0}\n", 4<<20)) // 32 MiB inflated
	lr := &countingReader{r: bytes.NewReader(body)}
	_, _, err := Validate(lr, Limits{MaxInflatedBytes: 1 << 20, MaxEvents: 1 << 30})
	if reason(err) != ReasonInflatedTooLarge {
		t.Fatalf("got %v", err)
	}
	if lr.n >= int64(len(body)) {
		t.Fatalf("read all %d compressed bytes of a bomb", lr.n)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type failing struct{ after []byte }

var errBoom = errors.New("boom")

func (f *failing) Read(p []byte) (int, error) {
	if len(f.after) == 0 {
		return 0, errBoom
	}
	n := copy(p, f.after)
	f.after = f.after[n:]
	return n, nil
}

// TestValidateReadError: a failing body is a *ReadError keeping the cause,
// not a content error.
func TestValidateReadError(t *testing.T) {
	_, _, err := Validate(&failing{after: gz(t, "{}\n")[:12]}, Limits{})
	var re *ReadError
	if !errors.As(err, &re) || !errors.Is(err, errBoom) {
		t.Fatalf("got %T %v", err, err)
	}
}

// FuzzValidate: whatever the input, Validate neither panics nor breaks a
// limit, and what it accepts is exactly one gzip member of JSON objects
// whose hashes match.
func FuzzValidate(f *testing.F) {
	f.Add(gz(f, "{}\n"))
	f.Add(append(gz(f, "{}\n"), gz(f, "{}")...))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Add(gz(f, "{\"a\":[1,2,{\"b\":null}]}\n{\"c\":\"\\u00e9\"}"))
	lim := Limits{MaxBytes: 2048, MaxInflatedBytes: 4096, MaxEvents: 8, MaxLineBytes: 256}
	f.Fuzz(func(t *testing.T, body []byte) {
		res, n, err := Validate(bytes.NewReader(body), lim)
		if n > lim.MaxBytes+1 {
			t.Fatalf("read %d bytes", n)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("not a content error: %v", err)
			}
			return
		}
		if res.Events < 1 || res.Events > lim.MaxEvents || res.Inflated > lim.MaxInflatedBytes || !bytes.Equal(res.Compressed, body) {
			t.Fatalf("accepted out of limits: %+v", res)
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		plain, err := io.ReadAll(zr)
		if err != nil || sha256.Sum256(plain) != res.ContentSHA256 {
			t.Fatalf("content hash differs (%v)", err)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(plain, []byte("\n")), []byte("\n")) {
			if len(line) > lim.MaxLineBytes {
				t.Fatalf("line too long accepted")
			}
		}
	})
}

// BenchmarkValidate: the validator's cost on a 20,000-event replay (the
// default event cap), about 1.6 MB inflated.
func BenchmarkValidate(b *testing.B) {
	var sb strings.Builder
	h := sha256.Sum256(nil)
	for i := range 20000 {
		h = sha256.Sum256(h[:])
		fmt.Fprintf(&sb, "{\"t\":%d,\"op\":\"click\",\"x\":%d,\"y\":%d,\"h\":\"%x\"}\n", i*37, h[0], h[1], h[:8])
	}
	body := gz(b, sb.String())
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	for range b.N {
		if _, _, err := Validate(bytes.NewReader(body), Limits{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(body)), "gzip-bytes")
}
