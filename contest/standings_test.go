package contest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/podiumhq/podium/scoring"
)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

type solveSpec struct {
	team, chal string
	min        int
}

func solves(specs ...solveSpec) []Solve {
	out := make([]Solve, len(specs))
	for i, s := range specs {
		out[i] = Solve{Seq: uint64(i + 1), Team: s.team, Challenge: s.chal, At: at(s.min)}
	}
	return out
}

func ranking(s *Standings) string {
	var out []string
	for _, t := range s.Teams {
		out = append(out, fmt.Sprintf("%d:%s:%d", t.Rank, t.Team, t.Score))
	}
	return fmt.Sprint(out)
}

// A hand-computed contest: a CTFd parabolic challenge (500/100/10), a
// static one, first bloods of 10/5/3 percent, a hidden team.
func TestComputeScenario(t *testing.T) {
	c := &Contest{ID: "c", Start: t0, End: at(120), FirstBlood: [3]int64{10, 5, 3}}
	chals := []Challenge{
		{ID: "web", Scoring: Scoring{Function: CTFdLogarithmic, Value: 500, Minimum: 100, Decay: 10}},
		{ID: "pwn", Scoring: Scoring{Value: 300}},
	}
	in := Input{Contest: c, Challenges: chals, Hidden: func(t string) bool { return t == "staff" },
		Solves: solves(
			solveSpec{"staff", "web", 1}, // hidden: no count, no blood
			solveSpec{"a", "web", 5},
			solveSpec{"b", "web", 6},
			solveSpec{"c", "pwn", 7},
			solveSpec{"c", "web", 8},
			solveSpec{"b", "pwn", 9},
		)}
	s := Compute(in)
	// web: 3 visible solves -> 484; bonuses 48.4->48, 24.2->24, 14.52->15.
	// pwn: 300; bonuses 30, 15.
	// a: 484+48 = 532; b: 484+24 + 300+15 = 823; c: 300+30 + 484+15 = 829.
	if got, want := ranking(s), "[1:c:829 2:b:823 3:a:532 0:staff:484]"; got != want {
		t.Fatalf("standings %s, want %s", got, want)
	}
	if got := s.Challenges[0]; got.Solves != 3 || got.Value != 484 || !slices.Equal(got.FirstBloods, []string{"a", "b", "c"}) {
		t.Errorf("web %+v", got)
	}
	if s.Seq != 6 || s.MaxSolves != 3 {
		t.Errorf("seq %d maxSolves %d", s.Seq, s.MaxSolves)
	}
	if b := s.Team("b"); b == nil || !b.LastAt.Equal(at(9)) || b.Solved != 2 {
		t.Errorf("b %+v", b)
	}
	// Frozen at minute 8: web has 2 visible solves (496), pwn 1.
	in.Cutoff = at(8)
	f := Compute(in)
	// a: 496+50 (49.6 -> 50) = 546; b: 496+25 (24.8) = 521; c: 300+30 = 330.
	if got, want := ranking(f), "[1:a:546 2:b:521 0:staff:496 3:c:330]"; got != want {
		t.Fatalf("frozen standings %s, want %s", got, want)
	}
}

// Ties: the same score goes to the team whose last scoring solve came
// first; a zero-point solve after it does not move it back.
func TestComputeTieBreak(t *testing.T) {
	c := &Contest{ID: "c", Start: t0, End: at(120)}
	chals := []Challenge{{ID: "a", Scoring: Scoring{Value: 100}}, {ID: "b", Scoring: Scoring{Value: 100}},
		{ID: "zero", Scoring: Scoring{Value: 0}}}
	s := Compute(Input{Contest: c, Challenges: chals, Solves: solves(
		solveSpec{"x", "a", 1},
		solveSpec{"y", "b", 2},
		solveSpec{"x", "zero", 3},
		solveSpec{"z", "zero", 4},
		solveSpec{"w", "zero", 4},
	)})
	if got, want := ranking(s), "[1:x:100 2:y:100 3:z:0 4:w:0]"; got != want {
		t.Fatalf("standings %s, want %s", got, want)
	}
	if x := s.Team("x"); !x.LastAt.Equal(at(1)) || x.LastSeq != 1 {
		t.Errorf("x's tie-break moved: %v %d", x.LastAt, x.LastSeq)
	}
	if z := s.Team("z"); !z.LastAt.IsZero() {
		t.Errorf("z has a last scoring solve: %v", z.LastAt)
	}
	// Same time: the earlier seq wins.
	s = Compute(Input{Contest: c, Challenges: chals, Solves: solves(
		solveSpec{"p", "a", 1}, solveSpec{"q", "b", 1})})
	if got, want := ranking(s), "[1:p:100 2:q:100]"; got != want {
		t.Fatalf("standings %s, want %s", got, want)
	}
}

