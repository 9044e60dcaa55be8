package client

import (
	"context"
	"io"
	"net/http"
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

// Export streams a league's tiers and settled periods with their results
// to w as JSON Lines (LeagueExportLine; admin). The current period's
// placements are not in it.
func (l Leagues) Export(ctx context.Context, board string, w io.Writer) error {
	_, err := l.c.export(ctx, path("leagues", board, "export"), ExportOptions{}, w, false)
	return err
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
