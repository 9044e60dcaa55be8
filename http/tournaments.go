package http

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/tournament"
)

// tournamentHandlers serves tournaments: list, status, joins,
// participants, settlement and payouts.
type tournamentHandlers struct {
	*base
	eng tournamentStore
	mod tournamentModule // the tournament module
}

// tournamentStore is what the tournament handlers call of the engine.
type tournamentStore interface {
	Tournaments() []engine.BoardInfo
}

// tournamentModule is what the status, join, participant, settle and
// payout handlers call, and the admin's check and reload
// (settlementChecker): the tournament module.
type tournamentModule interface {
	settlementChecker
	Tournament(ctx context.Context, board string) (tournament.TournamentStatus, error)
	Settle(ctx context.Context, board string) (tournament.SettleReport, error)
	Join(ctx context.Context, board, player string) (tournament.JoinResult, error)
	Joined(ctx context.Context, board string, offset, limit int) ([]podium.Join, int64, error)
	Payouts(ctx context.Context, board string) ([]podium.Payout, error)
}

// Tournaments and points (docs/API.md, "Tournaments and points"). The
// settings are part of a board (PUT /v1/boards/{board} with "tournament"
// or "points"); what a tournament does is under /v1/tournaments/{board}.

// tournamentBody is the "tournament" object of a board PUT.
type tournamentBody struct {
	Start           string `json:"start"`
	End             string `json:"end"`
	JoinRequired    bool   `json:"join_required"`
	MaxParticipants int    `json:"max_participants"`
	Weight          int64  `json:"weight"`
	Category        string `json:"category"`
	Series          string `json:"series"`
	Ladder          string `json:"ladder"`
}

// pointsBody is the "points" object of a board PUT.
type pointsBody struct {
	Ladder       string `json:"ladder"`
	Kind         string `json:"kind"`
	Category     string `json:"category"`
	Series       string `json:"series"`
	By           string `json:"by"`
	HalfLifeDays int    `json:"half_life_days"`
}

func (tb *tournamentBody) tournament() (*podium.Tournament, error) {
	parse := func(name, v string) (time.Time, error) {
		if v == "" {
			return time.Time{}, podium.Errorf(podium.ECodeInvalid, "tournament.%s is required (RFC 3339, e.g. 2026-12-01T00:00:00Z)", name)
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return time.Time{}, podium.Errorf(podium.ECodeInvalid, "tournament.%s must be an RFC 3339 time, e.g. 2026-12-01T00:00:00Z", name)
		}
		return t, nil
	}
	start, err := parse("start", tb.Start)
	if err != nil {
		return nil, err
	}
	end, err := parse("end", tb.End)
	if err != nil {
		return nil, err
	}
	return &podium.Tournament{Start: start, End: end, JoinRequired: tb.JoinRequired, MaxParticipants: tb.MaxParticipants,
		Weight: tb.Weight, Category: tb.Category, Series: tb.Series, Ladder: tb.Ladder}, nil
}

// applyTourneyBody copies a PUT's tournament and points objects into u.
func applyTourneyBody(body *boardBody, u *podium.BoardUpdate) error {
	if body.Tournament != nil {
		t, err := body.Tournament.tournament()
		if err != nil {
			return err
		}
		u.Tournament = t
	}
	if p := body.Points; p != nil {
		u.Points = &podium.Points{Ladder: p.Ladder, Kind: p.Kind, Category: p.Category, Series: p.Series, By: p.By, HalfLifeDays: p.HalfLifeDays}
	}
	return nil
}

// appendTourneyFields appends a board's "tournament" or "points" object.
func appendTourneyFields(b []byte, bd *podium.Board) []byte {
	if t := bd.Tournament; t != nil {
		b = append(b, `,"tournament":`...)
		b = appendTournament(b, t)
	}
	if p := bd.Points; p != nil {
		b = append(b, `,"points":{"ladder":`...)
		b = appendString(b, p.Ladder)
		b = append(b, `,"kind":`...)
		b = appendString(b, p.Kind)
		switch p.Kind {
		case podium.PointsCategory:
			b = append(b, `,"category":`...)
			b = appendString(b, p.Category)
		case podium.PointsCurrent:
			b = append(b, `,"half_life_days":`...)
			b = strconv.AppendInt(b, int64(p.HalfLifeDays), 10)
		case podium.PointsBest:
			b = append(b, `,"series":`...)
			b = appendString(b, p.Series)
			b = append(b, `,"by":`...)
			b = appendString(b, p.By)
		}
		b = append(b, '}')
	}
	return b
}

