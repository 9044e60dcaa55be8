package ctf

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
)

func seed(t *testing.T) uint64 {
	s := uint64(time.Now().UnixNano())
	if v := os.Getenv("SEED"); v != "" {
		var err error
		if s, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("SEED: %v", err)
		}
	}
	t.Logf("SEED=%d (replay with SEED=%d go test ./ctf -run %s)", s, s, t.Name())
	return s
}

// randomScoring is one of the value functions with random parameters.
func randomScoring(r *rand.Rand) contest.Scoring {
	switch r.IntN(5) {
	case 0:
		return contest.Scoring{Value: r.Int64N(4) * 50}
	case 1:
		return contest.Scoring{Function: contest.CTFdLinear, Value: 300, Minimum: r.Int64N(2) * 100, Decay: 50 + r.Int64N(100)}
	case 2:
		return contest.Scoring{Function: contest.CTFdLogarithmic, Value: 500, Minimum: r.Int64N(200), Decay: 1 + r.Int64N(10)}
	case 3:
		return contest.Scoring{Function: contest.RCTF, Value: 500, Minimum: r.Int64N(200)}
	}
	return contest.Scoring{Function: contest.GZCTF, Value: 30 + r.Int64N(1000), MinRate: r.Float64(), Difficulty: 0.5 + r.Float64()*5}
}

// TestLiveStandingsProperty (issue 17 item 10): the service keeps the live
// standings incrementally; after every step of a random contest (correct,
// wrong and duplicate attempts at random times, teams hidden and shown,
// challenges rescored or hidden, the blood rule changed, a freeze) the live view,
// the public view and the standing an attempt answers equal a full
// recomputation (contest.Compute) over the service's solves with the
// hidden teams of now. With and without the players' version.
func TestLiveStandingsProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(seed(t), 0))
	for iter := range 60 {
		versioned := iter%2 == 0
		clk, pl := &clock{t: t0}, &players{hidden: map[string]bool{}}
		var who Players = pl
		if !versioned {
			who = versionless{pl}
		}
		s := New(Config{Store: newMemStore(), Players: who, Now: clk.now, Poll: -1})
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		def := &contest.Contest{ID: "ctf", Start: t0, End: t0.Add(10 * time.Hour),
			FirstBlood: [3]int64{r.Int64N(20), r.Int64N(20), r.Int64N(20)},
			BloodRule:  []string{contest.BloodAuto, contest.BloodPercent, contest.BloodGZCTF}[r.IntN(3)]}
		if r.IntN(2) == 0 {
			f := t0.Add(time.Duration(r.IntN(60)) * time.Second)
			def.Freeze = &f
		}
		if _, _, err := s.PutContest(ctx, def); err != nil {
			t.Fatal(err)
		}
		nch := 1 + r.IntN(6)
		for i := range nch {
			if _, _, err := s.PutChallenge(ctx, &contest.Challenge{Contest: "ctf", ID: fmt.Sprintf("c%d", i), Scoring: randomScoring(r)}); err != nil {
				t.Fatal(err)
			}
		}
		nteams := 1 + r.IntN(15)
		for step := range 120 {
			clk.set(clk.now().Add(time.Duration(r.IntN(1500)) * time.Millisecond))
			team, ch := fmt.Sprintf("t%d", r.IntN(nteams)), fmt.Sprintf("c%d", r.IntN(nch))
			var out *Outcome
			switch k := r.IntN(20); {
			case k < 14:
				o, err := s.Attempt(ctx, "ctf", team, ch, r.IntN(6) != 0, "judge", "")
				if err == nil {
					out = &o
				}
			case k < 17:
				pl.setHidden(team, !pl.hidden[team])
			case k < 19:
				// Rescored, and now and then hidden (out of the standings,
				// its solves with it) or shown again (issue 18).
				if _, _, err := s.PutChallenge(ctx, &contest.Challenge{Contest: "ctf", ID: ch, Scoring: randomScoring(r), Hidden: r.IntN(4) == 0}); err != nil {
					t.Fatal(err)
				}
			default:
				d := s.mustContest(t, "ctf")
				d.BloodRule = []string{contest.BloodAuto, contest.BloodPercent, contest.BloodGZCTF}[r.IntN(3)]
				if _, _, err := s.PutContest(ctx, &d); err != nil {
					t.Fatal(err)
				}
			}
			if r.IntN(3) == 0 && out == nil {
				continue // not every step reads: solves pile up between reads
			}
			st, _ := s.get("ctf")
			st.mu.Lock()
			cdef, chals, solves := st.def, contest.Visible(st.challenges), slices.Clone(st.solves)
			st.mu.Unlock()
			hidden := func(t string) bool { return pl.hidden[t] }
			want := contest.Compute(contest.Input{Contest: &cdef, Challenges: chals, Solves: solves, Hidden: hidden})
			where := fmt.Sprintf("iter %d step %d (versioned %v)", iter, step, versioned)
			if out != nil && out.Attempt.Result == contest.ResultSolved {
				if w := want.Team(team); !reflect.DeepEqual(out.Standing, w) {
					t.Fatalf("%s: the attempt's standing %+v, recomputed %+v", where, out.Standing, w)
				}
				for _, cs := range want.Challenges {
					if cs.ID == ch && (out.Value != cs.Value || out.Solves != cs.Solves) {
						t.Fatalf("%s: the attempt's challenge %d/%d, recomputed %d/%d", where, out.Value, out.Solves, cs.Value, cs.Solves)
					}
				}
			}
			b, err := s.Standings("ctf", Live)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(b.Standings, want) {
				t.Fatalf("%s: live view\n%+v\nrecomputed\n%+v", where, b.Standings, want)
			}
			pub, err := s.Standings("ctf", Public)
			if err != nil {
				t.Fatal(err)
			}
			wantPub := contest.Compute(contest.Input{Contest: &cdef, Challenges: chals, Solves: solves, Hidden: hidden, Cutoff: cdef.FrozenAt(clk.now())})
			if !reflect.DeepEqual(pub.Standings, wantPub) {
				t.Fatalf("%s: public view\n%+v\nrecomputed\n%+v", where, pub.Standings, wantPub)
			}
		}
		s.Close()
	}
}

