package main

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// The demo's tournament cycle: one cup after another, each open for
// demoConfig.Cup (10 minutes), paying 1000/rank points into the "demo"
// ladder when the engine's scheduler settles it at its end. The cups are
// ordinary tournament boards and the points boards ordinary points boards,
// written by the engine's own settlement.

const (
	demoCupPrefix = "demo.cup."
	demoLadder    = "demo"
	demoCupsShown = 3 // the running cup and the last settled ones stay public
)

var demoPointsBoards = []podium.Board{
	{ID: "demo.points.total", Title: "Cup points: everything the cups paid (1000 / rank)",
		Keys: []podium.KeyDef{{Name: "points", Order: podium.Desc, Label: "Points", Format: podium.FormatPoints}},
		Mode: podium.Sum, Public: true, Points: &podium.Points{Ladder: demoLadder, Kind: podium.PointsTotal}},
	{ID: "demo.points.current", Title: "Cup points now: halving every day",
		Keys: []podium.KeyDef{{Name: "era", Order: podium.Desc}, {Name: "points", Order: podium.Desc}},
		Mode: podium.Sum, Public: true, Points: &podium.Points{Ladder: demoLadder, Kind: podium.PointsCurrent, HalfLifeDays: 1}},
}

type demoCups struct {
	eng     *engine.Engine
	log     *slog.Logger
	cfg     demoConfig
	current string    // the running cup's board id, "" if none
	end     time.Time // its end
}

// newDemoCups creates the points boards when missing and takes up the
// running cup of an earlier start, if its window is still open.
func newDemoCups(ctx context.Context, eng *engine.Engine, log *slog.Logger, cfg demoConfig) (*demoCups, error) {
	for i := range demoPointsBoards {
		b := demoPointsBoards[i]
		if _, err := eng.Board(b.ID); err == nil {
			continue
		}
		if err := b.Normalize(); err != nil {
			return nil, err
		}
		if _, _, err := eng.PutBoard(ctx, &b); err != nil {
			return nil, err
		}
	}
	c := &demoCups{eng: eng, log: log, cfg: cfg}
	now := cfg.now()
	for _, b := range c.cups() {
		if t := b.Tournament; t != nil && now.Before(t.End) && !now.Before(t.Start) {
			c.current, c.end = b.ID, t.End
		}
	}
	c.turn(ctx)
	return c, nil
}

// cups returns the demo's cup boards, oldest first (their ids sort by
// start time).
func (c *demoCups) cups() []engine.BoardInfo {
	var out []engine.BoardInfo
	for _, b := range c.eng.Boards(false) {
		if strings.HasPrefix(b.ID, demoCupPrefix) && b.Tournament != nil {
			out = append(out, b)
		}
	}
	return out
}

// turn returns the running cup, first starting the next one when the
// last has ended (the engine settles that one on its own within a
// second). "" when none could be started; the next call tries again.
func (c *demoCups) turn(ctx context.Context) string {
	now := c.cfg.now()
	if c.current != "" && now.Before(c.end) {
		return c.current
	}
	start := now.UTC().Truncate(time.Millisecond)
	end := start.Add(c.cfg.Cup)
	layout := "15:04"
	if c.cfg.Cup < time.Minute {
		layout = "15:04:05"
	}
	b := podium.Board{ID: demoCupPrefix + demoStamp(start, c.cfg.Cup),
		Title: "Cup " + start.Format(layout) + "\u2013" + end.Format(layout) + " UTC: fastest run",
		Keys:  []podium.KeyDef{{Name: "time_ms", Order: podium.Asc, Label: "Time", Format: podium.FormatDurationMS}},
		Mode:  podium.Best, Public: true,
		Tournament: &podium.Tournament{Start: start, End: end, Weight: 1000, Ladder: demoLadder}}
	if err := b.Normalize(); err != nil {
		c.log.Warn("demo tournament", "err", err)
		return ""
	}
	if _, _, err := c.eng.PutBoard(ctx, &b); err != nil {
		if ctx.Err() == nil {
			c.log.Warn("demo tournament", "board", b.ID, "err", err)
		}
		c.current = ""
		return ""
	}
	c.current, c.end = b.ID, end
	c.retire(ctx)
	return c.current
}

// retire makes the cups before the last demoCupsShown private: they keep
// their entries and the points they paid (a settled tournament that paid
// points cannot be deleted without taking them back), and the index stays
// short however long the demo runs.
func (c *demoCups) retire(ctx context.Context) {
	cups := c.cups()
	for i := 0; i < len(cups)-demoCupsShown; i++ {
		if !cups[i].Public {
			continue
		}
		private := false
		if _, _, err := c.eng.UpdateBoard(ctx, &podium.BoardUpdate{ID: cups[i].ID, Public: &private}); err != nil && ctx.Err() == nil {
			c.log.Warn("demo tournament: retire", "board", cups[i].ID, "err", err)
		}
	}
}

// demoStamp names a cup or contest by its start: to the minute for one of
// a minute or more (two never start in the same minute), to the
// millisecond for a test's short ones.
func demoStamp(start time.Time, length time.Duration) string {
	if length >= time.Minute {
		return start.Format("20060102-1504")
	}
	return start.Format("20060102-150405.000")
}