func appendTournament(b []byte, t *podium.Tournament) []byte {
	b = append(b, `{"start":`...)
	b = appendTime(b, t.Start)
	b = append(b, `,"end":`...)
	b = appendTime(b, t.End)
	b = append(b, `,"join_required":`...)
	b = strconv.AppendBool(b, t.JoinRequired)
	b = append(b, `,"max_participants":`...)
	b = strconv.AppendInt(b, int64(t.MaxParticipants), 10)
	b = append(b, `,"weight":`...)
	b = strconv.AppendInt(b, t.Weight, 10)
	b = append(b, `,"category":`...)
	b = appendString(b, t.Category)
	b = append(b, `,"series":`...)
	b = appendString(b, t.Series)
	b = append(b, `,"ladder":`...)
	b = appendString(b, t.Ladder)
	return append(b, '}')
}

// tournamentBoard returns a board the request may read, which must be a
// tournament.
func (s *tournamentHandlers) tournamentBoard(r *http.Request) (engine.BoardInfo, error) {
	bi, _, err := s.readableBoard(r, r.PathValue("board"))
	if err != nil {
		return bi, err
	}
	if bi.Tournament == nil {
		return bi, podium.Errorf(podium.ECodeNotFound, "board %q is not a tournament", bi.ID)
	}
	return bi, nil
}