// countingPlayers counts the lookups of players.
type countingPlayers struct {
	*players
	n atomic.Int64
}

func (c *countingPlayers) Player(id string) (podium.Player, error) {
	c.n.Add(1)
	return c.players.Player(id)
}

// TestSolveCostIndependentOfTeams (issue 17 item 10): a solve neither
// looks up every team (their hidden flags) nor recomputes the standings:
// its player lookups and its allocations are the same at 200 and at 2,000
// teams (before, a solve looked up every team and allocated per team).
func TestSolveCostIndependentOfTeams(t *testing.T) {
	measure := func(n int) (lookups int64, allocs float64) {
		clk := &clock{t: t0.Add(time.Minute)}
		pl := &countingPlayers{players: &players{hidden: map[string]bool{}}}
		st := newMemStore()
		s := New(Config{Store: st, Players: pl, Now: clk.now, Poll: -1})
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, _, err := s.PutContest(ctx, &contest.Contest{ID: "ctf", Start: t0, End: t0.Add(time.Hour), FirstBlood: [3]int64{5, 3, 1}}); err != nil {
			t.Fatal(err)
		}
		for _, ch := range []contest.Challenge{
			{Contest: "ctf", ID: "a", Scoring: contest.Scoring{Function: contest.GZCTF, Value: 1000, MinRate: 0.25, Difficulty: 10}},
			{Contest: "ctf", ID: "hot", Scoring: contest.Scoring{Function: contest.CTFdLinear, Value: 100000, Decay: 1}},
		} {
			if _, _, err := s.PutChallenge(ctx, &ch); err != nil {
				t.Fatal(err)
			}
		}
		var ss []contest.Solve
		for i := range n {
			ss = append(ss, contest.Solve{Contest: "ctf", Team: fmt.Sprintf("t%d", i), Challenge: "a", At: t0.Add(time.Duration(i) * time.Millisecond)})
		}
		for i := range 20 {
			ss = append(ss, contest.Solve{Contest: "ctf", Team: fmt.Sprintf("t%d", i), Challenge: "hot", At: t0.Add(time.Duration(n+i) * time.Millisecond)})
		}
		st.load("ctf", ss)
		if err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Standings("ctf", Live); err != nil {
			t.Fatal(err)
		}
		next := 20
		solve := func() {
			out, err := s.Attempt(ctx, "ctf", fmt.Sprintf("t%d", next), "hot", true, "judge", "")
			if err != nil || out.Standing == nil || out.Standing.Rank == 0 {
				t.Fatalf("Attempt = %+v, %v", out, err)
			}
			next++
		}
		before := pl.n.Load()
		solve()
		lookups = pl.n.Load() - before
		allocs = testing.AllocsPerRun(20, solve)
		return lookups, allocs
	}
	l1, a1 := measure(200)
	l2, a2 := measure(2000)
	t.Logf("a solve at 200 teams: %d player lookups, %.0f allocations; at 2,000: %d, %.0f", l1, a1, l2, a2)
	if l2 > 2 || l2 != l1 {
		t.Errorf("player lookups per solve: %d at 200 teams, %d at 2,000; want the same, at most 2", l1, l2)
	}
	if a2 > a1+10 {
		t.Errorf("allocations per solve: %.0f at 200 teams, %.0f at 2,000; want no growth with the teams", a1, a2)
	}
}
