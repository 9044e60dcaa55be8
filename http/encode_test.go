package http

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendTime compares the hand-written formatter with the standard
// library's over random instants, edge years included.
func TestAppendTime(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []time.Time{
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 30, 23, 59, 59, 999e6, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 1, 8, 0, 0, 5e6, time.FixedZone("x", 8*3600)),
	}
	for i := 0; i < 10000; i++ {
		cases = append(cases, time.UnixMilli(r.Int64N(400*365*24*3600*1000)-100*365*24*3600*1000))
	}
	for _, tc := range cases {
		want := `"` + tc.UTC().Format("2006-01-02T15:04:05.000Z07:00") + `"`
		if got := string(appendTime(nil, tc)); got != want {
			t.Fatalf("appendTime(%v) = %s, want %s", tc, got, want)
		}
	}
}

// TestAppendString checks the JSON string encoder against encoding/json's
// decoder on awkward input.
func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \\ back`, "tab\tnew\nline\r", "\x00\x1f ctrl", "<html>&amp;",
		"émoji 🎉 ok", "line\u2028sep\u2029", string([]byte{0xff, 'a', 0xfe})} {
		var got string
		if err := json.Unmarshal(appendString(nil, s), &got); err != nil {
			t.Fatalf("appendString(%q) is not valid JSON: %s", s, appendString(nil, s))
		}
		want := s
		if s == string([]byte{0xff, 'a', 0xfe}) {
			want = "\ufffda\ufffd"
		}
		if got != want {
			t.Fatalf("appendString(%q) decodes to %q", s, got)
		}
	}
}