func appendSettlement(b []byte, st *podium.Settlement) []byte {
	if st == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"settled_at":`...)
	b = appendTime(b, st.SettledAt)
	b = append(b, `,"runs":`...)
	b = strconv.AppendInt(b, st.Runs, 10)
	b = append(b, `,"players":`...)
	b = strconv.AppendInt(b, st.Players, 10)
	b = append(b, `,"paid":`...)
	b = strconv.AppendInt(b, st.Paid, 10)
	b = append(b, `,"epoch":`...)
	b = strconv.AppendInt(b, st.Epoch, 10)
	b = append(b, `,"node":`...)
	b = appendString(b, st.Holder)
	return append(b, '}')
}

func appendStrings(b []byte, list []string) []byte {
	b = append(b, '[')
	for i, v := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, v)
	}
	return append(b, ']')
}

// GET /v1/tournaments/{board}
func (s *tournamentHandlers) getTournament(w http.ResponseWriter, r *http.Request) error {
	bi, err := s.tournamentBoard(r)
	if err != nil {
		return err
	}
	st, err := s.mod.Tournament(r.Context(), bi.ID)
	if err != nil {
		return err
	}
	b := []byte(`{"board":`)
	b = appendString(b, st.Board)
	b = append(b, `,"tournament":`...)
	b = appendTournament(b, &st.Tournament)
	b = append(b, `,"state":`...)
	b = appendString(b, st.State)
	b = append(b, `,"participants":`...)
	b = strconv.AppendInt(b, st.Participants, 10)
	b = append(b, `,"entries":`...)
	b = strconv.AppendInt(b, int64(st.Entries), 10)
	b = append(b, `,"points_boards":`...)
	b = appendStrings(b, st.Targets)
	b = append(b, `,"settlement":`...)
	b = appendSettlement(b, st.Settlement)
	b = append(b, '}')
	writeJSON(w, http.StatusOK, b)
	return nil
}

// GET /v1/tournaments
func (s *tournamentHandlers) listTournaments(w http.ResponseWriter, r *http.Request) error {
	k, err := s.principal(r)
	if err != nil {
		return err
	}
	b := []byte(`{"tournaments":[`)
	n := 0
	for _, bi := range s.eng.Tournaments() {
		if bi.Tournament == nil || !bi.Public && (k == nil || !k.Allows(podium.ScopeRead, bi.ID)) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"board":`...)
		b = appendString(b, bi.ID)
		b = append(b, `,"title":`...)
		b = appendString(b, bi.Title)
		b = append(b, `,"tournament":`...)
		b = appendTournament(b, bi.Tournament)
		b = append(b, '}')
		n++
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	return nil
}

type joinBody struct {
	Player string `json:"player"`
}

// POST /v1/tournaments/{board}/join: scope submit on the board.
func (s *tournamentHandlers) join(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("board")
	if _, err := s.require(r, podium.ScopeSubmit, id); err != nil {
		return err
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	var body joinBody
	if err := decodeStrict(buf.Bytes(), &body); err != nil {
		return err
	}
	if err := podium.ValidPlayerID(body.Player); err != nil {
		return err
	}
	res, err := s.mod.Join(r.Context(), id, body.Player)
	if err != nil {
		return err
	}
	b := []byte(`{"board":`)
	b = appendString(b, res.Board)
	b = append(b, `,"player":`...)
	b = appendString(b, res.Player)
	b = append(b, `,"joined":true,"already":`...)
	b = strconv.AppendBool(b, res.Already)
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, res.N, 10)
	b = append(b, `,"participants":`...)
	b = strconv.AppendInt(b, res.Participants, 10)
	b = append(b, '}')
	status := http.StatusCreated
	if res.Already {
		status = http.StatusOK
	}
	writeJSON(w, status, b)
	return nil
}

// GET /v1/tournaments/{board}/participants?offset=&limit=
func (s *tournamentHandlers) participants(w http.ResponseWriter, r *http.Request) error {
	bi, err := s.tournamentBoard(r)
	if err != nil {
		return err
	}
	offset, limit, err := queryPage(r)
	if err != nil {
		return err
	}
	list, total, err := s.mod.Joined(r.Context(), bi.ID, offset, limit)
	if err != nil {
		return err
	}
	b := []byte(`{"board":`)
	b = appendString(b, bi.ID)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, `,"participants":[`...)
	for i, j := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"player":`...)
		b = appendString(b, j.Player)
		b = append(b, `,"n":`...)
		b = strconv.AppendInt(b, j.N, 10)
		b = append(b, `,"joined_at":`...)
		b = appendTime(b, j.At)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	return nil
}

// POST /v1/tournaments/{board}/settle: scope admin on the board; no body.
func (s *tournamentHandlers) settle(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("board")
	if _, err := s.require(r, podium.ScopeAdmin, id); err != nil {
		return err
	}
	if err := readNoBody(r, s.maxBody); err != nil {
		return err
	}
	rep, err := s.mod.Settle(r.Context(), id)
	if err != nil {
		return err
	}
	b := []byte(`{"board":`)
	b = appendString(b, rep.Board)
	b = append(b, `,"run":`...)
	b = strconv.AppendInt(b, rep.Runs, 10)
	b = append(b, `,"settled_at":`...)
	b = appendTime(b, rep.SettledAt)
	b = append(b, `,"players":`...)
	b = strconv.AppendInt(b, rep.Players, 10)
	b = append(b, `,"paid":`...)
	b = strconv.AppendInt(b, rep.Paid, 10)
	b = append(b, `,"changed":`...)
	b = strconv.AppendInt(b, int64(rep.Changed), 10)
	b = append(b, `,"credits":`...)
	b = strconv.AppendInt(b, int64(rep.Credits), 10)
	b = append(b, `,"rebased":`...)
	b = strconv.AppendInt(b, int64(rep.Rebased), 10)
	b = append(b, `,"epoch":`...)
	b = strconv.AppendInt(b, rep.Epoch, 10)
	b = append(b, `,"points_boards":`...)
	b = appendStrings(b, rep.Targets)
	b = append(b, '}')
	writeJSON(w, http.StatusOK, b)
	return nil
}

// GET /v1/tournaments/{board}/payouts?offset=&limit=
func (s *tournamentHandlers) payouts(w http.ResponseWriter, r *http.Request) error {
	bi, err := s.tournamentBoard(r)
	if err != nil {
		return err
	}
	offset, limit, err := queryPage(r)
	if err != nil {
		return err
	}
	list, err := s.mod.Payouts(r.Context(), bi.ID)
	if err != nil {
		return err
	}
	total := len(list)
	list = list[min(offset, len(list)):]
	list = list[:min(limit, len(list))]
	b := []byte(`{"board":`)
	b = appendString(b, bi.ID)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	b = append(b, `,"payouts":[`...)
	for i, p := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"player":`...)
		b = appendString(b, p.Player)
		b = append(b, `,"rank":`...)
		if p.Rank == 0 {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, p.Rank, 10)
		}
		b = append(b, `,"points":`...)
		b = strconv.AppendInt(b, p.Points, 10)
		b = append(b, `,"at":`...)
		b = appendTime(b, p.At)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	return nil
}

// tourneyRoutes registers the tournament endpoints.
func (s *Server) tourneyRoutes() {
	s.mux.HandleFunc("GET /v1/tournaments", s.api(s.tourneys.listTournaments))
	s.mux.HandleFunc("GET /v1/tournaments/{board}", s.api(s.tourneys.getTournament))
	s.mux.HandleFunc("POST /v1/tournaments/{board}/join", s.api(s.tourneys.join))
	s.mux.HandleFunc("GET /v1/tournaments/{board}/participants", s.api(s.tourneys.participants, "offset", "limit"))
	s.mux.HandleFunc("POST /v1/tournaments/{board}/settle", s.api(s.tourneys.settle))
	s.mux.HandleFunc("GET /v1/tournaments/{board}/payouts", s.api(s.tourneys.payouts, "offset", "limit"))
}