// Values are retroactive: a later solve lowers what earlier solvers hold,
// and a solve that drops to zero points stops counting as the tie-break.
func TestComputeRetroactive(t *testing.T) {
	c := &Contest{ID: "c", Start: t0, End: at(120)}
	chals := []Challenge{
		{ID: "lin", Scoring: Scoring{Function: CTFdLinear, Value: 200, Minimum: 0, Decay: 100}},
		{ID: "s", Scoring: Scoring{Value: 50}},
	}
	s := Compute(Input{Contest: c, Challenges: chals, Solves: solves(
		solveSpec{"a", "s", 1},
		solveSpec{"a", "lin", 2},
		solveSpec{"b", "lin", 3},
		solveSpec{"c", "lin", 4},
	)})
	// lin has 3 solves: 200 - 100*2 = 0.
	if got, want := ranking(s), "[1:a:50 2:b:0 3:c:0]"; got != want {
		t.Fatalf("standings %s, want %s", got, want)
	}
	if a := s.Team("a"); !a.LastAt.Equal(at(1)) {
		t.Errorf("a's last scoring solve %v, want minute 1 (lin is worth 0 now)", a.LastAt)
	}
}

// naiveScores recomputes each visible team's score another way: per
// challenge, the visible solvers in seq order.
func naiveScores(in Input) map[string]int64 {
	counts := map[string]int64{}
	var maxSolves int64
	var kept []Solve
	for _, s := range in.Solves {
		if !in.Cutoff.IsZero() && !s.At.Before(in.Cutoff) {
			continue
		}
		kept = append(kept, s)
		if !in.Hidden(s.Team) {
			counts[s.Challenge]++
			maxSolves = max(maxSolves, counts[s.Challenge])
		}
	}
	scores := map[string]int64{}
	for _, ch := range in.Challenges {
		v := ch.Scoring.ValueAt(counts[ch.ID], maxSolves)
		pos := 0
		for _, s := range kept {
			if s.Challenge != ch.ID {
				continue
			}
			p := v
			if !in.Hidden(s.Team) {
				pos++
				if pos <= 3 {
					gz := in.Contest.BloodRule == BloodGZCTF || (in.Contest.BloodRule != BloodPercent && ch.Scoring.Function == GZCTF)
					switch {
					case !gz:
						p += scoring.Bonus(v, in.Contest.FirstBlood[pos-1])
					case in.Contest.FirstBlood != [3]int64{}:
						p = scoring.GZCTFBlood(v, 10*in.Contest.FirstBlood[pos-1])
					}
				}
			}
			scores[s.Team] += p
		}
	}
	return scores
}

func seed(t *testing.T) uint64 {
	s := uint64(time.Now().UnixNano())
	if v := os.Getenv("SEED"); v != "" {
		var err error
		if s, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("SEED: %v", err)
		}
	}
	t.Logf("SEED=%d", s)
	return s
}

