package podium

import (
	"testing"
	"time"
)

func TestKeptFrom(t *testing.T) {
	paris := "Europe/Paris"
	tests := []struct {
		name  string
		every Every
		tz    string
		keep  int
		now   time.Time
		want  string
	}{
		{"Never", Never, "UTC", 3, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), ""},
		{"KeepAll", Daily, "UTC", 0, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), ""},
		{"DayOne", Daily, "UTC", 1, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), "2026-11-29"},
		{"DayAcrossYear", Daily, "UTC", 3, time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC), "2026-12-30"},
		{"DayZone", Daily, paris, 1, time.Date(2026, 11, 30, 23, 30, 0, 0, time.UTC), "2026-11-30"}, // Dec 1 in Paris
		{"DayAcrossDST", Daily, paris, 2, time.Date(2026, 3, 30, 0, 30, 0, 0, time.UTC), "2026-03-28"},
		{"WeekOne", Weekly, "UTC", 1, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), "2026-W48"},
		{"WeekAcrossISOYear", Weekly, "UTC", 2, time.Date(2027, 1, 5, 0, 0, 0, 0, time.UTC), "2026-W52"},
		{"MonthOne", Monthly, "UTC", 1, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), "2026-10"},
		{"MonthAcrossYear", Monthly, "UTC", 13, time.Date(2026, 1, 31, 23, 0, 0, 0, time.UTC), "2024-12"},
		{"Max", Daily, "UTC", MaxKeepPeriods, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), time.Date(2026, 11, 30-MaxKeepPeriods, 0, 0, 0, 0, time.UTC).Format("2006-01-02")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &Board{Reset: Reset{Every: tc.every, TZ: tc.tz}, KeepPeriods: tc.keep}
			if got := b.KeptFrom(tc.now); got != tc.want {
				t.Fatalf("KeptFrom = %q, want %q", got, tc.want)
			}
			// The same answer as stepping back one period at a time.
			if tc.want != "" {
				p := PeriodAt(b.Reset, tc.now)
				for range tc.keep {
					p, _ = PreviousPeriod(b.Reset, p)
				}
				if p.ID != tc.want {
					t.Fatalf("stepping back %d periods gives %s, KeptFrom %s", tc.keep, p.ID, tc.want)
				}
			}
		})
	}
}

func TestPeriodExpired(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	b := &Board{Reset: Reset{Every: Daily, TZ: "UTC"}, KeepPeriods: 2}
	for id, want := range map[string]bool{
		"2026-11-30": false, // current
		"2026-11-29": false, // previous
		"2026-11-28": false, // the second kept
		"2026-11-27": true,
		"2025-01-01": true,
		"2026-12-01": false, // the future
		"all":        false, // not a period of this cadence
		"2026-W40":   false,
	} {
		if got := b.PeriodExpired(now, id); got != want {
			t.Errorf("PeriodExpired(%s) = %v, want %v", id, got, want)
		}
	}
	b.KeepPeriods = 0
	if b.PeriodExpired(now, "2000-01-01") {
		t.Error("a board that keeps every period expired one")
	}
}

func TestKeepPeriodsValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		keep int
		ok   bool
	}{{"Zero", 0, true}, {"One", 1, true}, {"Max", MaxKeepPeriods, true}, {"Negative", -1, false}, {"TooMany", MaxKeepPeriods + 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Board{ID: "b", Keys: []KeyDef{{Name: "k", Order: Desc}}, Reset: Reset{Every: Daily}, KeepPeriods: tc.keep}
			err := b.Normalize()
			if (err == nil) != tc.ok {
				t.Fatalf("Normalize(keep_periods %d) = %v", tc.keep, err)
			}
			if err != nil && ErrorCode(err) != ECodeInvalid {
				t.Fatalf("code %s, want %s", ErrorCode(err), ECodeInvalid)
			}
		})
	}
}

func TestPruneStep(t *testing.T) {
	seqs := []uint64{1, 2, 3, 4, 5}
	periods := []string{"a1", "a1", "a2", "b", "a1"}
	if from, to, ok := PruneStep(seqs, periods, "b", 100); !ok || from != 1 || to != 3 {
		t.Fatalf("PruneStep = %d..%d %v, want 1..3", from, to, ok)
	}
	if from, to, ok := PruneStep(seqs[:3], periods[:3], "b", 3); !ok || from != 1 || to != 2 {
		t.Fatalf("PruneStep with last 3 = %d..%d %v, want 1..2", from, to, ok)
	}
	if _, _, ok := PruneStep(seqs[3:], periods[3:], "b", 100); ok {
		t.Fatal("PruneStep deleted a kept row")
	}
}
