package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// A league's tiers and settled history, as podium export writes them and
// podium import restores them (docs/API.md, "Restore a league").

// LeagueTierRow is a player's tier as the league's settlements left it.
type LeagueTierRow struct {
	Player string `json:"player"`
	Tier   string `json:"tier"`
}

// LeaguePeriodRow is a settled period: its counts and, in a restore, (some
// of) its results.
type LeaguePeriodRow struct {
	Period    string            `json:"period"`
	Start     time.Time         `json:"start"`
	SettledAt time.Time         `json:"settled_at"`
	Players   int64             `json:"players"`
	Promoted  int64             `json:"promoted"`
	Relegated int64             `json:"relegated"`
	Results   []LeagueResultRow `json:"results,omitempty"`
}

// LeagueResultRow is a player's outcome in a settled period; Cohort and
// Rank are nil for an absent player.
type LeagueResultRow struct {
	Player  string `json:"player"`
	Tier    string `json:"tier"`
	Cohort  *int   `json:"cohort"`
	Rank    *int   `json:"rank"`
	Outcome string `json:"outcome"`
	NewTier string `json:"new_tier"`
}

// LeagueExportLine is one line of a league's export: exactly one field
// is set. A period's line comes before its results.
type LeagueExportLine struct {
	Tier   *LeagueExportTier   `json:"league_tier,omitempty"`
	Period *LeagueExportPeriod `json:"league_period,omitempty"`
	Result *LeagueExportResult `json:"league_result,omitempty"`
}

// LeagueExportTier is a tier line: the league and the row.
type LeagueExportTier struct {
	Board string `json:"board"`
	LeagueTierRow
}

// LeagueExportPeriod is a period line (its results follow).
type LeagueExportPeriod struct {
	Board string `json:"board"`
	LeaguePeriodRow
}

// LeagueExportResult is a result line.
type LeagueExportResult struct {
	Board  string `json:"board"`
	Period string `json:"period"`
	LeagueResultRow
}

// LeagueRestored counts the rows a restore wrote.
type LeagueRestored struct {
	Board   string `json:"board"`
	Tiers   int    `json:"tiers"`
	Periods int    `json:"periods"`
	Results int    `json:"results"`
}

// MaxLeagueRestore is the most rows (tiers, periods and results) one
// Restore takes.
const MaxLeagueRestore = 1000

// LeagueExportPage is one page of a league's export (GET
// /v1/leagues/{board}/export?part=): the rows of Part, by period (oldest
// first) or by player. NextAfter is the After of the next page, nil on
// the last.
type LeagueExportPage struct {
	Board     string            `json:"board"`
	Part      string            `json:"part"`
	Period    string            `json:"period,omitempty"`
	Periods   []LeaguePeriodRow `json:"periods,omitempty"`
	Results   []LeagueResultRow `json:"results,omitempty"`
	Tiers     []LeagueTierRow   `json:"tiers,omitempty"`
	NextAfter *string           `json:"next_after"`
}

// LeagueExportOptions chooses a page of a league's export: Part is
// "periods", "results" (of Period) or "tiers"; After is the previous
// page's NextAfter (empty: the first page); Limit is the most rows (0:
// the server's default, 1000; at most MaxLeagueExportLimit).
type LeagueExportOptions struct {
	Part   string
	Period string
	After  string
	Limit  int
}

// MaxLeagueExportLimit is the most rows a page of a league's export holds.
const MaxLeagueExportLimit = 10000

// ErrLeagueSettled is Export's error when the league settled a period
// while it was read: the tiers, read last, may be from after a period
// the export does not hold. Export again.
var ErrLeagueSettled = errors.New("the league settled a period during the export")