func randomInput(r *rand.Rand) Input {
	c := &Contest{ID: "c", Start: t0, End: at(1000), FirstBlood: [3]int64{r.Int64N(101), r.Int64N(101), r.Int64N(101)},
		BloodRule: []string{"", BloodAuto, BloodPercent, BloodGZCTF}[r.IntN(4)]}
	if r.IntN(4) == 0 {
		c.FirstBlood = [3]int64{}
	}
	var chals []Challenge
	for i := range 1 + r.IntN(8) {
		var sc Scoring
		switch r.IntN(5) {
		case 0:
			sc = Scoring{Value: r.Int64N(4) * 50}
		case 1:
			sc = Scoring{Function: CTFdLinear, Value: 500, Minimum: r.Int64N(200), Decay: r.Int64N(100)}
		case 2:
			sc = Scoring{Function: CTFdLogarithmic, Value: 500, Minimum: r.Int64N(200), Decay: r.Int64N(20)}
		case 3:
			sc = Scoring{Function: RCTF, Value: 500, Minimum: r.Int64N(200)}
		case 4:
			sc = Scoring{Function: GZCTF, Value: 1000, MinRate: r.Float64(), Difficulty: 0.5 + r.Float64()*10}
		}
		chals = append(chals, Challenge{ID: fmt.Sprintf("ch%d", i), Scoring: sc})
	}
	teams := 1 + r.IntN(12)
	hidden := map[string]bool{}
	for i := range teams {
		hidden[fmt.Sprintf("t%d", i)] = r.IntN(5) == 0
	}
	done := map[[2]string]bool{}
	var ss []Solve
	min := 0
	for range r.IntN(60) {
		team, ch := fmt.Sprintf("t%d", r.IntN(teams)), chals[r.IntN(len(chals))].ID
		if done[[2]string{team, ch}] {
			continue
		}
		done[[2]string{team, ch}] = true
		min += r.IntN(3) // equal times happen
		ss = append(ss, Solve{Seq: uint64(len(ss) + 1), Team: team, Challenge: ch, At: at(min)})
	}
	return Input{Contest: c, Challenges: chals, Solves: ss, Hidden: func(t string) bool { return hidden[t] }}
}

func TestComputeProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(seed(t), 0))
	for iter := range 2000 {
		in := randomInput(r)
		if len(in.Solves) > 0 && r.IntN(2) == 0 {
			in.Cutoff = in.Solves[r.IntN(len(in.Solves))].At
		}
		s := Compute(in)
		naive := naiveScores(in)
		rank := 0
		for i, st := range s.Teams {
			if st.Score != naive[st.Team] {
				t.Fatalf("iter %d: %s scores %d, naive %d", iter, st.Team, st.Score, naive[st.Team])
			}
			if st.Hidden != in.Hidden(st.Team) {
				t.Fatalf("iter %d: %s hidden=%v", iter, st.Team, st.Hidden)
			}
			if !st.Hidden {
				rank++
				if st.Rank != rank {
					t.Fatalf("iter %d: %s rank %d, want %d", iter, st.Team, st.Rank, rank)
				}
			} else if st.Rank != 0 {
				t.Fatalf("iter %d: hidden %s ranked %d", iter, st.Team, st.Rank)
			}
			if i > 0 && compareStandings(s.Teams[i-1], st) >= 0 {
				t.Fatalf("iter %d: %s and %s out of order", iter, s.Teams[i-1].Team, st.Team)
			}
			if s.Team(st.Team) != &s.Teams[i] {
				t.Fatalf("iter %d: index of %s is stale", iter, st.Team)
			}
		}
		// A cutoff is the same as the prefix of solves before it.
		if !in.Cutoff.IsZero() {
			var prefix []Solve
			for _, so := range in.Solves {
				if so.At.Before(in.Cutoff) {
					prefix = append(prefix, so)
				}
			}
			p := in
			p.Solves, p.Cutoff = prefix, time.Time{}
			if a, b := ranking(s), ranking(Compute(p)); a != b {
				t.Fatalf("iter %d: cutoff %s, prefix %s", iter, a, b)
			}
		}
		// Hiding one more team changes nothing but... the visible solve
		// counts; so instead: the visible teams' order never depends on a
		// hidden team's solves.
		var visibleOnly []Solve
		for _, so := range in.Solves {
			if !in.Hidden(so.Team) {
				visibleOnly = append(visibleOnly, so)
			}
		}
		v := in
		v.Solves = visibleOnly
		if a, b := visibleRanking(s), visibleRanking(Compute(v)); a != b {
			t.Fatalf("iter %d: hidden solves moved the visible ranking: %s vs %s", iter, a, b)
		}
	}
}

