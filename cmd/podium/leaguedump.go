package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/podiumhq/podium/client"
)

// A league's part of a dump beyond its entries: the tiers its settlements
// left and its settled periods with their results (GET
// /v1/leagues/{board}/export), restored in batches (POST
// /v1/leagues/{board}/restore). The current period's placements are not
// dumped: the target places each player at their next score, in their
// restored tier.

// league copies a league's export into the dump, its pages through a
// temporary file (so that neither this process nor the server holds the
// league), read again up to exportRetries times when a settlement lands
// during it, before anything of it is written.
func (x *exporter) league(ctx context.Context, board string) error {
	fill := func(tmp io.Writer) (bool, error) {
		w := bufio.NewWriterSize(tmp, 64<<10)
		err := x.c.Leagues().Export(ctx, board, w, 0) // the server's page
		if err == nil {
			err = w.Flush()
		}
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, client.ErrLeagueSettled):
			return false, nil
		}
		return false, fmt.Errorf("league %s: export: %w", board, err)
	}
	busy := func() error {
		return fmt.Errorf("league %s: it settled a period during each of %d exports; retry", board, exportRetries)
	}
	return spooled("podium-export-league-*.jsonl", fill, busy, func(tmp *os.File) error { return x.leagueLines(board, tmp) })
}

// leagueLines writes a league's exported lines into the dump.
func (x *exporter) leagueLines(board string, tmp *os.File) error {
	sc := bufio.NewScanner(tmp)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var l client.LeagueExportLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("league %s: export line: %w", board, err)
		}
		if err := x.line(dumpLine{LeagueTier: l.Tier, LeaguePeriod: l.Period, LeagueResult: l.Result}); err != nil {
			return err
		}
		x.leagueRows++
	}
	return sc.Err()
}

// leagueBatch is the league rows of the current board waiting to be
// restored.
type leagueBatch struct {
	tiers   []client.LeagueTierRow
	periods []client.LeaguePeriodRow
	rows    int
	last    *client.LeaguePeriodRow // the period whose results come next
}

// addLeague queues a league line of the current board, restoring a full
// batch.
func (x *importer) addLeague(ctx context.Context, l *dumpLine) error {
	lb := &x.league
	var board string
	switch {
	case l.LeagueTier != nil:
		board = l.LeagueTier.Board
	case l.LeaguePeriod != nil:
		board = l.LeaguePeriod.Board
	default:
		board = l.LeagueResult.Board
	}
	if board != x.board {
		return fmt.Errorf("a league row of board %q outside that board's part of the dump", board)
	}
	if lb.rows+2 > client.MaxLeagueRestore { // a result may need its period's row again
		if err := x.flushLeague(ctx); err != nil {
			return err
		}
	}
	switch {
	case l.LeagueTier != nil:
		lb.tiers = append(lb.tiers, l.LeagueTier.LeagueTierRow)
		lb.rows++
	case l.LeaguePeriod != nil:
		p := l.LeaguePeriod.LeaguePeriodRow
		p.Results = nil
		lb.periods = append(lb.periods, p)
		lb.last = &lb.periods[len(lb.periods)-1]
		lb.rows++
	default:
		r := l.LeagueResult
		if lb.last == nil || lb.last.Period != r.Period {
			// The period's row was sent with an earlier batch, or is
			// missing: the server needs it with each batch of results.
			if x.leaguePeriod == nil || x.leaguePeriod.Period != r.Period {
				return fmt.Errorf("a league result of period %q before that period's league_period line", r.Period)
			}
			p := *x.leaguePeriod
			p.Results = nil
			lb.periods = append(lb.periods, p)
			lb.last = &lb.periods[len(lb.periods)-1]
			lb.rows++
		}
		lb.last.Results = append(lb.last.Results, r.LeagueResultRow)
		lb.rows++
	}
	if l.LeaguePeriod != nil {
		p := l.LeaguePeriod.LeaguePeriodRow
		x.leaguePeriod = &p
	}
	return nil
}

// flushLeague restores the queued league rows in one call.
func (x *importer) flushLeague(ctx context.Context) error {
	lb := x.league
	x.league = leagueBatch{}
	if lb.rows == 0 {
		return nil
	}
	if x.skip {
		x.leagueSkipped += lb.rows
		return nil
	}
	n, err := x.c.Leagues().Restore(ctx, x.board, lb.tiers, lb.periods)
	if err != nil {
		return fmt.Errorf("league %s: restore: %w", x.board, err)
	}
	x.leagueTiers += n.Tiers
	x.leagueResults += n.Results
	return nil
}
