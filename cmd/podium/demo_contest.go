package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
)

// The demo's CTF: one contest after another, each demoConfig.Contest long
// (an hour) with its freeze demoConfig.Freeze before the end, eight
// challenges under the scoring functions podium implements, first bloods,
// and twelve simulated teams whose "judge" reports attempts, right and
// wrong, through the contest service's Attempt: the call behind
// POST /v1/contests/{contest}/attempts. At its end a contest is revealed
// (the call behind POST .../unfreeze) and the next one starts; the last
// two stay listed.

const (
	demoContestPrefix = "demo.ctf."
	demoContestsKept  = 2
	demoJudge         = "demo" // the key id the simulated judge's attempts carry
)

var demoTeams = []string{"Null Pointers", "Segfault Society", "Buffer Overflowers", "Bit Flippers",
	"Race Conditions", "Heap Spray", "Kernel Panic", "Off By One", "Root Cause", "Side Channel",
	"Format String", "Use After Free"}

func demoTeam(i int) string { return fmt.Sprintf("demo-team-%02d", i+1) }

// demoChallenge is a challenge with how likely an attempt at it is right.
type demoChallenge struct {
	contest.Challenge
	ease float64
}

var demoChallenges = []demoChallenge{
	{contest.Challenge{ID: "sanity", Name: "Sanity check", Category: "misc", Order: 1,
		Scoring: contest.Scoring{Function: contest.Static, Value: 50}}, 0.6},
	{contest.Challenge{ID: "cookie", Name: "Cookie monster", Category: "web", Order: 2,
		Scoring: contest.Scoring{Function: contest.CTFdLogarithmic, Value: 500, Minimum: 100, Decay: 10}}, 0.3},
	{contest.Challenge{ID: "packets", Name: "Lost packets", Category: "forensics", Order: 3,
		Scoring: contest.Scoring{Function: contest.Static, Value: 300}}, 0.25},
	{contest.Challenge{ID: "template", Name: "Template trouble", Category: "web", Order: 4,
		Scoring: contest.Scoring{Function: contest.CTFdLinear, Value: 500, Minimum: 150, Decay: 12}}, 0.15},
	{contest.Challenge{ID: "crackme", Name: "Crackme", Category: "rev", Order: 5,
		Scoring: contest.Scoring{Function: contest.RCTF, Value: 500, Minimum: 100}}, 0.12},
	{contest.Challenge{ID: "stack", Name: "Stack smash", Category: "pwn", Order: 6,
		Scoring: contest.Scoring{Function: contest.GZCTF, Value: 600, MinRate: 0.25, Difficulty: 3}}, 0.08},
	{contest.Challenge{ID: "rsa", Name: "Broken RSA", Category: "crypto", Order: 7,
		Scoring: contest.Scoring{Function: contest.CTFdLogarithmic, Value: 700, Minimum: 200, Decay: 8}}, 0.07},
	{contest.Challenge{ID: "lattice", Name: "Lattice", Category: "crypto", Order: 8,
		Scoring: contest.Scoring{Function: contest.CTFdLogarithmic, Value: 1000, Minimum: 300, Decay: 6}}, 0.03},
}

type demoContests struct {
	svc     *ctf.Service
	log     *slog.Logger
	cfg     demoConfig
	r       *rand.Rand
	skill   []float64 // per team: 0.5 (weak) to 1.5 (strong)
	current contest.Contest
	solved  map[[2]int]bool // (team, challenge) of the current contest
}

