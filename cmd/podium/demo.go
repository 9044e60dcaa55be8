package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/groups"
)

// serve --demo shows every kind of page podium has, live, with simulated
// players going through the same engine and contest service calls as the
// API's handlers (no row is written around them):
//
//   - plain boards: best (Minesweeper, three levels), sum with a daily
//     reset, and best_k (a sprint keeping each player's 5 best runs);
//   - aggregates over them: a sum of bests (the three levels) and a best-k
//     total with fills (the sprint);
//   - the activity feed, which those boards fill (personal bests, new
//     leaders, settlements);
//   - a cycle of short tournaments (demo_cup.go) that settle into a points
//     ladder (a total and a decaying board);
//   - a weekly league (cohorts of ten in three tiers) and clans: a group
//     set whose players' daily points make a group board;
//   - a cycle of CTF contests (demo_contest.go): dynamic scoring, first
//     bloods, a freeze ahead, simulated teams whose judge reports attempts,
//     the reveal at the end.
//
// The index page (/) lists the public boards and the contests and shows
// the feed, so it links every page of the demo.

// demoConfig sets the demo's pace; the defaults are a human's, a test
// takes shorter ones.
type demoConfig struct {
	Tick          time.Duration // between two board submissions
	Cup           time.Duration // a tournament's window
	Contest       time.Duration // a contest's length
	Freeze        time.Duration // a contest's freeze, before its end
	AttemptsPerCo int           // judge verdicts over one contest
	Now           podium.Clock
}

var defaultDemo = demoConfig{Tick: 150 * time.Millisecond, Cup: 10 * time.Minute, Contest: time.Hour,
	Freeze: 15 * time.Minute, AttemptsPerCo: 900}

func (c *demoConfig) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// timed keys shared by the Minesweeper levels and their aggregate.
var msKeys = []podium.KeyDef{
	{Name: "time_ms", Order: podium.Asc, Label: "Time", Format: podium.FormatDurationMS},
	{Name: "bbbv", Order: podium.Desc, Label: "3BV", Format: podium.FormatInteger}}

// demoBoards are created by serve --demo (when missing), sources before
// the aggregates that read them.
var demoBoards = []podium.Board{
	{ID: "demo.minesweeper.beginner", Title: "Minesweeper Beginner: fastest time, then most 3BV",
		Keys: msKeys, Mode: podium.Best, Public: true},
	{ID: "demo.minesweeper.intermediate", Title: "Minesweeper Intermediate: fastest time, then most 3BV",
		Keys: msKeys, Mode: podium.Best, Public: true},
	{ID: "demo.minesweeper.expert", Title: "Minesweeper Expert: fastest time, then most 3BV",
		Keys: msKeys, Mode: podium.Best, Public: true},
	{ID: "demo.minesweeper.total", Title: "Minesweeper, all three levels: sum of each player's bests",
		Keys: []podium.KeyDef{
			{Name: "time_ms", Order: podium.Asc, Label: "Total time", Format: podium.FormatDurationMS},
			{Name: "bbbv", Order: podium.Desc, Label: "Total 3BV", Format: podium.FormatInteger}},
		Public: true, Aggregate: &podium.Aggregate{Kind: podium.SumOfBests, RequireAll: true, Sources: []podium.AggregateSource{
			{Board: "demo.minesweeper.beginner"}, {Board: "demo.minesweeper.intermediate"}, {Board: "demo.minesweeper.expert"}}}},
	{ID: "demo.daily", Title: "Daily puzzle points (resets at midnight UTC)",
		Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc, Label: "Points", Format: podium.FormatPoints}},
		Mode: podium.Sum, Reset: podium.Reset{Every: podium.Daily, TZ: "UTC"}, Public: true},
	{ID: "demo.sprint", Title: "Sprint: each player's 5 best runs, ranked by the best",
		Keys: []podium.KeyDef{{Name: "time_ms", Order: podium.Asc, Label: "Time", Format: podium.FormatDurationMS}},
		Mode: podium.BestK, Keep: 5, Public: true},
	{ID: "demo.sprint.total", Title: "Sprint total: the 5 best runs added up (a missing run counts 2:00)",
		Keys:   []podium.KeyDef{{Name: "time_ms", Order: podium.Asc, Label: "Total time", Format: podium.FormatDurationMS}},
		Public: true, Aggregate: &podium.Aggregate{Kind: podium.BestKSum, Sources: []podium.AggregateSource{
			{Board: "demo.sprint", K: 5, Fill: []int64{120_000}}}}},
	{ID: "demo.league", Title: "Weekly XP league: cohorts of 10, the best 3 move up, the last 3 down",
		Keys: []podium.KeyDef{{Name: "xp", Order: podium.Desc, Label: "XP", Format: podium.FormatPoints}},
		Mode: podium.Sum, Reset: podium.Reset{Every: podium.Weekly, TZ: "UTC"}, Public: true,
		League: &podium.League{CohortSize: 10, Tiers: []podium.LeagueTier{
			{Name: "bronze", Promote: 3}, {Name: "silver", Promote: 3, Relegate: 3}, {Name: "gold", Relegate: 3}}}},
	{ID: "demo.clans", Title: "Clans, by members",
		Keys: []podium.KeyDef{{Name: "members", Order: podium.Desc, Label: "Members", Format: podium.FormatInteger}},
		Mode: podium.Latest, Public: true, GroupSet: &podium.GroupSet{MaxMembers: 20, MaxPerPlayer: 1}},
	{ID: "demo.clans.daily", Title: "Clans on the daily puzzle: the sum of each clan's 5 best players",
		Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc, Label: "Points", Format: podium.FormatPoints}},
		Mode: podium.Latest, Reset: podium.Reset{Every: podium.Daily, TZ: "UTC"}, Public: true,
		GroupBoard: &podium.GroupBoard{Set: "demo.clans", Source: "demo.daily", Rule: podium.GroupSum, K: 5}},
}

