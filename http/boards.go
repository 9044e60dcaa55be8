package http

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// boardHandlers serves the boards: list, read, create or change, delete,
// periods, and restore (restore.go).
type boardHandlers struct {
	*base
	eng boardStore
}

// boardStore is what the board handlers call.
type boardStore interface {
	Board(id string) (engine.BoardInfo, error)
	ListBoards(after string, limit, scan int, keep func(*podium.Board) bool) (out []engine.BoardInfo, more string)
	Periods(id string) ([]podium.PeriodCount, error)
	UpdateBoard(ctx context.Context, u *podium.BoardUpdate) (info engine.BoardInfo, created bool, err error)
	DeleteBoard(ctx context.Context, id string) error
	Restore(ctx context.Context, board string, items []engine.RestoreItem) ([]engine.RestoreResult, error)
}

// boardBody is a PUT of a board. Pointer fields tell a field left out (keep
// the board's value) from one given.
type boardBody struct {
	ID     string          `json:"id"`
	Title  *string         `json:"title"`
	Keys   []podium.KeyDef `json:"keys"`
	Mode   *podium.Mode    `json:"mode"`
	Reset  *resetBody      `json:"reset"`
	Public *bool           `json:"public"`
	Meta   json.RawMessage `json:"meta"`

	Keep      *int              `json:"keep"`      // best_k
	Aggregate *podium.Aggregate `json:"aggregate"` // aggregate boards
	// Tournaments and points (tournaments.go).
	Tournament *tournamentBody `json:"tournament"`
	Points     *pointsBody     `json:"points"`
	// League makes the board a league (leagues.go).
	League *podium.League `json:"league"`
	// PlayerSubmit lets player sessions submit (sessions.go).
	PlayerSubmit *bool `json:"player_submit"`
	// Review holds submissions for moderators (review.go).
	Review *podium.Review `json:"review"`
	// Evidence sets the board's evidence policy (evidence.go).
	Evidence *podium.EvidencePolicy `json:"evidence"`
	// Quota caps each player's submissions per period (quota.go).
	Quota *podium.Quota `json:"quota"`
	// RankStyle "shared" adds rank_shared to the answers.
	RankStyle *podium.RankStyle `json:"rank_style"`
	// KeepPeriods keeps that many past periods (0: all).
	KeepPeriods *int `json:"keep_periods"`
	// Groups (groups.go).
	GroupSet   *podium.GroupSet   `json:"group_set"`
	GroupBoard *podium.GroupBoard `json:"group_board"`
}

type resetBody struct {
	Every podium.Every `json:"every"`
	TZ    string       `json:"tz"`
}

func appendBoard(b []byte, bi *engine.BoardInfo) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, bi.ID)
	b = append(b, `,"title":`...)
	b = appendString(b, bi.Title)
	b = append(b, `,"keys":[`...)
	for i, k := range bi.Keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, k.Name)
		b = append(b, `,"order":`...)
		b = appendString(b, string(k.Order))
		if k.Label != "" {
			b = append(b, `,"label":`...)
			b = appendString(b, k.Label)
		}
		if k.Format != "" {
			b = append(b, `,"format":`...)
			b = appendString(b, string(k.Format))
		}
		b = appendKeyBounds(b, &k) // quota.go
		b = append(b, '}')
	}
	b = append(b, `],"mode":`...)
	b = appendString(b, string(bi.Mode))
	b = append(b, `,"reset":{"every":`...)
	b = appendString(b, string(bi.Reset.Every))
	b = append(b, `,"tz":`...)
	b = appendString(b, bi.Reset.TZ)
	b = append(b, `},"public":`...)
	b = strconv.AppendBool(b, bi.Public)
	b = append(b, `,"meta":`...)
	b = appendMeta(b, bi.Meta)
	b = appendFormat(b, &bi.Board) // keep, aggregate
	b = append(b, `,"created_at":`...)
	b = appendTime(b, bi.CreatedAt)
	b = append(b, `,"updated_at":`...)
	b = appendTime(b, bi.UpdatedAt)
	b = append(b, `,"period":`...)
	b = appendString(b, bi.Period)
	b = append(b, `,"next_reset":`...)
	if bi.NextReset == nil {
		b = append(b, "null"...)
	} else {
		b = appendTime(b, *bi.NextReset)
	}
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, bi.Seq, 10)
	b = appendTourneyFields(b, &bi.Board) // tournaments.go
	if bi.League != nil {                 // leagues.go
		b = append(b, `,"league":`...)
		b = appendLeague(b, bi.League)
	}
	if bi.PlayerSubmit {
		b = append(b, `,"player_submit":true`...) // sessions.go
	}
	b = appendReviewSetting(b, bi.Review) // review.go
	if bi.Evidence != nil {               // evidence.go
		ev, _ := json.Marshal(bi.Evidence)
		b = append(b, `,"evidence":`...)
		b = append(b, ev...)
	}
	b = appendQuota(b, bi.Quota) // quota.go
	if bi.RankStyle != "" {
		b = append(b, `,"rank_style":`...)
		b = appendString(b, string(bi.RankStyle))
	}
	if bi.KeepPeriods > 0 {
		b = append(b, `,"keep_periods":`...)
		b = strconv.AppendInt(b, int64(bi.KeepPeriods), 10)
	}
	return appendGroupSettings(b, &bi.Board) // groups.go
}