// newDemoContests registers the teams (teams are players) and takes up
// the running contest of an earlier start, if any.
func newDemoContests(ctx context.Context, eng *engine.Engine, svc *ctf.Service, log *slog.Logger, cfg demoConfig) (*demoContests, error) {
	for i, name := range demoTeams {
		if err := demoEnsurePlayer(ctx, eng, demoTeam(i), name); err != nil {
			return nil, err
		}
	}
	d := &demoContests{svc: svc, log: log, cfg: cfg, r: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11)),
		skill: make([]float64, len(demoTeams)), solved: map[[2]int]bool{}}
	for i := range d.skill {
		d.skill[i] = 0.5 + d.r.Float64()
	}
	now := cfg.now()
	for _, c := range d.contests() {
		if c.Running(now) {
			d.current = c
		}
	}
	if err := d.turn(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// contests returns the demo's contests, oldest first.
func (d *demoContests) contests() []contest.Contest {
	var out []contest.Contest
	for _, c := range d.svc.Contests() {
		if strings.HasPrefix(c.ID, demoContestPrefix) {
			out = append(out, c)
		}
	}
	return out
}

// run reports an attempt every contest length / AttemptsPerCo until ctx
// ends, turning to the next contest when one ends.
func (d *demoContests) run(ctx context.Context) {
	tick := time.NewTicker(max(d.cfg.Contest/time.Duration(max(d.cfg.AttemptsPerCo, 1)), 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := d.turn(ctx); err != nil {
			if ctx.Err() == nil {
				d.log.Warn("demo contest", "err", err)
			}
			continue
		}
		d.attempt(ctx)
	}
}

// turn starts the next contest once the current one has ended (or there
// is none), after revealing the ended ones and deleting all but the last
// demoContestsKept.
func (d *demoContests) turn(ctx context.Context) error {
	now := d.cfg.now()
	if d.current.ID != "" && d.current.Running(now) {
		return nil
	}
	for _, c := range d.contests() {
		if !now.Before(c.End) && !c.Revealed {
			if _, err := d.svc.Unfreeze(ctx, c.ID, false); err != nil {
				return fmt.Errorf("reveal %s: %w", c.ID, err)
			}
		}
	}
	start := now.UTC().Truncate(time.Millisecond)
	end := start.Add(d.cfg.Contest)
	layout := "15:04"
	if d.cfg.Contest < time.Minute {
		layout = "15:04:05"
	}
	c := contest.Contest{ID: demoContestPrefix + demoStamp(start, d.cfg.Contest),
		Title: "Demo CTF " + start.Format(layout) + "\u2013" + end.Format(layout) + " UTC",
		Start: start, End: end, FirstBlood: [3]int64{10, 5, 3}, Public: true}
	if d.cfg.Freeze > 0 && d.cfg.Freeze < d.cfg.Contest {
		f := end.Add(-d.cfg.Freeze)
		c.Freeze = &f
	}
	got, _, err := d.svc.PutContest(ctx, &c)
	if err != nil {
		return fmt.Errorf("contest %s: %w", c.ID, err)
	}
	for _, dc := range demoChallenges {
		ch := dc.Challenge
		ch.Contest = got.ID
		if _, _, err := d.svc.PutChallenge(ctx, &ch); err != nil {
			return fmt.Errorf("contest %s: challenge %s: %w", got.ID, ch.ID, err)
		}
	}
	d.current, d.solved = got, map[[2]int]bool{}
	all := d.contests()
	for i := 0; i < len(all)-demoContestsKept; i++ {
		if err := d.svc.DeleteContest(ctx, all[i].ID); err != nil && podium.ErrorCode(err) != podium.ECodeNotFound {
			return fmt.Errorf("delete %s: %w", all[i].ID, err)
		}
	}
	return nil
}

// attempt has a random team try a challenge it has not solved; whether
// the flag is right depends on the challenge, the team and how far the
// contest has gone.
func (d *demoContests) attempt(ctx context.Context) {
	t := d.r.IntN(len(demoTeams))
	var open []int
	for i := range demoChallenges {
		if !d.solved[[2]int{t, i}] {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		return
	}
	i := open[d.r.IntN(len(open))]
	c := d.current
	progress := float64(d.cfg.now().Sub(c.Start)) / float64(c.End.Sub(c.Start))
	correct := d.r.Float64() < demoChallenges[i].ease*d.skill[t]*(0.5+progress)
	o, err := d.svc.Attempt(ctx, c.ID, demoTeam(t), demoChallenges[i].ID, correct, demoJudge, "")
	switch {
	case err == nil:
		if o.Attempt.Result == contest.ResultSolved || o.Attempt.Result == contest.ResultDuplicate {
			d.solved[[2]int{t, i}] = true
		}
	case podium.ErrorCode(err) == podium.ECodeConflict: // solved before a restart
		d.solved[[2]int{t, i}] = true
	case podium.ErrorCode(err) == podium.ECodeUnprocessable: // it has just ended: turn
	default:
		if ctx.Err() == nil {
			d.log.Warn("demo attempt", "contest", c.ID, "err", err)
		}
	}
}
