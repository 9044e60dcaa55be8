package contest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// randomLiveInput is randomInput with what Live must get right besides:
// times out of seq order (nodes' clocks differ), equal times, times that
// differ below a millisecond, challenges whose value falls to 0 (the
// tie-break moves back), rCTF's contest-wide parameter, every blood rule.
func randomLiveInput(r *rand.Rand) Input {
	in := randomInput(r)
	for i := range in.Challenges {
		if r.IntN(4) == 0 {
			in.Challenges[i].Scoring = Scoring{Function: CTFdLinear, Value: 300, Minimum: 0, Decay: 100 + r.Int64N(3)*50}
		}
	}
	base := t0
	for i := range in.Solves {
		switch r.IntN(4) {
		case 0: // same time as the previous solve
			if i > 0 {
				in.Solves[i].At = in.Solves[i-1].At
				continue
			}
		case 1: // earlier than the previous one
			base = base.Add(-time.Duration(r.IntN(5000)) * time.Millisecond)
		default:
			base = base.Add(time.Duration(r.IntN(3000)) * time.Millisecond)
		}
		in.Solves[i].At = base.Add(time.Duration(r.IntN(3)) * 250 * time.Microsecond)
	}
	return in
}

// TestLiveMatchesCompute (issue 17 item 10): the incremental standings
// equal a full recomputation after every solve: every team's score,
// awards, tie-break and rank, every challenge's state, the order.
func TestLiveMatchesCompute(t *testing.T) {
	r := rand.New(rand.NewPCG(seed(t), 0))
	for iter := range 500 {
		in := randomLiveInput(r)
		// Start from a prefix built whole, then add the rest one by one.
		k := 0
		if len(in.Solves) > 0 {
			k = r.IntN(len(in.Solves) + 1)
		}
		l := NewLive(in.Contest, in.Challenges, in.Solves[:k], in.Hidden)
		check := func(n int) {
			p := in
			p.Solves = in.Solves[:n]
			want := Compute(p)
			got := l.Standings()
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("iter %d after %d solves (%d built whole): live %s, computed %s\nlive %+v\ncomputed %+v",
					iter, n, k, ranking(got), ranking(want), got, want)
			}
			for i := range want.Teams {
				w := &want.Teams[i]
				if g := l.Team(w.Team); !reflect.DeepEqual(g, w) {
					t.Fatalf("iter %d after %d solves: Team(%s) = %+v, want %+v", iter, n, w.Team, g, w)
				}
			}
			for _, cs := range want.Challenges {
				if g, ok := l.Challenge(cs.ID); !ok || !reflect.DeepEqual(g, cs) {
					t.Fatalf("iter %d after %d solves: Challenge(%s) = %+v, want %+v", iter, n, cs.ID, g, cs)
				}
			}
		}
		check(k)
		for n := k; n < len(in.Solves); n++ {
			l.Add(in.Solves[n])
			check(n + 1)
		}
		var hidden []string
		for _, tm := range teamsOf(in) {
			if in.Hidden(tm) {
				hidden = append(hidden, tm)
			}
		}
		if !l.HiddenAre(append(hidden, "no-solve")) {
			t.Fatalf("iter %d: HiddenAre(%v) = false", iter, hidden)
		}
		if v := pickVisible(in); v != "" && l.HiddenAre(append(hidden, v)) {
			t.Fatalf("iter %d: HiddenAre(%v + visible %s) = true", iter, hidden, v)
		}
		if len(hidden) > 0 && l.HiddenAre(hidden[1:]) {
			t.Fatalf("iter %d: HiddenAre(%v) without %s = true", iter, hidden, hidden[0])
		}
	}
}

// teamsOf lists the teams with a solve.
func teamsOf(in Input) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in.Solves {
		if !seen[s.Team] {
			seen[s.Team] = true
			out = append(out, s.Team)
		}
	}
	return out
}

// pickVisible returns a visible team with a solve, "" if none.
func pickVisible(in Input) string {
	for _, tm := range teamsOf(in) {
		if !in.Hidden(tm) {
			return tm
		}
	}
	return ""
}

// TestLiveUnknownChallenge: a solve of a challenge the contest does not
// have counts for nothing, as in Compute.
func TestLiveUnknownChallenge(t *testing.T) {
	c := &Contest{ID: "c", Start: t0, End: at(100)}
	chals := []Challenge{{ID: "a", Scoring: Scoring{Value: 100}}}
	l := NewLive(c, chals, nil, nil)
	l.Add(Solve{Seq: 1, Team: "x", Challenge: "gone", At: at(1)})
	l.Add(Solve{Seq: 2, Team: "y", Challenge: "a", At: at(2)})
	in := Input{Contest: c, Challenges: chals, Solves: []Solve{{Seq: 1, Team: "x", Challenge: "gone", At: at(1)}, {Seq: 2, Team: "y", Challenge: "a", At: at(2)}}}
	if got, want := l.Standings(), Compute(in); !reflect.DeepEqual(got, want) {
		t.Fatalf("live %+v, computed %+v", got, want)
	}
	if l.Team("x") != nil {
		t.Fatal("x has a standing")
	}
}

// benchLive is a contest of n teams on 40 challenges (GZCTF's function,
// blood bonuses), each team with 5 solves, and a challenge "hot" (one
// point less a solve) solved by the first 200 teams; it returns the Live
// and the next seq.
func benchLive(b *testing.B, n int) (*Live, uint64) {
	c := &Contest{ID: "c", Start: t0, End: at(100000), FirstBlood: [3]int64{5, 3, 1}}
	var chals []Challenge
	for i := range 40 {
		chals = append(chals, Challenge{ID: fmt.Sprintf("ch%d", i), Scoring: Scoring{Function: GZCTF, Value: 1000, MinRate: 0.25, Difficulty: 3000}})
	}
	chals = append(chals, Challenge{ID: "hot", Scoring: Scoring{Function: CTFdLinear, Value: 1_000_000, Decay: 1}})
	r := rand.New(rand.NewPCG(1, 2))
	var ss []Solve
	add := func(team, ch string) {
		ss = append(ss, Solve{Seq: uint64(len(ss) + 1), Team: team, Challenge: ch, At: t0.Add(time.Duration(len(ss)) * time.Millisecond)})
	}
	for tm := range n {
		for _, ch := range r.Perm(40)[:5] {
			add(fmt.Sprintf("t%d", tm), fmt.Sprintf("ch%d", ch))
		}
	}
	for tm := range 200 {
		add(fmt.Sprintf("t%d", tm), "hot")
	}
	return NewLive(c, chals, ss, nil), uint64(len(ss) + 1)
}

// BenchmarkLiveSolve: one solve of "hot" (its value moves with every
// solve, so each of its solvers is filed again), by a team that had not
// solved it, at 2,000 and 20,000 teams (ctf's BenchmarkSolve is the same
// through the service).
func BenchmarkLiveSolve(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("teams=%d", n), func(b *testing.B) {
			l, seq := benchLive(b, n)
			at := t0.Add(time.Hour)
			next := 200
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if next == n { // every team solved it: start again on a fresh contest
					b.StopTimer()
					l, seq = benchLive(b, n)
					next = 200
					b.StartTimer()
				}
				l.Add(Solve{Seq: seq, Team: fmt.Sprintf("t%d", next), Challenge: "hot", At: at})
				seq++
				next++
			}
		})
	}
}