// What one page of GET /v1/boards may cost: limit boards at most (the
// default and the most), looking at boardsPageScan boards at most (a caller
// who may read few of many boards gets short pages, not a walk of them all),
// and about boardsPageBytes of JSON (a board may carry 4 KiB of meta).
const (
	boardsPageLimit = 1000
	boardsPageScan  = 10_000
	boardsPageBytes = 1 << 20
)

// GET /v1/boards?cursor=&limit=: the boards the caller may read, in id
// order, a page at a time. next_cursor (opaque: the id to go on after) is
// null on the last page; a page may hold fewer than limit boards, even
// none, and still have one.
func (s *boardHandlers) listBoards(w http.ResponseWriter, r *http.Request) error {
	k, err := s.principal(r)
	if err != nil {
		return err
	}
	var after string
	if c, _ := queryValue(r, "cursor"); c != "" { // empty: the first page
		if after, err = parseBoardsCursor(c); err != nil {
			return err
		}
	}
	limit, err := queryInt(r, "limit", boardsPageLimit, 1, boardsPageLimit)
	if err != nil {
		return err
	}
	list, more := s.eng.ListBoards(after, limit, boardsPageScan, func(b *podium.Board) bool {
		return b.Public || k != nil && k.Allows(podium.ScopeRead, b.ID)
	})
	b := []byte(`{"boards":[`)
	for i := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendBoard(b, &list[i])
		if len(b) >= boardsPageBytes && i+1 < len(list) {
			more = list[i].ID
			break
		}
	}
	b = append(b, `],"next_cursor":`...)
	if more != "" {
		b = appendString(b, base64.RawURLEncoding.EncodeToString([]byte(more)))
	} else {
		b = append(b, "null"...)
	}
	writeJSON(w, http.StatusOK, append(b, '}'))
	return nil
}

// parseBoardsCursor reads a cursor of the board list: a board id, base64url
// without padding, so that clients treat it as opaque.
func parseBoardsCursor(c string) (string, error) {
	id, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !podium.ValidBoardID(string(id)) {
		return "", podium.Errorf(podium.ECodeInvalid, "cursor is not one this API returned")
	}
	return string(id), nil
}

func (s *boardHandlers) getBoard(w http.ResponseWriter, r *http.Request) error {
	bi, _, err := s.readableBoard(r, r.PathValue("board"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, appendBoard(nil, &bi))
	return nil
}

func (s *boardHandlers) putBoard(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("board")
	if !podium.ValidBoardID(id) {
		return podium.Errorf(podium.ECodeInvalid, "board id must match [a-z0-9][a-z0-9_.:-]{0,127}")
	}
	if _, err := s.require(r, podium.ScopeAdmin, id); err != nil {
		return err
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	var body boardBody
	if err := decodeStrict(buf.Bytes(), &body); err != nil {
		return err
	}
	if body.ID != "" && body.ID != id {
		return podium.Errorf(podium.ECodeInvalid, "id %q in the body differs from the board %q in the path", body.ID, id)
	}
	u := &podium.BoardUpdate{ID: id, Title: body.Title, Keys: body.Keys, Mode: body.Mode, Public: body.Public, Meta: body.Meta,
		Keep: body.Keep, Aggregate: body.Aggregate, PlayerSubmit: body.PlayerSubmit, Review: body.Review, Evidence: body.Evidence,
		Quota: body.Quota, RankStyle: body.RankStyle, KeepPeriods: body.KeepPeriods, GroupSet: body.GroupSet, GroupBoard: body.GroupBoard}
	if body.Reset != nil {
		u.Reset = &podium.Reset{Every: body.Reset.Every, TZ: body.Reset.TZ}
	}
	u.League = body.League.Clone()                     // leagues.go
	if err := applyTourneyBody(&body, u); err != nil { // tournaments.go
		return err
	}
	// Check the body's own fields here, so that a bad request never
	// reaches the writer; the merged board is checked again there.
	probe := u.Apply(nil)
	probe.Points = nil // its keys and mode may come from the stored board: checked merged (tournaments.go)
	if probe.Keys == nil {
		probe.Keys = []podium.KeyDef{{Name: "k", Order: podium.Desc}} // keys may be left out of an update
	}
	if err := probe.Normalize(); err != nil {
		return err
	}
	bi, created, err := s.eng.UpdateBoard(r.Context(), u)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, appendBoard(nil, &bi))
	return nil
}

func (s *boardHandlers) deleteBoard(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("board")
	if _, err := s.require(r, podium.ScopeAdmin, id); err != nil {
		return err
	}
	if err := s.eng.DeleteBoard(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *boardHandlers) periods(w http.ResponseWriter, r *http.Request) error {
	bi, _, err := s.readableBoard(r, r.PathValue("board"))
	if err != nil {
		return err
	}
	list, err := s.eng.Periods(bi.ID)
	if err != nil {
		return err
	}
	b := []byte(`{"board":`)
	b = appendString(b, bi.ID)
	b = append(b, `,"current":`...)
	b = appendString(b, bi.Period)
	b = append(b, `,"periods":[`...)
	for i, p := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendString(b, p.ID)
		b = append(b, `,"entries":`...)
		b = strconv.AppendInt(b, int64(p.Entries), 10)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	return nil
}
