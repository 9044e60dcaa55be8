package http

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/league"
)

// Leagues (docs/API.md, "Leagues"). The settings are part of a board (PUT
// /v1/boards/{board} with "league"); scores go to the board as to any
// board; what a league adds is under /v1/leagues/{board}.

// leagueHandlers serves leagues: status, a player's standing, cohort and
// history, a tier's cohorts, a cohort, and settlement.
type leagueHandlers struct {
	*base
	*streamer // the cohort stream (leagues_stream.go)
	eng       leagueBoards
	mod       leagueModule
	rereadErr func(error) error // tests: sees, and may replace, a followed cohort's re-read error
}

// leagueBoards is what the league handlers call of the engine.
type leagueBoards interface {
	ListBoards(after string, limit, scan int, keep func(*podium.Board) bool) (out []engine.BoardInfo, more string)
}

// leagueModule is the league module (league.Module), or noLeagues.
type leagueModule interface {
	Status(ctx context.Context, board string) (league.Status, error)
	Standing(ctx context.Context, board, player, period string) (league.Standing, error)
	Cohort(ctx context.Context, board, period string, tier, cohort int) (league.Cohort, error)
	Cohorts(ctx context.Context, board, period string, tier, offset, limit int) ([]podium.CohortCount, int64, string, error)
	History(ctx context.Context, board, player string) ([]league.HistoryItem, error)
	Settle(ctx context.Context, board string) ([]league.SettleReport, error)
}

var _ leagueModule = (*league.Module)(nil)

// leagueBoard returns a board the request may read, which must be a
// league.
func (s *leagueHandlers) leagueBoard(r *http.Request) (engine.BoardInfo, error) {
	bi, _, err := s.readableBoard(r, r.PathValue("board"))
	if err != nil {
		return bi, err
	}
	if bi.League == nil {
		return bi, podium.Errorf(podium.ECodeNotFound, "board %q is not a league", bi.ID)
	}
	return bi, nil
}

// pathPlayer is the {player} of a path, checked.
func pathPlayer(r *http.Request) (string, error) {
	p := r.PathValue("player")
	return p, podium.ValidPlayerID(p)
}

// pathTier is the {tier} of a path: a tier's name.
func pathTier(r *http.Request, l *podium.League) (int, error) {
	return league.TierIndex(l, r.PathValue("tier"))
}

func appendLeague(b []byte, l *podium.League) []byte {
	doc, _ := json.Marshal(l) // plain types: cannot fail
	return append(b, doc...)
}