// demoClans are the clans the demo's players join, each player one.
var demoClans = []string{"owls", "foxes", "otters", "herons", "lynxes", "badgers"}

// demoRetired are boards of earlier demos that this one no longer feeds
// (a fake CTF board, before the demo ran real contests).
var demoRetired = []string{"demo.ctf"}

var demoNames = []string{"Ada", "Grace", "Linus", "Ken", "Dennis", "Barbara", "Margaret", "Edsger", "Donald", "Alan",
	"Radia", "Frances", "Leslie", "Niklaus", "Bjarne", "Guido", "Rob", "Robert", "Katherine", "Hedy",
	"Anita", "Shafi", "Tim", "Vint", "Whitfield", "Adele", "Jean", "Sophie", "Mary", "Evelyn"}

const demoPlayers = 120

func demoPlayer(i int) string { return fmt.Sprintf("demo-%03d", i) }

// startDemo creates the demo's boards, players, teams, first tournament
// and contest, and feeds them simulated players until ctx ends. contests
// may be nil (a store without contests): the demo then runs none.
func startDemo(ctx context.Context, eng *engine.Engine, contests *ctf.Service, log *slog.Logger, cfg demoConfig) error {
	for _, id := range demoRetired {
		if _, err := eng.Board(id); err == nil {
			if err := eng.DeleteBoard(ctx, id); err != nil {
				return err
			}
		}
	}
	for i := range demoBoards {
		b := demoBoards[i]
		b.Aggregate = b.Aggregate.Clone()
		if _, err := eng.Board(b.ID); err == nil {
			continue
		}
		if err := b.Normalize(); err != nil {
			return fmt.Errorf("board %s: %w", b.ID, err)
		}
		if _, _, err := eng.PutBoard(ctx, &b); err != nil {
			return fmt.Errorf("board %s: %w", b.ID, err)
		}
	}
	for i := 0; i < demoPlayers; i++ {
		name := fmt.Sprintf("%s %c.", demoNames[i%len(demoNames)], 'A'+rune(i/len(demoNames)))
		if err := demoEnsurePlayer(ctx, eng, demoPlayer(i), name); err != nil {
			return err
		}
	}
	if err := demoJoinClans(ctx, eng); err != nil {
		return fmt.Errorf("clans: %w", err)
	}
	cups, err := newDemoCups(ctx, eng, log, cfg) // demo_cup.go
	if err != nil {
		return fmt.Errorf("tournaments: %w", err)
	}
	var ctfs *demoContests
	if contests != nil {
		if ctfs, err = newDemoContests(ctx, eng, contests, log, cfg); err != nil { // demo_contest.go
			return fmt.Errorf("contests: %w", err)
		}
	}
	go feedDemo(ctx, eng, log, cfg, cups)
	if ctfs != nil {
		go ctfs.run(ctx)
	}
	return nil
}

