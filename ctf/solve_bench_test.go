package ctf

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/podiumhq/podium/contest"
)

// bigContest starts a service on a memory store holding contest "ctf":
// 40 challenges scored by GZCTF's function and "hot" by CTFd's linear
// decay of one point a solve, first bloods 5/3/1%, n teams
// with 5 solves each, and "hot" solved by the first hot teams. The first
// read builds what the service keeps in memory.
func bigContest(b *testing.B, n, hot int) (*Service, *clock) {
	b.Helper()
	clk, pl := &clock{t: t0.Add(time.Minute)}, &players{hidden: map[string]bool{}}
	st := newMemStore()
	s := New(Config{Store: st, Players: pl, Now: clk.now, Poll: -1})
	if err := s.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if _, _, err := s.PutContest(ctx, &contest.Contest{ID: "ctf", Start: t0, End: t0.Add(48 * time.Hour), FirstBlood: [3]int64{5, 3, 1}}); err != nil {
		b.Fatal(err)
	}
	sc := contest.Scoring{Function: contest.GZCTF, Value: 1000, MinRate: 0.25, Difficulty: 3000}
	for i := range 40 {
		if _, _, err := s.PutChallenge(ctx, &contest.Challenge{Contest: "ctf", ID: fmt.Sprintf("c%d", i), Scoring: sc}); err != nil {
			b.Fatal(err)
		}
	}
	// "hot" loses a point with every solve: each solve moves its value.
	hotScoring := contest.Scoring{Function: contest.CTFdLinear, Value: 1_000_000, Decay: 1}
	if _, _, err := s.PutChallenge(ctx, &contest.Challenge{Contest: "ctf", ID: "hot", Scoring: hotScoring}); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var ss []contest.Solve
	at := t0
	for tm := range n {
		for _, ch := range r.Perm(40)[:5] {
			at = at.Add(time.Millisecond)
			ss = append(ss, contest.Solve{Contest: "ctf", Team: fmt.Sprintf("t%d", tm), Challenge: fmt.Sprintf("c%d", ch), At: at})
		}
	}
	for tm := range hot {
		at = at.Add(time.Millisecond)
		ss = append(ss, contest.Solve{Contest: "ctf", Team: fmt.Sprintf("t%d", tm), Challenge: "hot", At: at})
	}
	st.load("ctf", ss)
	if err := s.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Standings("ctf", Live); err != nil {
		b.Fatal(err)
	}
	runtime.GC() // the setup's garbage is not the solves'
	return s, clk
}

// BenchmarkSolve is one correct attempt through the service (memory
// store: the service's own work) on "hot", by a team that had not solved
// it, answered with the team's live standing, at 2,000 and 20,000 teams,
// with "hot" solved by 200 teams before (and one more each solve: run
// with a fixed count, -benchtime=1000x, so that both sizes end alike),
// and at 20,000 teams with "hot" solved by 19,000. Its value moves with
// each solve, so each of its solvers is filed again: the cost that
// remains, per solver of the solved challenge. BenchmarkSolveReference
// is what every solve cost before issue 17.
func BenchmarkSolve(b *testing.B) {
	for _, c := range []struct{ n, hot int }{{2000, 200}, {20000, 200}, {20000, 19000}} {
		b.Run(fmt.Sprintf("teams=%d/hot=%d", c.n, c.hot), func(b *testing.B) {
			if b.N > c.n-c.hot {
				b.Skipf("b.N %d: at most %d teams can still solve hot", b.N, c.n-c.hot)
			}
			s, _ := bigContest(b, c.n, c.hot)
			b.ResetTimer()
			for i := range b.N {
				out, err := s.Attempt(ctx, "ctf", fmt.Sprintf("t%d", c.hot+i), "hot", true, "judge", "")
				if err != nil || out.Standing == nil || out.Standing.Rank == 0 {
					b.Fatalf("Attempt = %+v, %v", out, err)
				}
			}
		})
	}
}

// BenchmarkSolveReference is what every solve cost before issue 17, on
// the contests of BenchmarkSolve: the live standings recomputed whole
// (contest.Compute). Separate, so that it can run with fewer iterations.
func BenchmarkSolveReference(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("teams=%d", n), func(b *testing.B) {
			s, _ := bigContest(b, n, 200)
			st, _ := s.get("ctf")
			st.mu.Lock()
			in := contest.Input{Contest: &st.def, Challenges: st.challenges, Solves: st.solves}
			st.mu.Unlock()
			b.ResetTimer()
			for range b.N {
				contest.Compute(in)
			}
		})
	}
}

// BenchmarkChallengePreview is the preview of a retroactive scoring change
// (PatchChallenge with Preview: the standings computed with the old and
// the new challenge, and the teams that move) on the contests of
// BenchmarkSolveReference: what a guarded PUT or ?preview=true costs.
func BenchmarkChallengePreview(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("teams=%d", n), func(b *testing.B) {
			s, _ := bigContest(b, n, 200)
			v := int64(500)
			p := &ChallengePatch{Scoring: &ScoringPatch{Value: &v}}
			b.ResetTimer()
			for range b.N {
				if _, im, err := s.PatchChallenge(ctx, "ctf", "c0", p, Preview); err != nil || !im.Moves || len(im.Teams) == 0 {
					b.Fatalf("preview = %+v, %v", im, err)
				}
			}
		})
	}
}