// GET /v1/leagues
func (s *leagueHandlers) listLeagues(w http.ResponseWriter, r *http.Request) error {
	k, err := s.principal(r)
	if err != nil {
		return err
	}
	list, _ := s.eng.ListBoards("", podium.MaxLeagueList, 0, func(b *podium.Board) bool {
		return b.League != nil && (b.Public || k != nil && k.Allows(podium.ScopeRead, b.ID))
	})
	b := []byte(`{"leagues":[`)
	for i, bi := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"board":`...)
		b = appendString(b, bi.ID)
		b = append(b, `,"title":`...)
		b = appendString(b, bi.Title)
		b = append(b, `,"period":`...)
		b = appendString(b, bi.Period)
		b = append(b, `,"league":`...)
		b = appendLeague(b, bi.League)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	return nil
}

// GET /v1/leagues/{board}
func (s *leagueHandlers) getLeague(w http.ResponseWriter, r *http.Request) error {
	bi, err := s.leagueBoard(r)
	if err != nil {
		return err
	}
	st, err := s.mod.Status(r.Context(), bi.ID)
	if err != nil {
		return err
	}
	b := []byte(`{"board":`)
	b = appendString(b, st.Board)
	b = append(b, `,"league":`...)
	b = appendLeague(b, &st.League)
	b = append(b, `,"period":`...)
	b = appendString(b, st.Period.ID)
	b = append(b, `,"period_end":`...)
	b = appendTime(b, st.Period.End)
	b = append(b, `,"tiers":[`...)
	for i, t := range st.Tiers {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"tier":`...)
		b = appendString(b, t.Name)
		b = append(b, `,"promote":`...)
		b = strconv.AppendInt(b, int64(t.Promote), 10)
		b = append(b, `,"relegate":`...)
		b = strconv.AppendInt(b, int64(t.Relegate), 10)
		b = append(b, `,"members":`...)
		b = strconv.AppendInt(b, t.Members, 10)
		b = append(b, `,"cohorts":`...)
		b = strconv.AppendInt(b, t.Cohorts, 10)
		b = append(b, '}')
	}
	b = append(b, `],"periods":[`...)
	for i := range st.Periods {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendLeaguePeriod(b, &st.Periods[i])
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	return nil
}

func appendLeaguePeriod(b []byte, p *podium.LeaguePeriod) []byte {
	b = append(b, `{"period":`...)
	b = appendString(b, p.Period)
	b = append(b, `,"start":`...)
	b = appendTime(b, p.Start)
	b = append(b, `,"settlement":`...)
	if !p.Settled() {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"settled_at":`...)
		b = appendTime(b, p.SettledAt)
		b = append(b, `,"players":`...)
		b = strconv.AppendInt(b, p.Players, 10)
		b = append(b, `,"promoted":`...)
		b = strconv.AppendInt(b, p.Promoted, 10)
		b = append(b, `,"relegated":`...)
		b = strconv.AppendInt(b, p.Relegated, 10)
		b = append(b, `,"epoch":`...)
		b = strconv.AppendInt(b, p.Epoch, 10)
		b = append(b, `,"node":`...)
		b = appendString(b, p.Holder)
		b = append(b, '}')
	}
	return append(b, '}')
}

func appendStanding(b []byte, st *league.Standing) []byte {
	b = append(b, `"board":`...)
	b = appendString(b, st.Board)
	b = append(b, `,"period":`...)
	b = appendString(b, st.Period)
	b = append(b, `,"placed":`...)
	b = strconv.AppendBool(b, st.Placed)
	b = append(b, `,"tier":`...)
	b = appendString(b, st.TierName)
	b = append(b, `,"tier_index":`...)
	b = strconv.AppendInt(b, int64(st.Tier), 10)
	b = append(b, `,"cohort":`...)
	if st.Placed {
		b = strconv.AppendInt(b, int64(st.Cohort), 10)
	} else {
		b = append(b, "null"...)
	}
	return b
}

// GET /v1/leagues/{board}/players/{player}?period=
func (s *leagueHandlers) standing(w http.ResponseWriter, r *http.Request) error {
	bi, err := s.leagueBoard(r)
	if err != nil {
		return err
	}
	player, err := pathPlayer(r)
	if err != nil {
		return err
	}
	period, _ := queryValue(r, "period")
	st, err := s.mod.Standing(r.Context(), bi.ID, player, period)
	if err != nil {
		return err
	}
	b := []byte(`{"player":`)
	b = appendString(b, player)
	b = append(b, ',')
	b = appendStanding(b, &st)
	b = append(b, '}')
	writeJSON(w, http.StatusOK, b)
	return nil
}

func appendCohort(b []byte, c *league.Cohort) []byte {
	b = append(b, `"tier":`...)
	b = appendString(b, c.TierName)
	b = append(b, `,"cohort":`...)
	b = strconv.AppendInt(b, int64(c.Cohort), 10)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(c.Size), 10)
	b = append(b, `,"entries":[`...)
	for i, e := range c.Entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"rank":`...)
		b = strconv.AppendInt(b, int64(e.Rank), 10)
		b = append(b, `,"zone":`...)
		b = appendString(b, e.Zone)
		b = append(b, `,"player":`...)
		b = appendString(b, e.Player)
		b = append(b, `,"name":`...)
		b = appendString(b, e.Name)
		b = append(b, `,"keys":`...)
		if e.Keys == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for j, k := range e.Keys {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, k, 10)
			}
			b = append(b, ']')
		}
		b = append(b, `,"board_rank":`...)
		if e.BoardRank == 0 {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, int64(e.BoardRank), 10)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// GET /v1/leagues/{board}/players/{player}/cohort?period=
func (s *leagueHandlers) myCohort(w http.ResponseWriter, r *http.Request) error {
	bi, err := s.leagueBoard(r)
	if err != nil {
		return err
	}
	player, err := pathPlayer(r)
	if err != nil {
		return err
	}
	period, _ := queryValue(r, "period")
	st, err := s.mod.Standing(r.Context(), bi.ID, player, period)
	if err != nil {
		return err
	}
	if !st.Placed {
		return podium.Errorf(podium.ECodeNotFound, "player %q has not played league %q in period %s", player, bi.ID, st.Period)
	}
	c, err := s.mod.Cohort(r.Context(), bi.ID, st.Period, st.Tier, st.Cohort)
	if err != nil {
		return err
	}
	b := []byte(`{"player":`)
	b = appendString(b, player)
	b = append(b, `,"board":`...)
	b = appendString(b, bi.ID)
	b = append(b, `,"period":`...)
	b = appendString(b, c.Period)
	b = append(b, ',')
	b = appendCohort(b, &c)
	b = append(b, '}')
	writeJSON(w, http.StatusOK, b)
	return nil
}

// GET /v1/leagues/{board}/players/{player}/history
func (s *leagueHandlers) history(w http.ResponseWriter, r *http.Request) error {
	bi, err := s.leagueBoard(r)
	if err != nil {
		return err
	}
	player, err := pathPlayer(r)
	if err != nil {
		return err
	}
	hs, err := s.mod.History(r.Context(), bi.ID, player)
	if err != nil {
		return err
	}
	b := []byte(`{"player":`)
	b = appendString(b, player)
	b = append(b, `,"board":`...)
	b = appendString(b, bi.ID)
	b = append(b, `,"periods":[`...)
	for i, h := range hs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"period":`...)
		b = appendString(b, h.Period)
		b = append(b, `,"tier":`...)
		b = appendString(b, h.TierName)
		b = append(b, `,"cohort":`...)
		if h.Cohort < 0 {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, int64(h.Cohort), 10)
		}
		b = append(b, `,"settled":`...)
		b = strconv.AppendBool(b, h.Settled)
		if h.Settled {
			b = append(b, `,"rank":`...)
			if h.Rank == 0 {
				b = append(b, "null"...)
			} else {
				b = strconv.AppendInt(b, int64(h.Rank), 10)
			}
			b = append(b, `,"outcome":`...)
			b = appendString(b, h.Outcome)
			b = append(b, `,"next_tier":`...)
			b = appendString(b, h.NewName)
		}
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	return nil
}

// GET /v1/leagues/{board}/tiers/{tier}/cohorts?period=&offset=&limit=
func (s *leagueHandlers) cohorts(w http.ResponseWriter, r *http.Request) error {
	bi, err := s.leagueBoard(r)
	if err != nil {
		return err
	}
	tier, err := pathTier(r, bi.League)
	if err != nil {
		return err
	}
	offset, limit, err := queryPage(r)
	if err != nil {
		return err
	}
	period, _ := queryValue(r, "period")
	list, total, pid, err := s.mod.Cohorts(r.Context(), bi.ID, period, tier, offset, limit)
	if err != nil {
		return err
	}
	b := []byte(`{"board":`)
	b = appendString(b, bi.ID)
	b = append(b, `,"period":`...)
	b = appendString(b, pid)
	b = append(b, `,"tier":`...)
	b = appendString(b, bi.League.Tiers[tier].Name)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, `,"cohorts":[`...)
	for i, c := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"cohort":`...)
		b = strconv.AppendInt(b, int64(c.Cohort), 10)
		b = append(b, `,"members":`...)
		b = strconv.AppendInt(b, int64(c.Members), 10)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	return nil
}

// GET /v1/leagues/{board}/tiers/{tier}/cohorts/{cohort}?period=
func (s *leagueHandlers) cohort(w http.ResponseWriter, r *http.Request) error {
	bi, err := s.leagueBoard(r)
	if err != nil {
		return err
	}
	tier, err := pathTier(r, bi.League)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(r.PathValue("cohort"))
	if err != nil || n < 0 || n > podium.MaxCohortIndex {
		return podium.Errorf(podium.ECodeInvalid, "cohort must be a number from 0 to %d", podium.MaxCohortIndex)
	}
	period, _ := queryValue(r, "period")
	c, err := s.mod.Cohort(r.Context(), bi.ID, period, tier, n)
	if err != nil {
		return err
	}
	b := []byte(`{"board":`)
	b = appendString(b, bi.ID)
	b = append(b, `,"period":`...)
	b = appendString(b, c.Period)
	b = append(b, ',')
	b = appendCohort(b, &c)
	b = append(b, '}')
	writeJSON(w, http.StatusOK, b)
	return nil
}

// POST /v1/leagues/{board}/settle: scope admin on the board; no body.
// Settles the league's ended periods that are not settled.
func (s *leagueHandlers) settle(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("board")
	if _, err := s.require(r, podium.ScopeAdmin, id); err != nil {
		return err
	}
	if err := readNoBody(r, s.maxBody); err != nil {
		return err
	}
	rs, err := s.mod.Settle(r.Context(), id)
	if err != nil {
		return err
	}
	b := []byte(`{"board":`)
	b = appendString(b, id)
	b = append(b, `,"settled":[`...)
	for i, rep := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"period":`...)
		b = appendString(b, rep.Period)
		b = append(b, `,"already":`...)
		b = strconv.AppendBool(b, rep.Already)
		b = append(b, `,"players":`...)
		b = strconv.AppendInt(b, rep.Players, 10)
		b = append(b, `,"promoted":`...)
		b = strconv.AppendInt(b, rep.Promoted, 10)
		b = append(b, `,"relegated":`...)
		b = strconv.AppendInt(b, rep.Relegated, 10)
		b = append(b, `,"dropped":`...)
		b = strconv.AppendInt(b, rep.Dropped, 10)
		b = append(b, `,"epoch":`...)
		b = strconv.AppendInt(b, rep.Epoch, 10)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	return nil
}

// leagueRoutes registers the league endpoints.
func (s *Server) leagueRoutes() {
	s.mux.HandleFunc("GET /v1/leagues", s.api(s.leagues.listLeagues))
	s.mux.HandleFunc("GET /v1/leagues/{board}", s.api(s.leagues.getLeague))
	s.mux.HandleFunc("GET /v1/leagues/{board}/players/{player}", s.api(s.leagues.standing, "period"))
	s.mux.HandleFunc("GET /v1/leagues/{board}/players/{player}/cohort", s.api(s.leagues.myCohort, "period"))
	s.mux.HandleFunc("GET /v1/leagues/{board}/players/{player}/cohort/stream", s.api(s.leagues.cohortSSE))
	s.mux.HandleFunc("GET /v1/leagues/{board}/players/{player}/history", s.api(s.leagues.history))
	s.mux.HandleFunc("GET /v1/leagues/{board}/tiers/{tier}/cohorts", s.api(s.leagues.cohorts, "period", "offset", "limit"))
	s.mux.HandleFunc("GET /v1/leagues/{board}/tiers/{tier}/cohorts/{cohort}", s.api(s.leagues.cohort, "period"))
	s.mux.HandleFunc("POST /v1/leagues/{board}/settle", s.api(s.leagues.settle))
	s.mux.HandleFunc("GET /v1/leagues/{board}/export", s.api(s.leagues.exportLeague, "part", "period", "after", "limit")) // leagues_export.go
	s.mux.HandleFunc("POST /v1/leagues/{board}/restore", s.api(s.leagues.restoreLeague))                                  // leagues_restore.go
}
