package contest

import (
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

var t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

func TestContestNormalize(t *testing.T) {
	freeze := t0.Add(90 * time.Minute)
	before := t0.Add(-time.Minute)
	for _, c := range []struct {
		name string
		c    Contest
		err  string
	}{
		{"OK", Contest{ID: "ctf:2026", Start: t0, End: t0.Add(2 * time.Hour), Freeze: &freeze, FirstBlood: [3]int64{10, 5, 3}}, ""},
		{"BadID", Contest{ID: "CTF", Start: t0, End: t0.Add(time.Hour)}, "contest id"},
		{"NoTimes", Contest{ID: "c"}, "start and end"},
		{"EndBeforeStart", Contest{ID: "c", Start: t0, End: t0}, "end must be after start"},
		{"FreezeOutside", Contest{ID: "c", Start: t0, End: t0.Add(time.Hour), Freeze: &before}, "freeze"},
		{"BonusOver100", Contest{ID: "c", Start: t0, End: t0.Add(time.Hour), FirstBlood: [3]int64{101}}, "first_blood[0]"},
		{"NegativeBonus", Contest{ID: "c", Start: t0, End: t0.Add(time.Hour), FirstBlood: [3]int64{0, 0, -1}}, "first_blood[2]"},
		{"BloodRuleGZCTF", Contest{ID: "c", Start: t0, End: t0.Add(time.Hour), BloodRule: BloodGZCTF}, ""},
		{"BadBloodRule", Contest{ID: "c", Start: t0, End: t0.Add(time.Hour), BloodRule: "ctfd"}, "blood_rule"},
		{"ControlInTitle", Contest{ID: "c", Title: "a\x01", Start: t0, End: t0.Add(time.Hour)}, "control"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.c.Normalize()
			if c.err == "" {
				if err != nil {
					t.Fatalf("Normalize: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) || podium.ErrorCode(err) != podium.ECodeInvalid {
				t.Fatalf("Normalize = %v, want invalid_argument about %q", err, c.err)
			}
		})
	}
}

func TestScoringNormalize(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Scoring
		err  string
	}{
		{"StaticDefault", Scoring{Value: 100}, ""},
		{"CTFd", Scoring{Function: CTFdLogarithmic, Value: 500, Minimum: 100, Decay: 10}, ""},
		{"RCTF", Scoring{Function: RCTF, Value: 500, Minimum: 100}, ""},
		{"GZCTF", Scoring{Function: GZCTF, Value: 1000, MinRate: 0.25, Difficulty: 5}, ""},
		{"UnknownFunction", Scoring{Function: "exp", Value: 1}, "function must be"},
		{"MinimumAboveValue", Scoring{Function: CTFdLinear, Value: 100, Minimum: 200}, "minimum"},
		{"DecayOnStatic", Scoring{Value: 100, Decay: 3}, "decay does not apply"},
		{"MinRateOnRCTF", Scoring{Function: RCTF, Value: 100, MinRate: 0.5}, "min_rate does not apply"},
		{"GZCTFNoDifficulty", Scoring{Function: GZCTF, Value: 100, MinRate: 0.5}, "difficulty"},
		{"GZCTFRateAbove1", Scoring{Function: GZCTF, Value: 100, MinRate: 1.5, Difficulty: 1}, "min_rate"},
		{"ValueTooLarge", Scoring{Value: 2e9}, "value must be"},
		{"NegativeValue", Scoring{Value: -1}, "value must be"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.s.Normalize()
			if c.err == "" {
				if err != nil {
					t.Fatalf("Normalize: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Normalize = %v, want an error about %q", err, c.err)
			}
		})
	}
}

func TestFrozenAt(t *testing.T) {
	freeze := t0.Add(time.Hour)
	c := Contest{ID: "c", Start: t0, End: t0.Add(2 * time.Hour), Freeze: &freeze}
	if got := c.FrozenAt(t0.Add(59 * time.Minute)); !got.IsZero() {
		t.Errorf("before the freeze: cutoff %v", got)
	}
	if got := c.FrozenAt(t0.Add(3 * time.Hour)); !got.Equal(freeze) {
		t.Errorf("after the end, not revealed: cutoff %v, want the freeze", got)
	}
	c.Revealed = true
	if got := c.FrozenAt(t0.Add(3 * time.Hour)); !got.IsZero() {
		t.Errorf("revealed: cutoff %v", got)
	}
}

// TestBloodRuleStored: the blood rule survives the stored document, and a
// document stored before the field existed loads as auto.
func TestBloodRuleStored(t *testing.T) {
	c := Contest{ID: "c", Start: t0, End: t0.Add(time.Hour), BloodRule: BloodGZCTF}
	doc, err := c.Document()
	if err != nil {
		t.Fatal(err)
	}
	var back Contest
	if err := back.SetDocument(doc); err != nil || back.BloodRule != BloodGZCTF {
		t.Fatalf("SetDocument = %q, %v; want gzctf", back.BloodRule, err)
	}
	if err := back.SetDocument([]byte(`{"title":"","start":0,"end":1,"first_blood":[5,3,1],"public":false}`)); err != nil || back.BloodRule != BloodAuto {
		t.Fatalf("an old document loads with rule %q, %v; want auto", back.BloodRule, err)
	}
}
