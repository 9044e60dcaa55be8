package scoring

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The vectors of issue 8, computed from the published formulas.
func TestCTFdLogarithmicVector(t *testing.T) {
	want := []int64{500, 500, 496, 484, 464, 436, 400, 356, 304, 244, 176, 100, 100}
	for s, w := range want {
		if got := CTFdLogarithmic(500, 100, 10, int64(s)); got != w {
			t.Errorf("CTFdLogarithmic(500, 100, 10, %d) = %d, want %d", s, got, w)
		}
	}
}

func TestRCTFVector(t *testing.T) {
	want := []int64{500, 458, 403, 337, 271, 213, 169, 138, 119, 107, 100}
	for s, w := range want {
		if got := RCTF(100, 500, 10, int64(s)); got != w {
			t.Errorf("RCTF(100, 500, 10, %d) = %d, want %d", s, got, w)
		}
	}
}

func TestGZCTFVector(t *testing.T) {
	want := []int64{1000, 1000, 864, 752, 661, 586}
	for n, w := range want {
		if got := GZCTF(1000, 0.25, 5, int64(n)); got != w {
			t.Errorf("GZCTF(1000, 0.25, 5, %d) = %d, want %d", n, got, w)
		}
	}
}

// CTFd linear, derived by hand from decay.py: the first solver keeps the
// initial value, each later one takes decay off, down to the minimum.
func TestCTFdLinearVector(t *testing.T) {
	want := []int64{500, 500, 450, 400, 350, 300, 250, 200, 150, 100, 100, 100}
	for s, w := range want {
		if got := CTFdLinear(500, 100, 50, int64(s)); got != w {
			t.Errorf("CTFdLinear(500, 100, 50, %d) = %d, want %d", s, got, w)
		}
	}
	// A minimum above what decay reaches, and a zero decay.
	if got := CTFdLinear(300, 250, 7, 9); got != 250 {
		t.Errorf("CTFdLinear(300, 250, 7, 9) = %d, want 250", got)
	}
	if got := CTFdLinear(300, 0, 0, 99); got != 300 {
		t.Errorf("CTFdLinear(300, 0, 0, 99) = %d, want 300", got)
	}
}

// A decay of 0 is taken as 1, as CTFd does, instead of dividing by zero.
func TestCTFdLogarithmicZeroDecay(t *testing.T) {
	for s, w := range []int64{500, 500, 100, 100} {
		if got := CTFdLogarithmic(500, 100, 0, int64(s)); got != w {
			t.Errorf("CTFdLogarithmic(500, 100, 0, %d) = %d, want %d", s, got, w)
		}
	}
}

func TestBonus(t *testing.T) {
	for _, c := range []struct{ value, pct, want int64 }{
		{500, 10, 50},
		{405, 10, 40}, // 40.5: half to even, down
		{415, 10, 42}, // 41.5: half to even, up
		{425, 10, 42}, // 42.5: down
		{333, 5, 17},  // 16.65
		{330, 5, 16},  // 16.5: down to even
		{350, 5, 18},  // 17.5: up to even
		{1, 50, 0},    // 0.5
		{3, 50, 2},    // 1.5
		{999, 3, 30},  // 29.97
		{0, 100, 0},
		{MaxCTFValue, 100, MaxCTFValue},
	} {
		if got := Bonus(c.value, c.pct); got != c.want {
			t.Errorf("Bonus(%d, %d) = %d, want %d", c.value, c.pct, got, c.want)
		}
	}
}

// TestAgainstOriginals replays vectors that the original formulas computed
// in their own languages (testdata/gen_*.py and gen_*.js, run with CPython
// and Node.js): CTFd's and GZCTF's in Python floats, rCTF's in V8.
func TestAgainstOriginals(t *testing.T) {
	n := 0
	for _, file := range []string{"testdata/ctf_python.txt", "testdata/ctf_node.txt"} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) != 6 {
				t.Fatalf("%s: bad line %q", file, sc.Text())
			}
			i := func(k int) int64 {
				v, err := strconv.ParseInt(fs[k], 10, 64)
				if err != nil {
					t.Fatalf("%s: %q: %v", file, sc.Text(), err)
				}
				return v
			}
			fl := func(k int) float64 {
				v, err := strconv.ParseFloat(fs[k], 64)
				if err != nil {
					t.Fatalf("%s: %q: %v", file, sc.Text(), err)
				}
				return v
			}
			var got int64
			switch fs[0] {
			case "ctfd_linear":
				got = CTFdLinear(i(1), i(2), i(3), i(4))
			case "ctfd_logarithmic":
				got = CTFdLogarithmic(i(1), i(2), i(3), i(4))
			case "rctf":
				got = RCTF(i(1), i(2), i(3), i(4))
			case "gzctf":
				got = GZCTF(i(1), fl(2), fl(3), i(4))
			default:
				t.Fatalf("%s: unknown formula %q", file, fs[0])
			}
			if want := i(5); got != want {
				t.Errorf("%s = %d, want %d", sc.Text(), got, want)
			}
			n++
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if n < 20000 {
		t.Fatalf("only %d vectors read", n)
	}
}

// TestTanhBitsAgainstV8 pins jsTanh to V8's Math.tanh bit for bit
// (testdata/gen_tanh.js).
func TestTanhBitsAgainstV8(t *testing.T) {
	data, err := os.ReadFile("testdata/tanh_node.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(data))
	if len(lines) < 8000 {
		t.Fatalf("only %d fields", len(lines))
	}
	goDiffers := 0
	for k := 0; k+1 < len(lines); k += 2 {
		xb, err1 := strconv.ParseUint(lines[k], 16, 64)
		yb, err2 := strconv.ParseUint(lines[k+1], 16, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad pair %q %q", lines[k], lines[k+1])
		}
		x := math.Float64frombits(xb)
		if got := math.Float64bits(jsTanh(x)); got != yb {
			t.Errorf("jsTanh(%v) = %x, V8 says %x", x, got, yb)
		}
		if math.Float64bits(math.Tanh(x)) != yb {
			goDiffers++
		}
	}
	t.Logf("Go's math.Tanh differs from V8 at %d of %d points", goDiffers, len(lines)/2)
}

func TestJSRound(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{2.5, 3}, {-2.5, -2}, {2.4999, 2}, {-0.5, 0}, {0.49999999999999994, 0}, {457.5, 458},
	} {
		if got := jsRound(c.x); got != c.want {
			t.Errorf("jsRound(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

func BenchmarkRCTF(b *testing.B) {
	for i := range b.N {
		RCTF(100, 500, 1000, int64(i%1000))
	}
}