func visibleRanking(s *Standings) string {
	var out []string
	for _, t := range s.Teams {
		if !t.Hidden {
			out = append(out, fmt.Sprintf("%d:%s:%d", t.Rank, t.Team, t.Score))
		}
	}
	return fmt.Sprint(out)
}

func BenchmarkCompute(b *testing.B) {
	// 500 teams, 40 challenges, 10000 solves.
	c := &Contest{ID: "c", Start: t0, End: at(100000), FirstBlood: [3]int64{10, 5, 3}}
	var chals []Challenge
	for i := range 40 {
		chals = append(chals, Challenge{ID: fmt.Sprintf("ch%d", i), Scoring: Scoring{Function: RCTF, Value: 500, Minimum: 100}})
	}
	r := rand.New(rand.NewPCG(1, 2))
	var ss []Solve
	done := map[[2]int]bool{}
	for len(ss) < 10000 {
		tm, ch := r.IntN(500), r.IntN(40)
		if done[[2]int{tm, ch}] {
			continue
		}
		done[[2]int{tm, ch}] = true
		ss = append(ss, Solve{Seq: uint64(len(ss) + 1), Team: fmt.Sprintf("t%d", tm), Challenge: chals[ch].ID, At: at(len(ss))})
	}
	in := Input{Contest: c, Challenges: chals, Solves: ss}
	b.ResetTimer()
	for range b.N {
		Compute(in)
	}
}

// TestBloodRules (issue 17 item 4): GZCTF's blood rule is the default on
// challenges scored by the gzctf function and can be chosen for all or
// none; a first blood at 5% on a value of 30 earns 31 under it and 32
// under the percent rule.
func TestBloodRules(t *testing.T) {
	chals := []Challenge{
		{ID: "gz", Scoring: Scoring{Function: GZCTF, Value: 30, MinRate: 0.5, Difficulty: 3}},
		{ID: "st", Scoring: Scoring{Value: 30}},
		{ID: "big", Scoring: Scoring{Function: GZCTF, Value: 1<<24 + 1, MinRate: 0.5, Difficulty: 3}},
	}
	ss := solves(solveSpec{"a", "gz", 1}, solveSpec{"a", "st", 2}, solveSpec{"b", "big", 3})
	for _, c := range []struct {
		rule       string
		blood      [3]int64
		gz, st, bg int64 // points of the first blood of each
	}{
		// big: 16777217 is 16777216 in float32, times 1.05f is 17616076;
		// the exact 5% is 838860.85, so 838861 more.
		{"", [3]int64{5, 3, 1}, 31, 32, 17616076},
		{BloodAuto, [3]int64{5, 3, 1}, 31, 32, 17616076},
		{BloodPercent, [3]int64{5, 3, 1}, 32, 32, 17616078},
		{BloodGZCTF, [3]int64{5, 3, 1}, 31, 31, 17616076},
		{BloodGZCTF, [3]int64{}, 30, 30, 1<<24 + 1},      // GZCTF's NoBonus: the value as it is
		{BloodGZCTF, [3]int64{0, 5, 0}, 30, 30, 1 << 24}, // a factor of 1 in float32
	} {
		ct := &Contest{ID: "c", Start: t0, End: at(100), FirstBlood: c.blood, BloodRule: c.rule}
		s := Compute(Input{Contest: ct, Challenges: chals, Solves: ss})
		got := map[string]Award{}
		for _, tm := range s.Teams {
			for _, a := range tm.Awards {
				got[a.Challenge] = a
			}
		}
		if got["gz"].Points != c.gz || got["st"].Points != c.st || got["big"].Points != c.bg {
			t.Errorf("rule %q %v: gz %d, st %d, big %d; want %d, %d, %d", c.rule, c.blood,
				got["gz"].Points, got["st"].Points, got["big"].Points, c.gz, c.st, c.bg)
		}
		for _, a := range got {
			if a.Value+a.Bonus != a.Points {
				t.Errorf("rule %q: award %+v: value + bonus != points", c.rule, a)
			}
		}
	}
}