// ExportPage reads one page of a league's export (admin).
func (l Leagues) ExportPage(ctx context.Context, board string, o LeagueExportOptions) (*LeagueExportPage, error) {
	q := url.Values{"part": {o.Part}}
	if o.Period != "" {
		q.Set("period", o.Period)
	}
	if o.After != "" {
		q.Set("after", o.After)
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	var out LeagueExportPage
	_, err := l.c.call(ctx, request{method: http.MethodGet, path: path("leagues", board, "export"), query: q}, &out)
	return &out, err
}

// Export writes a league's settled periods, each followed by its results,
// then its tiers to w as JSON Lines (LeagueExportLine; admin), a page of
// limit rows at a time (0: the server's default) as they come, so that
// neither side holds the league. The current period's placements are not
// in it. The periods are listed again after the tiers: when a settlement
// landed meanwhile, Export fails with ErrLeagueSettled after writing.
func (l Leagues) Export(ctx context.Context, board string, w io.Writer, limit int) error {
	periods, err := l.settled(ctx, board, limit)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	for i := range periods {
		p := &periods[i]
		if err := enc.Encode(LeagueExportLine{Period: &LeagueExportPeriod{Board: board, LeaguePeriodRow: *p}}); err != nil {
			return err
		}
		for after := ""; ; {
			pg, err := l.ExportPage(ctx, board, LeagueExportOptions{Part: "results", Period: p.Period, After: after, Limit: limit})
			if err != nil {
				return err
			}
			for _, r := range pg.Results {
				if err := enc.Encode(LeagueExportLine{Result: &LeagueExportResult{Board: board, Period: p.Period, LeagueResultRow: r}}); err != nil {
					return err
				}
			}
			if pg.NextAfter == nil {
				break
			}
			after = *pg.NextAfter
		}
	}
	for after := ""; ; {
		pg, err := l.ExportPage(ctx, board, LeagueExportOptions{Part: "tiers", After: after, Limit: limit})
		if err != nil {
			return err
		}
		for _, t := range pg.Tiers {
			if err := enc.Encode(LeagueExportLine{Tier: &LeagueExportTier{Board: board, LeagueTierRow: t}}); err != nil {
				return err
			}
		}
		if pg.NextAfter == nil {
			break
		}
		after = *pg.NextAfter
	}
	again, err := l.settled(ctx, board, limit)
	if err != nil {
		return err
	}
	changed := len(again) != len(periods)
	for i := 0; i < len(again) && !changed; i++ {
		changed = again[i].Period != periods[i].Period || !again[i].SettledAt.Equal(periods[i].SettledAt)
	}
	if changed {
		return fmt.Errorf("league %s: %w", board, ErrLeagueSettled)
	}
	return nil
}

// settled lists a league's settled periods, oldest first: one row a
// settled period, held for the export's length.
func (l Leagues) settled(ctx context.Context, board string, limit int) ([]LeaguePeriodRow, error) {
	var out []LeaguePeriodRow
	for after := ""; ; {
		pg, err := l.ExportPage(ctx, board, LeagueExportOptions{Part: "periods", After: after, Limit: limit})
		if err != nil {
			return nil, err
		}
		out = append(out, pg.Periods...)
		if pg.NextAfter == nil {
			return out, nil
		}
		after = *pg.NextAfter
	}
}

// Restore writes tiers and settled periods into a league, all or nothing
// (admin; at most MaxLeagueRestore rows). Running it again with the same
// rows changes nothing; a period the target settled itself is a conflict.
func (l Leagues) Restore(ctx context.Context, board string, tiers []LeagueTierRow, periods []LeaguePeriodRow) (*LeagueRestored, error) {
	body := struct {
		Tiers   []LeagueTierRow   `json:"tiers"`
		Periods []LeaguePeriodRow `json:"periods"`
	}{tiers, periods}
	if body.Tiers == nil {
		body.Tiers = []LeagueTierRow{}
	}
	if body.Periods == nil {
		body.Periods = []LeaguePeriodRow{}
	}
	var out LeagueRestored
	_, err := l.c.call(ctx, request{method: http.MethodPost, path: path("leagues", board, "restore"), body: body, kind: idempotent}, &out)
	return &out, err
}
