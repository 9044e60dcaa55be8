// Package contest is the domain of CTF contests: contests, challenges with
// their scoring functions, solves, attempts, and the pure reducer that
// turns a contest's solves into standings (standings.go). It has no I/O:
// the ctf package keeps contests in memory and in a Store.
//
// Teams are podium players: a team id is a player id, its name and hidden
// flag are the player's.
package contest

import (
	"encoding/json"
	"math"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/scoring"
)

// Limits.
const (
	MaxChallenges   = 1000 // per contest
	MaxCategoryLen  = 64   // bytes
	MaxChallengeLen = 64   // bytes of a challenge id
	MaxSolvesPerRun = scoring.MaxCTFSolves
)

// Contest is a CTF contest. Times are kept to the millisecond.
type Contest struct {
	ID    string    `json:"id"`
	Title string    `json:"title"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Freeze, when set, is when the public standings stop moving: from
	// then on they show the solves made before it, valued as they were at
	// it, until the contest is revealed.
	Freeze *time.Time `json:"freeze"`
	// Revealed ends the freeze: the public standings are the live ones.
	// Set by POST /v1/contests/{id}/unfreeze (before the end only when
	// forced), cleared by POST /v1/contests/{id}/refreeze (before the end).
	Revealed bool `json:"revealed"`
	// FirstBlood is the bonus of the first, second and third solver of a
	// challenge, in percent of its current value (0 to 100 each).
	FirstBlood [3]int64 `json:"first_blood"`
	// BloodRule is how FirstBlood turns into points: BloodPercent,
	// BloodGZCTF, or BloodAuto (GZCTF's rule on challenges scored by the
	// gzctf function, the percent rule on the others). Normalize turns ""
	// into BloodAuto; a contest stored before the field existed loads as
	// "", which means the same.
	BloodRule string          `json:"blood_rule"`
	Public    bool            `json:"public"`
	Meta      json.RawMessage `json:"meta"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// Normalize validates c and truncates its times to milliseconds. It
// returns an ECodeInvalid error naming the first problem.
func (c *Contest) Normalize() error {
	if !podium.ValidBoardID(c.ID) {
		return podium.Errorf(podium.ECodeInvalid, "contest id must match [a-z0-9][a-z0-9_.:-]{0,127}")
	}
	if err := text("title", c.Title, podium.MaxTitleLen); err != nil {
		return err
	}
	if c.Start.IsZero() || c.End.IsZero() {
		return podium.Errorf(podium.ECodeInvalid, "start and end are required")
	}
	c.Start, c.End = podium.FromMillis(podium.Millis(c.Start)), podium.FromMillis(podium.Millis(c.End))
	if !c.End.After(c.Start) {
		return podium.Errorf(podium.ECodeInvalid, "end must be after start")
	}
	if c.Freeze != nil {
		f := podium.FromMillis(podium.Millis(*c.Freeze))
		if f.Before(c.Start) || f.After(c.End) {
			return podium.Errorf(podium.ECodeInvalid, "freeze must be between start and end")
		}
		c.Freeze = &f
	}
	for i, p := range c.FirstBlood {
		if p < 0 || p > 100 {
			return podium.Errorf(podium.ECodeInvalid, "first_blood[%d] must be a percent from 0 to 100", i)
		}
	}
	switch c.BloodRule {
	case "":
		c.BloodRule = BloodAuto
	case BloodAuto, BloodPercent, BloodGZCTF:
	default:
		return podium.Errorf(podium.ECodeInvalid, "blood_rule must be auto, percent or gzctf")
	}
	meta, err := podium.NormalizeMeta(c.Meta)
	if err != nil {
		return err
	}
	c.Meta = meta
	return nil
}

// Rules that turn a first-blood percent into points.
const (
	// BloodPercent: the bonus is the percent of the current value, exact,
	// rounded half to even (scoring.Bonus).
	BloodPercent = "percent"
	// BloodGZCTF: GZCTF's rule, the current value times 1 + percent/100
	// in float32, rounded half to even (scoring.GZCTFBlood with the
	// percent in GZCTF's thousandths); when all three percents are 0 no
	// solve earns a bonus, as GZCTF's NoBonus.
	BloodGZCTF = "gzctf"
	// BloodAuto: BloodGZCTF on a challenge scored by the gzctf function,
	// BloodPercent on the others.
	BloodAuto = "auto"
)

// BloodPoints is what a solve holding blood position blood (1 to 3; 0 for
// none) of a challenge scored by sc earns at the challenge's current
// value, under c's rule: the value and the bonus (points - value).
func (c *Contest) BloodPoints(sc *Scoring, value int64, blood int) (points int64) {
	if blood < 1 || blood > 3 {
		return value
	}
	pct := c.FirstBlood[blood-1]
	rule := c.BloodRule
	if rule == "" || rule == BloodAuto {
		rule = BloodPercent
		if sc.Function == GZCTF {
			rule = BloodGZCTF
		}
	}
	if rule == BloodGZCTF {
		if c.FirstBlood == [3]int64{} {
			return value
		}
		return scoring.GZCTFBlood(value, pct*10)
	}
	return value + scoring.Bonus(value, pct)
}

// Running reports whether t is within [Start, End): when attempts are
// taken.
func (c *Contest) Running(t time.Time) bool { return !t.Before(c.Start) && t.Before(c.End) }

// FrozenAt returns the cutoff of the public standings at time now: the
// freeze time once it has passed and until the contest is revealed, else
// the zero time (no cutoff).
func (c *Contest) FrozenAt(now time.Time) time.Time {
	if c.Freeze == nil || c.Revealed || now.Before(*c.Freeze) {
		return time.Time{}
	}
	return *c.Freeze
}

// Functions of a challenge's value.
const (
	Static          = "static"           // value
	CTFdLinear      = "ctfd_linear"      // value (initial), minimum, decay
	CTFdLogarithmic = "ctfd_logarithmic" // value (initial), minimum, decay
	RCTF            = "rctf"             // value (max), minimum
	GZCTF           = "gzctf"            // value (original), min_rate, difficulty
)

// Scoring is a challenge's value function and its parameters. Value is
// the static value, CTFd's initial, rCTF's maximum or GZCTF's original
// score; the other fields are used by the functions named beside them and
// must be zero for the others.
type Scoring struct {
	Function   string  `json:"function"`
	Value      int64   `json:"value"`
	Minimum    int64   `json:"minimum,omitempty"`
	Decay      int64   `json:"decay,omitempty"`
	MinRate    float64 `json:"min_rate,omitempty"`
	Difficulty float64 `json:"difficulty,omitempty"`
}

// Normalize validates s.
func (s *Scoring) Normalize() error {
	bad := func(f string, a ...any) error { return podium.Errorf(podium.ECodeInvalid, "scoring: "+f, a...) }
	if s.Value < 0 || s.Value > scoring.MaxCTFValue {
		return bad("value must be 0 to %d", scoring.MaxCTFValue)
	}
	if s.Minimum < 0 || s.Minimum > s.Value {
		return bad("minimum must be 0 to value")
	}
	if s.Decay < 0 || s.Decay > scoring.MaxCTFSolves {
		return bad("decay must be 0 to %d", scoring.MaxCTFSolves)
	}
	uses := map[string]bool{}
	switch s.Function {
	case "":
		s.Function = Static
	case Static:
	case CTFdLinear, CTFdLogarithmic:
		uses["minimum"], uses["decay"] = true, true
	case RCTF:
		uses["minimum"] = true
	case GZCTF:
		uses["min_rate"], uses["difficulty"] = true, true
		if math.IsNaN(s.MinRate) || s.MinRate < 0 || s.MinRate > 1 {
			return bad("min_rate must be from 0 to 1")
		}
		if math.IsNaN(s.Difficulty) || s.Difficulty <= 0 || s.Difficulty > 1e6 {
			return bad("difficulty must be above 0 and at most 1000000")
		}
	default:
		return bad("function must be static, ctfd_linear, ctfd_logarithmic, rctf or gzctf")
	}
	for name, set := range map[string]bool{"minimum": s.Minimum != 0, "decay": s.Decay != 0,
		"min_rate": s.MinRate != 0, "difficulty": s.Difficulty != 0} {
		if set && !uses[name] {
			return bad("%s does not apply to function %s", name, s.Function)
		}
	}
	return nil
}

// ValueAt is the value of a challenge with solves solves, when the most
// solved challenge of the contest has maxSolves (rCTF's parameter).
func (s *Scoring) ValueAt(solves, maxSolves int64) int64 {
	solves = min(solves, scoring.MaxCTFSolves)
	maxSolves = min(maxSolves, scoring.MaxCTFSolves)
	switch s.Function {
	case CTFdLinear:
		return scoring.CTFdLinear(s.Value, s.Minimum, s.Decay, solves)
	case CTFdLogarithmic:
		return scoring.CTFdLogarithmic(s.Value, s.Minimum, s.Decay, solves)
	case RCTF:
		return scoring.RCTF(s.Minimum, s.Value, maxSolves, solves)
	case GZCTF:
		return scoring.GZCTF(s.Value, s.MinRate, s.Difficulty, solves)
	}
	return s.Value
}

// Challenge is one task of a contest.
type Challenge struct {
	Contest  string  `json:"contest"`
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Category string  `json:"category"`
	Scoring  Scoring `json:"scoring"`
	// Order is the position of the challenge in listings (ascending,
	// then id).
	Order int64 `json:"order"`
	// Hidden takes the challenge out of the contest without deleting it
	// (a challenge being prepared, or withdrawn): it is left out of the
	// public listings and of the standings (its solves count for nothing
	// while it is hidden), and attempts on it are refused as on an unknown
	// challenge. Admins still list it.
	Hidden    bool      `json:"hidden"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ValidChallengeID reports whether id matches [a-z0-9][a-z0-9_.:-]{0,63}.
func ValidChallengeID(id string) bool {
	return len(id) <= MaxChallengeLen && podium.ValidBoardID(id)
}

// Normalize validates ch.
func (ch *Challenge) Normalize() error {
	if !ValidChallengeID(ch.ID) {
		return podium.Errorf(podium.ECodeInvalid, "challenge id must match [a-z0-9][a-z0-9_.:-]{0,63}")
	}
	if err := text("name", ch.Name, podium.MaxTitleLen); err != nil {
		return err
	}
	if ch.Name == "" {
		ch.Name = ch.ID
	}
	if err := text("category", ch.Category, MaxCategoryLen); err != nil {
		return err
	}
	if ch.Order < -1e12 || ch.Order > 1e12 {
		return podium.Errorf(podium.ECodeInvalid, "order must be within ±10^12")
	}
	return ch.Scoring.Normalize()
}

// Visible returns the challenges of chals that are not hidden, in their
// order: those the standings count. It returns chals itself when none is
// hidden.
func Visible(chals []Challenge) []Challenge {
	n := 0
	for i := range chals {
		if !chals[i].Hidden {
			n++
		}
	}
	if n == len(chals) {
		return chals
	}
	out := make([]Challenge, 0, n)
	for i := range chals {
		if !chals[i].Hidden {
			out = append(out, chals[i])
		}
	}
	return out
}

// Solve is an accepted correct attempt: the first of a team on a
// challenge. Seq numbers a contest's solves from 1 without gaps, in the
// order they were accepted.
type Solve struct {
	Contest   string    `json:"-"`
	Seq       uint64    `json:"seq"`
	Challenge string    `json:"challenge"`
	Team      string    `json:"team"`
	At        time.Time `json:"at"`
}

// Results of an attempt in the audit log. The last three are refusals:
// the attempt is logged and nothing else changes.
const (
	ResultSolved = "solved" // correct, and the team's first: a solve
	ResultWrong  = "wrong"  // incorrect
	// ResultDuplicate: correct, on a challenge the team has solved.
	ResultDuplicate = "duplicate"
	// ResultUnknownChallenge: the contest has no such challenge.
	ResultUnknownChallenge = "unknown_challenge"
	// ResultClosed: before the contest's start or from its end on.
	ResultClosed = "closed"
)

// Refused reports whether result is a refusal: logged, and nothing else.
func Refused(result string) bool {
	return result == ResultDuplicate || result == ResultUnknownChallenge || result == ResultClosed
}

// Attempt is one row of a contest's append-only audit log: a report from
// a judge that a team tried a challenge. ID numbers the log; Key is the id
// of the API key that reported it ("admin" for the admin key).
type Attempt struct {
	Contest   string    `json:"-"`
	ID        int64     `json:"id"`
	Challenge string    `json:"challenge"`
	Team      string    `json:"team"`
	Result    string    `json:"result"`
	At        time.Time `json:"at"`
	Key       string    `json:"key"`
	Seq       uint64    `json:"seq,omitempty"` // the solve's seq, for ResultSolved
	// Correct is the judge's verdict on the flag (a refused attempt may
	// have either).
	Correct bool `json:"correct"`
	// Idem is the request's Idempotency-Key ("" for none): a retry with
	// the same key id and Idem gets this attempt back.
	Idem string `json:"-"`
}

func text(field, s string, max int) error {
	if len(s) > max {
		return podium.Errorf(podium.ECodeInvalid, "%s is longer than %d bytes", field, max)
	}
	if !utf8.ValidString(s) {
		return podium.Errorf(podium.ECodeInvalid, "%s is not valid UTF-8", field)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return podium.Errorf(podium.ECodeInvalid, "%s must not contain control characters", field)
		}
	}
	return nil
}
