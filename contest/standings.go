package contest

import (
	"cmp"
	"slices"
	"time"
)

// Input is what Compute reduces: a contest, its challenges, its solves in
// seq order, which teams are hidden, and an optional cutoff.
type Input struct {
	Contest    *Contest
	Challenges []Challenge
	Solves     []Solve
	// Hidden reports whether a team is hidden; nil means none is.
	Hidden func(team string) bool
	// Cutoff, when not zero, keeps only the solves made before it: the
	// standings as they were at that instant, values included (a frozen
	// board, a snapshot, a point of the score-over-time chart).
	Cutoff time.Time
}

// Award is what one solve earns its team now: the challenge's current
// value, plus a first-blood bonus when the team was among the first three
// visible solvers (Blood 1, 2 or 3; 0 otherwise).
type Award struct {
	Challenge string    `json:"challenge"`
	Seq       uint64    `json:"seq"`
	At        time.Time `json:"at"`
	Blood     int       `json:"blood,omitempty"`
	Value     int64     `json:"value"`
	Bonus     int64     `json:"bonus"`
	Points    int64     `json:"points"`
}

// Standing is one team's line. Rank is 1-based and unique among visible
// teams, 0 for a hidden team. LastAt and LastSeq are those of the team's
// last scoring solve (one that earns points now): zero-point solves do
// not move a team's tie-break.
type Standing struct {
	Rank    int       `json:"rank"`
	Team    string    `json:"team"`
	Hidden  bool      `json:"hidden,omitempty"`
	Score   int64     `json:"score"`
	Solved  int       `json:"solved"`
	LastAt  time.Time `json:"last_solve_at"` // zero: no scoring solve
	LastSeq uint64    `json:"-"`
	// FirstSeq is the seq of the team's first solve, the tie-break of
	// teams that score nothing.
	FirstSeq uint64  `json:"-"`
	Awards   []Award `json:"solves"`
}

// ChallengeState is a challenge as the standings see it: its visible
// solve count, its current value, and its first visible solvers (up to
// three, in order).
type ChallengeState struct {
	ID          string   `json:"id"`
	Solves      int64    `json:"solves"`
	Value       int64    `json:"value"`
	FirstBloods []string `json:"first_bloods"`
}

// Standings is the result of Compute. Teams holds every team with at least
// one counted solve, hidden ones included, in standings order; Challenges
// follows the order of Input.Challenges.
type Standings struct {
	// Seq is the highest seq counted (0 if none).
	Seq        uint64
	Cutoff     time.Time
	MaxSolves  int64
	Teams      []Standing
	Challenges []ChallengeState
	index      map[string]int
}

// Team returns team's standing, nil if it has no counted solve.
func (s *Standings) Team(team string) *Standing {
	if i, ok := s.index[team]; ok {
		return &s.Teams[i]
	}
	return nil
}

// Visible returns the number of visible (ranked) teams.
func (s *Standings) Visible() int {
	n := 0
	for i := range s.Teams {
		if !s.Teams[i].Hidden {
			n++
		}
	}
	return n
}

// Compute reduces in to standings. It is a pure function of in:
//
//   - a solve counts if it is before the cutoff (when there is one);
//   - a challenge's solve count is its counted solves by visible teams,
//     and maxSolves (rCTF's parameter) the highest of them;
//   - a challenge's value is its function at its solve count: every solver
//     holds the current value (retroactive);
//   - the first three visible solvers of a challenge (by seq) earn the
//     contest's first-blood percents of the current value, under its
//     blood rule (Contest.BloodPoints);
//   - teams are ordered by score descending, then the time of their last
//     scoring solve ascending, then its seq; teams that score nothing come
//     last, by their first solve's seq. Hidden teams are placed by the same
//     rule but take no rank, count no solve and take no first blood.
func Compute(in Input) *Standings {
	out := &Standings{Cutoff: in.Cutoff, index: map[string]int{}}
	chIdx := make(map[string]int, len(in.Challenges))
	out.Challenges = make([]ChallengeState, len(in.Challenges))
	for i := range in.Challenges {
		chIdx[in.Challenges[i].ID] = i
		out.Challenges[i] = ChallengeState{ID: in.Challenges[i].ID, FirstBloods: []string{}}
	}
	hidden := in.Hidden
	if hidden == nil {
		hidden = func(string) bool { return false }
	}
	for _, s := range in.Solves {
		if !in.Cutoff.IsZero() && !s.At.Before(in.Cutoff) {
			continue
		}
		ci, ok := chIdx[s.Challenge]
		if !ok {
			continue
		}
		out.Seq = max(out.Seq, s.Seq)
		ti, ok := out.index[s.Team]
		if !ok {
			ti = len(out.Teams)
			out.index[s.Team] = ti
			out.Teams = append(out.Teams, Standing{Team: s.Team, Hidden: hidden(s.Team), FirstSeq: s.Seq})
		}
		t := &out.Teams[ti]
		a := Award{Challenge: s.Challenge, Seq: s.Seq, At: s.At}
		if !t.Hidden {
			cs := &out.Challenges[ci]
			cs.Solves++
			if cs.Solves <= 3 {
				a.Blood = int(cs.Solves)
				cs.FirstBloods = append(cs.FirstBloods, s.Team)
			}
		}
		t.Awards = append(t.Awards, a)
		t.Solved++
	}
	for i := range out.Challenges {
		out.MaxSolves = max(out.MaxSolves, out.Challenges[i].Solves)
	}
	for i := range out.Challenges {
		cs := &out.Challenges[i]
		cs.Value = in.Challenges[i].Scoring.ValueAt(cs.Solves, out.MaxSolves)
	}
	for ti := range out.Teams {
		t := &out.Teams[ti]
		for k := range t.Awards {
			a := &t.Awards[k]
			ci := chIdx[a.Challenge]
			a.Value = out.Challenges[ci].Value
			a.Points = in.Contest.BloodPoints(&in.Challenges[ci].Scoring, a.Value, a.Blood)
			a.Bonus = a.Points - a.Value
			t.Score += a.Points
			if a.Points > 0 {
				t.LastAt, t.LastSeq = a.At, a.Seq
			}
		}
	}
	slices.SortFunc(out.Teams, compareStandings)
	rank := 0
	for i := range out.Teams {
		t := &out.Teams[i]
		out.index[t.Team] = i
		if !t.Hidden {
			rank++
			t.Rank = rank
		}
	}
	return out
}

// compareStandings orders two teams' standings (see Compute).
func compareStandings(a, b Standing) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	switch {
	case !a.LastAt.IsZero() && !b.LastAt.IsZero():
		if c := a.LastAt.Compare(b.LastAt); c != 0 {
			return c
		}
		return cmp.Compare(a.LastSeq, b.LastSeq)
	case !a.LastAt.IsZero():
		return -1
	case !b.LastAt.IsZero():
		return 1
	}
	return cmp.Compare(a.FirstSeq, b.FirstSeq)
}
