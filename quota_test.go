package podium

import (
	"testing"
	"time"
)

func i64(v int64) *int64 { return &v }

// TestLimitsNormalize: bounds must be ordered, quota.max in range, and
// neither goes on a board that submissions do not write.
func TestLimitsNormalize(t *testing.T) {
	key := func(min, max *int64) []KeyDef { return []KeyDef{{Name: "time_ms", Order: Asc, Min: min, Max: max}} }
	agg := &Aggregate{Kind: SumOfBests, Sources: []AggregateSource{{Board: "a"}}}
	for _, c := range []struct {
		name string
		b    Board
		code string // "" for valid
	}{
		{"OK", Board{ID: "b", Keys: key(i64(1000), i64(2000)), Quota: &Quota{Max: 3}}, ""},
		{"Equal", Board{ID: "b", Keys: key(i64(5), i64(5))}, ""},
		{"MinOnly", Board{ID: "b", Keys: key(i64(-5), nil)}, ""},
		{"MinAboveMax", Board{ID: "b", Keys: key(i64(2001), i64(2000))}, ECodeInvalid},
		{"QuotaZero", Board{ID: "b", Keys: key(nil, nil), Quota: &Quota{Max: 0}}, ECodeInvalid},
		{"QuotaTooLarge", Board{ID: "b", Keys: key(nil, nil), Quota: &Quota{Max: MaxQuota + 1}}, ECodeInvalid},
		{"AggregateBounds", Board{ID: "b", Keys: key(i64(1), nil), Aggregate: agg}, ECodeUnprocessable},
		{"AggregateQuota", Board{ID: "b", Keys: key(nil, nil), Aggregate: agg, Quota: &Quota{Max: 1}}, ECodeUnprocessable},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.b.Normalize()
			if c.code == "" && err != nil || c.code != "" && ErrorCode(err) != c.code {
				t.Fatalf("Normalize = %v; want code %q", err, c.code)
			}
		})
	}
}

// TestLimitsUpdate: an update that leaves out keys or quota keeps them; a
// quota of 0 removes it; bounds do not change the ranking.
func TestLimitsUpdate(t *testing.T) {
	cur := Board{ID: "b", Keys: []KeyDef{{Name: "t", Order: Asc, Min: i64(10)}}, Quota: &Quota{Max: 3}}
	title := "x"
	b := (&BoardUpdate{ID: "b", Title: &title}).Apply(&cur)
	if b.Quota == nil || b.Quota.Max != 3 || b.Keys[0].Min == nil || *b.Keys[0].Min != 10 {
		t.Fatalf("an update of the title lost the limits: %+v", b)
	}
	b = (&BoardUpdate{ID: "b", Quota: &Quota{Max: 5}}).Apply(&cur)
	if b.Quota.Max != 5 || cur.Quota.Max != 3 {
		t.Fatalf("quota 5: got %v, current %v", b.Quota, cur.Quota)
	}
	if b = (&BoardUpdate{ID: "b", Quota: &Quota{}}).Apply(&cur); b.Quota != nil {
		t.Fatalf("quota 0 kept %v", b.Quota)
	}
	if b = FullUpdate(&Board{ID: "b", Keys: cur.Keys}).Apply(&cur); b.Quota != nil {
		t.Fatalf("a full update to a board without quota kept %v", b.Quota)
	}
	other := cur
	other.Keys = []KeyDef{{Name: "t", Order: Asc, Max: i64(99)}}
	if !cur.SameRanking(&other) {
		t.Error("a change of bounds counts as a change of ranking")
	}
}

// TestQuotaWindow: a resetting board counts per period, one that never
// resets per day in its zone.
func TestQuotaWindow(t *testing.T) {
	at := time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC)
	w := QuotaWindow(&Board{Reset: Reset{Every: Weekly, TZ: "UTC"}}, at)
	if w.ID != "2026-W49" || !w.End.Equal(time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("weekly window = %+v", w)
	}
	b := &Board{Reset: Reset{Every: Never, TZ: "Asia/Shanghai"}}
	w = QuotaWindow(b, at) // 04:00 on Dec 1 in Shanghai
	if w.ID != "2026-12-01" || !w.End.Equal(time.Date(2026, 12, 1, 16, 0, 0, 0, time.UTC)) {
		t.Errorf("never-resetting window = %+v", w)
	}
	in := &Submission{Period: PeriodAll, At: at, Kind: KindScore}
	out := &Submission{Period: PeriodAll, At: w.Start.Add(-time.Millisecond), Kind: KindScore}
	del := &Submission{Period: PeriodAll, At: at, Kind: KindDelete}
	if !InQuotaWindow(b, w, in) || InQuotaWindow(b, w, out) || InQuotaWindow(b, w, del) {
		t.Error("InQuotaWindow: want only the score made within the day")
	}
}
