package contest

import (
	"math"
	"slices"
	"time"

	"github.com/podiumhq/podium/rank"
)

// Live is Compute kept up to date one solve at a time: the live standings
// (no cutoff) of a contest whose definition, challenges and hidden teams
// do not change (when one does, build a new Live).
//
// A solve changes the standings in few places. The solver gains an
// award; the challenge's solve count moves, so its value may change, and
// values are retroactive: every solver of that challenge then holds the
// new value (and a blood solver its bonus on it). So Add updates the
// solver and, when the value moved, each solver of the challenge, and
// re-files them in an order-statistic index (package rank) keyed by
// compareStandings' order. Its cost is O((1 + s) log n) for s solvers of a
// challenge whose value moved and n teams, and does not grow with the
// other teams. rCTF is the exception: its values depend on the contest's
// most solved challenge, so a solve that raises that count revalues every
// rCTF challenge, and every solver of those whose value moved.
//
// Live is not safe for concurrent use. It assumes what Compute's callers
// give it: solves added in seq order.
type Live struct {
	c      Contest
	chals  []Challenge
	chIdx  map[string]int
	hidden func(team string) bool
	rctf   []int // the challenges scored by rCTF

	seq       uint64
	maxSolves int64
	chs       []liveChallenge
	teams     []Standing // Rank unused: the index ranks
	byTeam    map[string]int
	nHidden   int
	idx       *rank.Index

	// dirty lists the teams whose place must be filed again after the
	// solve being added; mark[t] == epoch says t is in it.
	dirty []int
	mark  []uint64
	epoch uint64
}

type liveChallenge struct {
	state   ChallengeState
	solvers []awardRef // the challenge's counted solves, hidden teams' too, in seq order
}

// awardRef names one award: the team's index and the award's.
type awardRef struct{ team, award int }

// NewLive returns the live standings of contest c with challenges chals
// after solves (in seq order); hidden says whether a team is hidden, for
// the teams of solves and of every solve added later (nil: none is). It
// costs one Compute and a sort of the teams.
func NewLive(c *Contest, chals []Challenge, solves []Solve, hidden func(team string) bool) *Live {
	if hidden == nil {
		hidden = func(string) bool { return false }
	}
	s := Compute(Input{Contest: c, Challenges: chals, Solves: solves, Hidden: hidden})
	l := &Live{c: *c, chals: chals, chIdx: make(map[string]int, len(chals)), hidden: hidden,
		seq: s.Seq, maxSolves: s.MaxSolves, chs: make([]liveChallenge, len(chals)),
		byTeam: make(map[string]int, len(s.Teams)), idx: rank.New([]bool{true, false, false, false})}
	for i := range chals {
		l.chIdx[chals[i].ID] = i
		if chals[i].Scoring.Function == RCTF {
			l.rctf = append(l.rctf, i)
		}
		l.chs[i].state = s.Challenges[i]
	}
	l.teams = s.Teams
	entries := make([]rank.Entry, len(l.teams))
	for i := range l.teams {
		t := &l.teams[i]
		t.Rank = 0
		l.byTeam[t.Team] = i
		if t.Hidden {
			l.nHidden++
		}
		entries[i] = l.entry(i)
	}
	l.idx.Load(entries)
	l.mark = make([]uint64, len(l.teams))
	// Each challenge's solvers in seq order: the solves are, and a team's
	// awards follow its solves.
	next := make([]int, len(l.teams))
	for _, sv := range solves {
		ci, ok := l.chIdx[sv.Challenge]
		if !ok {
			continue
		}
		ti := l.byTeam[sv.Team]
		l.chs[ci].solvers = append(l.chs[ci].solvers, awardRef{ti, next[ti]})
		next[ti]++
	}
	return l
}

// entry is team ti's place in the index: score descending, then the time
// of its last scoring solve (millisecond, then the nanoseconds within it),
// then that solve's seq; a team without a scoring solve comes after every
// team of its score that has one, by its first solve's seq.
func (l *Live) entry(ti int) rank.Entry {
	t := &l.teams[ti]
	e := rank.Entry{Player: uint32(ti), Hidden: t.Hidden, Seq: t.FirstSeq,
		Keys: [4]int64{t.Score, math.MaxInt64, 0, int64(t.FirstSeq)}}
	if !t.LastAt.IsZero() {
		e.Keys[1], e.Keys[2], e.Keys[3] = t.LastAt.UnixMilli(), int64(t.LastAt.Nanosecond()%1e6), int64(t.LastSeq)
	}
	return e
}