// demoJoinClans puts each player in a clan, through the groups
// module (a demo without it has no clans); joining twice is no change.
func demoJoinClans(ctx context.Context, eng *engine.Engine) error {
	var gm interface {
		Join(ctx context.Context, set, grp, player string) (groups.ChangeResult, error)
	}
	for _, m := range eng.Modules() {
		if x, ok := m.(*groups.Module); ok {
			gm = x
		}
	}
	if gm == nil {
		return nil
	}
	for i := 0; i < demoPlayers; i++ { // 120 players in 6 clans of 20: full
		if _, err := gm.Join(ctx, "demo.clans", demoClans[i%len(demoClans)], demoPlayer(i)); err != nil {
			return err
		}
	}
	return nil
}

// demoEnsurePlayer registers a player with a name, unless it exists.
func demoEnsurePlayer(ctx context.Context, eng *engine.Engine, id, name string) error {
	if _, err := eng.Player(id); err == nil {
		return nil
	}
	p := &podium.Player{ID: id, Name: name}
	if err := p.Normalize(); err != nil {
		return err
	}
	_, err := eng.PutPlayer(ctx, p)
	return err
}

// feedDemo submits a simulated result every cfg.Tick to one of the boards
// or the running tournament, and keeps the tournament cycle turning.
func feedDemo(ctx context.Context, eng *engine.Engine, log *slog.Logger, cfg demoConfig, cups *demoCups) {
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	skill := make([]float64, demoPlayers) // lower is better
	for i := range skill {
		skill[i] = 0.5 + r.Float64()
	}
	tick := time.NewTicker(cfg.Tick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		cup := cups.turn(ctx) // the running tournament, after starting the next one if it is due
		p := r.IntN(demoPlayers)
		player := demoPlayer(p)
		var sc engine.Score
		switch n := r.IntN(10); {
		case n < 3:
			// A third of the players play Minesweeper, so that the
			// aggregate, which needs all three levels, fills soon.
			p = r.IntN(demoPlayers / 3)
			player = demoPlayer(p)
			level := []string{"beginner", "intermediate", "expert"}[r.IntN(3)]
			base := map[string]float64{"beginner": 8_000, "intermediate": 25_000, "expert": 60_000}[level]
			t := int64((base + r.NormFloat64()*base/5) * skill[p])
			sc = engine.Score{Board: "demo.minesweeper." + level, Player: player,
				Keys: []int64{max(t, int64(base/3)+r.Int64N(int64(base/8))), int64(base/500) + r.Int64N(int64(base/500)+1)}}
		case n < 4:
			sc = engine.Score{Board: "demo.daily", Player: player, Keys: []int64{int64(1+r.IntN(10)) * int64(2/skill[p]+1)}}
		case n < 5:
			sc = engine.Score{Board: "demo.league", Player: player, Keys: []int64{int64(5+r.IntN(20)) * int64(2/skill[p]+1)}}
		case n < 7:
			t := int64((45_000 + r.NormFloat64()*6_000) * skill[p])
			sc = engine.Score{Board: "demo.sprint", Player: player, Keys: []int64{max(t, 15_000+r.Int64N(3_000))}}
		default:
			if cup == "" {
				continue
			}
			p = r.IntN(demoPlayers / 3) // a cup draws a third of the players
			t := int64((30_000 + r.NormFloat64()*5_000) * skill[p])
			sc = engine.Score{Board: cup, Player: demoPlayer(p), Keys: []int64{max(t, 10_000+r.Int64N(2_000))}}
		}
		if _, err := eng.Submit(ctx, []engine.Score{sc}, true, nil); err != nil && ctx.Err() == nil &&
			podium.ErrorCode(err) != podium.ECodeTournamentClosed && podium.ErrorCode(err) != podium.ECodeLeagueSettling {
			log.Warn("demo submission", "board", sc.Board, "err", err)
		}
	}
}

// demoDataDir is where serve --demo keeps its data when neither --data nor
// PODIUM_DATA names a directory: apart from the default ./podium-data, so
// that the demo's boards and simulated players never mix with a
// walkthrough's or a real deployment's, and deleting it removes the demo.
const demoDataDir = "./podium-demo-data"

// useDemoDataDir points a --demo server without a data directory of its
// own at demoDataDir. fs has been parsed.
func useDemoDataDir(fs *flag.FlagSet, c *Config) {
	if !c.Demo {
		return
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "data" })
	if _, ok := os.LookupEnv("PODIUM_DATA"); ok {
		given = true
	}
	if !given {
		c.Data = demoDataDir
	}
}
