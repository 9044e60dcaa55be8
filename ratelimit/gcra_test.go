package ratelimit

import (
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	lim := Limit{Quota: 4, Window: 2 * time.Second} // T = 500ms, τ = 2s
	const s = int64(time.Second / time.Microsecond)
	now := 1000 * s
	tests := []struct {
		name     string
		tat, now int64
		cost     int
		wantTAT  int64
		want     Result
	}{
		{"NewBucket", 0, now, 1, now + s/2, Result{Allowed: true, Remaining: 3, Reset: 500 * time.Millisecond}},
		{"StaleTATIsNow", now - 100*s, now, 1, now + s/2, Result{Allowed: true, Remaining: 3, Reset: 500 * time.Millisecond}},
		{"LastOfBurst", now + 3*s/2, now, 1, now + 2*s, Result{Allowed: true, Remaining: 0, Reset: 2 * time.Second}},
		{"Empty", now + 2*s, now, 1, now + 2*s, Result{Remaining: 0, Reset: 2 * time.Second, RetryAfter: 500 * time.Millisecond}},
		{"PartlyRefilled", now + 2*s - 200_000, now, 1, now + 2*s - 200_000, Result{Remaining: 0, Reset: 1800 * time.Millisecond, RetryAfter: 300 * time.Millisecond}},
		{"CostTooBigForWhatIsLeft", now + s, now, 3, now + s, Result{Remaining: 2, Reset: time.Second, RetryAfter: 500 * time.Millisecond}},
		{"CostFits", now + s, now, 2, now + 2*s, Result{Allowed: true, Remaining: 0, Reset: 2 * time.Second}},
		{"PeekFull", 0, now, 0, 0, Result{Allowed: true, Remaining: 4}},
		{"PeekEmpty", now + 2*s, now, 0, now + 2*s, Result{Remaining: 0, Reset: 2 * time.Second, RetryAfter: 500 * time.Millisecond}},
		{"CostAboveQuotaNeverFits", 0, now, 5, 0, Result{Remaining: 4, RetryAfter: 500 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotTAT, got := Decide(tt.tat, tt.now, lim, tt.cost)
			if gotTAT != tt.wantTAT || got != tt.want {
				t.Fatalf("Decide(%d, %d, %v, %d) = %d, %+v; want %d, %+v", tt.tat, tt.now, lim, tt.cost, gotTAT, got, tt.wantTAT, tt.want)
			}
		})
	}
}

// TestDecideRate: over a long run at a steady overload, GCRA admits the
// burst plus exactly one request per emission interval.
func TestDecideRate(t *testing.T) {
	lim := Limit{Quota: 10, Window: time.Second} // T = 100ms
	var tat int64
	admitted := 0
	for ms := int64(0); ms < 10_000; ms++ { // one request per ms for 10 s
		var r Result
		tat, r = Decide(tat, 1_000_000_000+ms*1000, lim, 1)
		if r.Allowed {
			admitted++
		}
	}
	if want := 10 + 100 - 1; admitted != want && admitted != want+1 {
		t.Fatalf("admitted %d in 10s of 1000 req/s under 10/1s; want %d or %d", admitted, want, want+1)
	}
}

func TestParseLimit(t *testing.T) {
	good := map[string]Limit{
		"600/1m": {600, time.Minute}, "20/s": {20, time.Second}, "off": {}, "5/250ms": {5, 250 * time.Millisecond},
	}
	for in, want := range good {
		got, err := ParseLimit(in)
		if err != nil || got != want {
			t.Errorf("ParseLimit(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "10", "x/1m", "0/1m", "10/0s", "10/48h", "-1/1s", "10/1us", "10/m/"} {
		if _, err := ParseLimit(in); err == nil {
			t.Errorf("ParseLimit(%q) accepted", in)
		}
	}
}

func BenchmarkDecide(b *testing.B) {
	lim := Limit{Quota: 1000, Window: time.Second}
	var tat int64
	now := time.Now().UnixMicro()
	for i := 0; b.Loop(); i++ {
		tat, _ = Decide(tat, now+int64(i), lim, 1)
	}
}
