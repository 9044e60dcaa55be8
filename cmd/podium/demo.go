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
	"github.com/podiumhq/podium/engine"
)

// demoBoards are created by serve --demo (when missing).
var demoBoards = []podium.Board{
	{ID: "demo.minesweeper.expert", Title: "Minesweeper Expert: fastest time, then most 3BV",
		Keys: []podium.KeyDef{
			{Name: "time_ms", Order: podium.Asc, Label: "Time", Format: podium.FormatDurationMS},
			{Name: "bbbv", Order: podium.Desc, Label: "3BV", Format: podium.FormatInteger}},
		Mode: podium.Best, Public: true},
	{ID: "demo.daily", Title: "Daily puzzle points (resets at midnight UTC)",
		Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc, Label: "Points", Format: podium.FormatPoints}},
		Mode: podium.Sum, Reset: podium.Reset{Every: podium.Daily, TZ: "UTC"}, Public: true},
	{ID: "demo.ctf", Title: "CTF: score, then earliest last solve",
		Keys: []podium.KeyDef{
			{Name: "score", Order: podium.Desc, Label: "Score", Format: podium.FormatPoints},
			{Name: "last_solve_s", Order: podium.Asc, Label: "Last solve", Format: podium.FormatSeconds}},
		Mode: podium.Latest, Public: true},
}

var demoNames = []string{"Ada", "Grace", "Linus", "Ken", "Dennis", "Barbara", "Margaret", "Edsger", "Donald", "Alan",
	"Radia", "Frances", "Leslie", "Niklaus", "Bjarne", "Guido", "Rob", "Robert", "Katherine", "Hedy",
	"Anita", "Shafi", "Tim", "Vint", "Whitfield", "Adele", "Jean", "Sophie", "Mary", "Evelyn"}

// startDemo creates the demo boards and players and feeds the boards a
// steady stream of simulated submissions until ctx ends.
func startDemo(ctx context.Context, eng *engine.Engine, log *slog.Logger) error {
	for i := range demoBoards {
		b := demoBoards[i]
		if _, err := eng.Board(b.ID); err == nil {
			continue
		}
		if err := b.Normalize(); err != nil {
			return err
		}
		if _, _, err := eng.PutBoard(ctx, &b); err != nil {
			return err
		}
	}
	const players = 120
	for i := 0; i < players; i++ {
		id := fmt.Sprintf("demo-%03d", i)
		if _, err := eng.Player(id); err == nil {
			continue
		}
		p := &podium.Player{ID: id, Name: fmt.Sprintf("%s %c.", demoNames[i%len(demoNames)], 'A'+rune(i/len(demoNames)))}
		if err := p.Normalize(); err != nil {
			return err
		}
		if _, err := eng.PutPlayer(ctx, p); err != nil {
			return err
		}
	}
	go feedDemo(ctx, eng, log, players)
	return nil
}

func feedDemo(ctx context.Context, eng *engine.Engine, log *slog.Logger, players int) {
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	skill := make([]float64, players) // lower is better
	for i := range skill {
		skill[i] = 0.5 + r.Float64()
	}
	start := time.Now()
	tick := time.NewTicker(150 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p := r.IntN(players)
		player := fmt.Sprintf("demo-%03d", p)
		var sc engine.Score
		switch r.IntN(3) {
		case 0:
			t := int64((60_000 + r.NormFloat64()*12_000) * skill[p])
			sc = engine.Score{Board: "demo.minesweeper.expert", Player: player, Keys: []int64{max(t, 20_000+r.Int64N(8_000)), int64(120 + r.IntN(120))}}
		case 1:
			sc = engine.Score{Board: "demo.daily", Player: player, Keys: []int64{int64(1+r.IntN(10)) * int64(2/skill[p]+1)}}
		default:
			solved := int64(time.Since(start).Seconds()/(20*skill[p])) + int64(r.IntN(3))
			sc = engine.Score{Board: "demo.ctf", Player: player, Keys: []int64{solved * 100, int64(time.Since(start).Seconds())}}
		}
		if _, err := eng.Submit(ctx, []engine.Score{sc}, true, nil); err != nil && ctx.Err() == nil {
			log.Warn("demo submission", "err", err)
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
