package http_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
)

// discardWriter is a ResponseWriter that counts the body and keeps none
// of it, so that what a call allocates is the server's.
type discardWriter struct {
	h http.Header
	n int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }

// restoreResults restores n results of one settled period, 2026-11-02, of
// the daily league lg, 999 a call (each call carries the period's row).
func restoreResults(t *testing.T, s *server, n int) {
	t.Helper()
	for done := 0; done < n; {
		var b strings.Builder
		b.WriteString(`{"periods":[{"period":"2026-11-02","start":"2026-11-02T00:00:00Z","settled_at":"2026-11-03T00:00:01Z","players":0,"promoted":0,"relegated":0,"results":[`)
		for i := 0; i < 999 && done < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"player":"player-%07d","tier":"low","cohort":%d,"rank":%d,"outcome":"stayed","new_tier":"low"}`, done, done/30, done%30+1)
			done++
		}
		b.WriteString("]}]}")
		s.must(200, s.do("POST", "/v1/leagues/lg/restore", adminKey, b.String()))
	}
}

// TestLeagueExportMemory measures what one export call allocates on the
// server (bytes allocated during the call: an upper bound of what it
// holds) as the league grows: a page of 1,000 results, and the whole
// answer. Run with PODIUM_BENCH_LEAGUE_EXPORT=1 (docs/BENCHMARKS.md).
func TestLeagueExportMemory(t *testing.T) {
	if os.Getenv("PODIUM_BENCH_LEAGUE_EXPORT") == "" {
		t.Skip("a measurement: PODIUM_BENCH_LEAGUE_EXPORT=1")
	}
	s := newSpecServerAt(t, nil)
	s.mkBoard("lg", `{"public":true,"mode":"sum","keys":[{"name":"xp","order":"desc"}],"reset":{"every":"day","tz":"UTC"},
		"league":{"cohort_size":30,"tiers":[{"name":"low","promote":1},{"name":"high","relegate":1}]}}`)
	h := s.srv.Handler()
	call := func(target string) (alloc uint64, body int, status string) {
		req := httptest.NewRequest("GET", target, nil)
		req.Header.Set("Authorization", "Bearer "+adminKey)
		w := &discardWriter{h: http.Header{}}
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		h.ServeHTTP(w, req)
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc - m0.TotalAlloc, w.n, w.h.Get("Content-Type")
	}
	have := 0
	for _, n := range []int{10_000, 50_000, 200_000} {
		restoreResults(t, s, n-have)
		have = n
		// The median of 5 calls: the allocation of a call varies with
		// the runtime's own (a GC, a timer) between the two reads.
		med := func(target string) (uint64, int, string) {
			var as []uint64
			var body int
			var ct string
			for range 5 {
				a, n, c := call(target)
				as, body, ct = append(as, a), n, c
			}
			for i := range as {
				for j := i + 1; j < len(as); j++ {
					if as[j] < as[i] {
						as[i], as[j] = as[j], as[i]
					}
				}
			}
			return as[2], body, ct
		}
		a, body, _ := med(fmt.Sprintf("/v1/leagues/lg/export?part=results&period=2026-11-02&limit=1000&after=player-%07d", n/2))
		fmt.Printf("results=%d page limit=1000 (mid-period): %d B allocated, %d B body\n", n, a, body)
		a, body, _ = med("/v1/leagues/lg/export?part=results&period=2026-11-02&limit=10000")
		fmt.Printf("results=%d page limit=10000: %d B allocated, %d B body\n", n, a, body)
		a, body, ct := med("/v1/leagues/lg/export")
		fmt.Printf("results=%d whole (no part): %d B allocated, %d B body, %s\n", n, a, body, ct)
	}
}