// Add counts solve sv, the next in seq order. A solve of a challenge the
// contest does not have is skipped, as Compute skips it.
func (l *Live) Add(sv Solve) {
	ci, ok := l.chIdx[sv.Challenge]
	if !ok {
		return
	}
	l.epoch++
	l.dirty = l.dirty[:0]
	l.seq = max(l.seq, sv.Seq)
	ti, ok := l.byTeam[sv.Team]
	if !ok {
		ti = len(l.teams)
		l.byTeam[sv.Team] = ti
		h := l.hidden(sv.Team)
		if h {
			l.nHidden++
		}
		l.teams = append(l.teams, Standing{Team: sv.Team, Hidden: h, FirstSeq: sv.Seq})
		l.mark = append(l.mark, 0)
	}
	t := &l.teams[ti]
	a := Award{Challenge: sv.Challenge, Seq: sv.Seq, At: sv.At}
	cs := &l.chs[ci]
	if !t.Hidden {
		cs.state.Solves++
		if cs.state.Solves <= 3 {
			a.Blood = int(cs.state.Solves)
			cs.state.FirstBloods = append(cs.state.FirstBloods, sv.Team)
		}
	}
	t.Awards = append(t.Awards, a)
	t.Solved++
	ref := awardRef{ti, len(t.Awards) - 1}
	cs.solvers = append(cs.solvers, ref)
	l.touch(ti)
	if !t.Hidden {
		if cs.state.Solves > l.maxSolves {
			l.maxSolves = cs.state.Solves
			for _, ri := range l.rctf {
				l.revalue(ri)
			}
		}
		l.revalue(ci)
	}
	l.award(ci, ref, cs.state.Value) // the new award, if revalue did not reach it
	for _, d := range l.dirty {
		l.idx.Put(l.entry(d))
	}
}

// touch adds team ti to the teams to file again.
func (l *Live) touch(ti int) {
	if l.mark[ti] != l.epoch {
		l.mark[ti] = l.epoch
		l.dirty = append(l.dirty, ti)
	}
}

// revalue sets challenge ci's value at its solve count and, if it moved,
// every one of its solvers' awards.
func (l *Live) revalue(ci int) {
	cs := &l.chs[ci]
	v := l.chals[ci].Scoring.ValueAt(cs.state.Solves, l.maxSolves)
	if v == cs.state.Value {
		return
	}
	cs.state.Value = v
	for _, r := range cs.solvers {
		l.award(ci, r, v)
	}
}

// award sets award r of challenge ci at value v, and its team's score
// and last scoring solve.
func (l *Live) award(ci int, r awardRef, v int64) {
	t := &l.teams[r.team]
	a := &t.Awards[r.award]
	p := l.c.BloodPoints(&l.chals[ci].Scoring, v, a.Blood)
	if a.Value == v && a.Points == p && a.Bonus == p-v {
		return
	}
	old := a.Points
	a.Value, a.Points, a.Bonus = v, p, p-v
	t.Score += p - old
	if (old > 0) != (p > 0) {
		// The last scoring solve: the last award (by seq) worth points.
		t.LastAt, t.LastSeq = time.Time{}, 0
		for k := len(t.Awards) - 1; k >= 0; k-- {
			if t.Awards[k].Points > 0 {
				t.LastAt, t.LastSeq = t.Awards[k].At, t.Awards[k].Seq
				break
			}
		}
	}
	l.touch(r.team)
}

// Team returns team's standing (a copy), nil if it has no counted solve.
func (l *Live) Team(team string) *Standing {
	ti, ok := l.byTeam[team]
	if !ok {
		return nil
	}
	out := l.teams[ti]
	out.Awards = slices.Clone(out.Awards)
	if !out.Hidden {
		out.Rank, _ = l.idx.Rank(uint32(ti), false)
	}
	return &out
}

// Challenge returns a challenge's state (a copy), false if the contest
// has no such challenge.
func (l *Live) Challenge(id string) (ChallengeState, bool) {
	ci, ok := l.chIdx[id]
	if !ok {
		return ChallengeState{}, false
	}
	cs := l.chs[ci].state
	cs.FirstBloods = slices.Clone(cs.FirstBloods)
	return cs, true
}

// HiddenAre reports whether the hidden teams among those with a counted
// solve are exactly those of hidden (any order; teams without a counted
// solve are ignored).
func (l *Live) HiddenAre(hidden []string) bool {
	n := 0
	for _, h := range hidden {
		if ti, ok := l.byTeam[h]; ok {
			if !l.teams[ti].Hidden {
				return false
			}
			n++
		}
	}
	return n == l.nHidden
}

// Standings returns the standings as Compute would give them, a copy that
// later solves do not change. It costs O(teams + solves): no sort.
func (l *Live) Standings() *Standings {
	out := &Standings{Seq: l.seq, MaxSolves: l.maxSolves, Challenges: make([]ChallengeState, len(l.chs)),
		index: make(map[string]int, len(l.teams))}
	for i := range l.chs {
		out.Challenges[i] = l.chs[i].state
		out.Challenges[i].FirstBloods = slices.Clone(l.chs[i].state.FirstBloods)
	}
	if len(l.teams) > 0 {
		out.Teams = make([]Standing, 0, len(l.teams))
	}
	rk := 0
	l.idx.Range(1, l.idx.Len(), true, func(_ int, e rank.Entry) bool {
		t := l.teams[e.Player]
		t.Awards = slices.Clone(t.Awards)
		if !t.Hidden {
			rk++
			t.Rank = rk
		}
		out.index[t.Team] = len(out.Teams)
		out.Teams = append(out.Teams, t)
		return true
	})
	return out
}
