package http

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/league"
)

// A league's tiers and settled history, out and in (podium export and
// import; docs/API.md, "Restore a league"):
//
//	GET  /v1/leagues/{board}/export   a page of periods, results or tiers (leagues_export.go)
//	POST /v1/leagues/{board}/restore  the same rows, at most league.MaxLeagueRestore a call

// leagueMover is the league module's export and restore (league.Module);
// a server without the module answers 503.
type leagueMover interface {
	Settled(ctx context.Context, board string) ([]podium.LeaguePeriod, error)
	TiersPage(ctx context.Context, board, after string, limit int) ([]podium.LeagueTierOf, error)
	ResultsPage(ctx context.Context, board, period, after string, limit int) ([]podium.LeagueResult, error)
	Restore(ctx context.Context, board string, r *league.RestoreRequest) (league.Restored, error)
}

var _ leagueMover = (*league.Module)(nil)

func (s *leagueHandlers) mover() (leagueMover, error) {
	if m, ok := s.mod.(leagueMover); ok {
		return m, nil
	}
	return nil, errNoLeagues
}

// leagueRestoreBody is the body of POST /v1/leagues/{board}/restore.
type leagueRestoreBody struct {
	Tiers []struct {
		Player string `json:"player"`
		Tier   string `json:"tier"`
	} `json:"tiers"`
	Periods []struct {
		Period    string `json:"period"`
		Start     string `json:"start"`
		SettledAt string `json:"settled_at"`
		Players   int64  `json:"players"`
		Promoted  int64  `json:"promoted"`
		Relegated int64  `json:"relegated"`
		Results   []struct {
			Player  string `json:"player"`
			Tier    string `json:"tier"`
			Cohort  *int   `json:"cohort"`
			Rank    *int   `json:"rank"`
			Outcome string `json:"outcome"`
			NewTier string `json:"new_tier"`
		} `json:"results"`
	} `json:"periods"`
}

// POST /v1/leagues/{board}/restore: scope admin on the board. Writes the
// rows in one commit through the league module (league.Module.Restore).
func (s *leagueHandlers) restoreLeague(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("board")
	if _, err := s.require(r, podium.ScopeAdmin, id); err != nil {
		return err
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	var body leagueRestoreBody
	if err := decodeStrict(buf.Bytes(), &body); err != nil {
		return err
	}
	mv, err := s.mover()
	if err != nil {
		return err
	}
	req := &league.RestoreRequest{Tiers: make([]league.RestoreTier, len(body.Tiers))}
	for i, t := range body.Tiers {
		req.Tiers[i] = league.RestoreTier{Player: t.Player, Tier: t.Tier}
	}
	parse := func(what, v string) (time.Time, error) {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil || len(v) > 64 {
			return time.Time{}, podium.Errorf(podium.ECodeInvalid, "%s (an RFC 3339 time) is required: %q", what, v)
		}
		return t, nil
	}
	for i, p := range body.Periods {
		at := "periods[" + strconv.Itoa(i) + "]"
		start, err := parse(at+".start", p.Start)
		if err != nil {
			return err
		}
		settled, err := parse(at+".settled_at", p.SettledAt)
		if err != nil {
			return err
		}
		rp := league.RestorePeriod{Period: p.Period, Start: start, SettledAt: settled, Players: p.Players, Promoted: p.Promoted,
			Relegated: p.Relegated, Results: make([]league.RestoreResult, len(p.Results))}
		for j, x := range p.Results {
			rp.Results[j] = league.RestoreResult{Player: x.Player, Tier: x.Tier, Cohort: x.Cohort, Rank: x.Rank, Outcome: x.Outcome, NewTier: x.NewTier}
		}
		req.Periods = append(req.Periods, rp)
	}
	n, err := mv.Restore(r.Context(), id, req)
	if err != nil {
		return err
	}
	b := []byte(`{"board":`)
	b = appendString(b, id)
	b = append(b, `,"tiers":`...)
	b = strconv.AppendInt(b, int64(n.Tiers), 10)
	b = append(b, `,"periods":`...)
	b = strconv.AppendInt(b, int64(n.Periods), 10)
	b = append(b, `,"results":`...)
	b = strconv.AppendInt(b, int64(n.Results), 10)
	b = append(b, '}')
	writeJSON(w, http.StatusOK, b)
	return nil
}
