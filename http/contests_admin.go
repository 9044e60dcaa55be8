package http

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/ctf"
)

// Admin additions to the contests: reveals, challenges, deletes, and the
// live stream.

// unfreezeContest reveals the final standings; before the end only with
// {"force": true}.
func (s *contestHandlers) unfreezeContest(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("contest")
	if _, err := s.require(r, podium.ScopeAdmin, id); err != nil {
		return err
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	var body struct {
		Force bool `json:"force"`
	}
	if len(buf.Bytes()) > 0 {
		if err := decodeStrict(buf.Bytes(), &body); err != nil {
			return err
		}
	}
	c, err := s.contests.Unfreeze(r.Context(), id, body.Force)
	if err != nil {
		return err
	}
	return writeAny(w, http.StatusOK, s.contestOut(&c))
}

// refreezeContest undoes a reveal before the end.
func (s *contestHandlers) refreezeContest(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("contest")
	if _, err := s.require(r, podium.ScopeAdmin, id); err != nil {
		return err
	}
	if err := emptyBody(r, s.maxBody); err != nil {
		return err
	}
	c, err := s.contests.Refreeze(r.Context(), id)
	if err != nil {
		return err
	}
	return writeAny(w, http.StatusOK, s.contestOut(&c))
}

// scoringBody and challengeBody are a PUT of a challenge: a field left
// out (nil) keeps the stored value.
type scoringBody struct {
	Function   *string         `json:"function"`
	Value      *int64          `json:"value"`
	Minimum    *int64          `json:"minimum"`
	Decay      *int64          `json:"decay"`
	MinRate    json.RawMessage `json:"min_rate"`
	Difficulty json.RawMessage `json:"difficulty"`
}

type challengeBody struct {
	ID       string       `json:"id"`
	Name     *string      `json:"name"`
	Category *string      `json:"category"`
	Order    *int64       `json:"order"`
	Hidden   *bool        `json:"hidden"`
	Scoring  *scoringBody `json:"scoring"`
}

// number parses a JSON number that the strict decoder kept raw; nil when
// absent.
func number(field string, raw json.RawMessage) (*float64, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || raw[0] == '"' {
		return nil, podium.Errorf(podium.ECodeInvalid, "%s must be a number", field)
	}
	return &f, nil
}

// putChallenge creates a challenge or changes the fields the body gives
// (docs/API.md, "Challenges"). A change that moves the standings (the
// scoring or hidden flag of a challenge with solves) is 409 unless
// ?confirm=true; ?preview=true answers what it would do and stores
// nothing.
func (s *contestHandlers) putChallenge(w http.ResponseWriter, r *http.Request) error {
	id, chID := r.PathValue("contest"), r.PathValue("challenge")
	if _, err := s.require(r, podium.ScopeAdmin, id); err != nil {
		return err
	}
	if !contest.ValidChallengeID(chID) {
		return podium.Errorf(podium.ECodeInvalid, "challenge id must match [a-z0-9][a-z0-9_.:-]{0,63}")
	}
	confirm, err := queryBool(r, "confirm")
	if err != nil {
		return err
	}
	preview, err := queryBool(r, "preview")
	if err != nil {
		return err
	}
	if confirm && preview {
		return podium.Errorf(podium.ECodeInvalid, "confirm and preview exclude each other: preview stores nothing")
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	var body challengeBody
	if err := decodeStrict(buf.Bytes(), &body); err != nil {
		return err
	}
	if body.ID != "" && body.ID != chID {
		return podium.Errorf(podium.ECodeInvalid, "id %q in the body differs from the challenge %q in the path", body.ID, chID)
	}
	p := &ctf.ChallengePatch{Name: body.Name, Category: body.Category, Order: body.Order, Hidden: body.Hidden}
	if sb := body.Scoring; sb != nil {
		p.Scoring = &ctf.ScoringPatch{Function: sb.Function, Value: sb.Value, Minimum: sb.Minimum, Decay: sb.Decay}
		if p.Scoring.MinRate, err = number("scoring.min_rate", sb.MinRate); err != nil {
			return err
		}
		if p.Scoring.Difficulty, err = number("scoring.difficulty", sb.Difficulty); err != nil {
			return err
		}
	}
	mode := ctf.Guarded
	switch {
	case confirm:
		mode = ctf.Confirmed
	case preview:
		mode = ctf.Preview
	}
	out, im, err := s.contests.PatchChallenge(r.Context(), id, chID, p, mode)
	if err != nil {
		return err
	}
	if preview {
		return writeAny(w, http.StatusOK, s.impactOut(im))
	}
	status := http.StatusOK
	if im.Created {
		status = http.StatusCreated
	}
	return writeAny(w, status, challengeOut(&out))
}

type teamChangeJSON struct {
	Team     string `json:"team"`
	Name     string `json:"name"`
	Hidden   bool   `json:"hidden,omitempty"`
	OldScore int64  `json:"old_score"`
	NewScore int64  `json:"new_score"`
	OldRank  *int   `json:"old_rank"`
	NewRank  *int   `json:"new_rank"`
}

// impactOut is the answer of a preview.
func (s *contestHandlers) impactOut(im *ctf.Impact) map[string]any {
	rank := func(r int) *int {
		if r == 0 {
			return nil
		}
		return &r
	}
	teams := make([]teamChangeJSON, len(im.Teams))
	for i, t := range im.Teams {
		teams[i] = teamChangeJSON{Team: t.Team, Name: s.name(t.Team), Hidden: t.Hidden, OldScore: t.OldScore, NewScore: t.NewScore,
			OldRank: rank(t.OldRank), NewRank: rank(t.NewRank)}
	}
	var old any
	if !im.Created {
		old = challengeOut(&im.Old)
	}
	return map[string]any{"preview": true, "created": im.Created, "old": old, "new": challengeOut(&im.New),
		"solves": im.Solves, "moves_standings": im.Moves, "value": map[string]*int64{"old": im.OldValue, "new": im.NewValue},
		"teams": teams}
}

// DELETE /v1/contests/{contest}: the contest with its challenges, solves,
// audit log and snapshots. Its streams end with an error event.
func (s *contestHandlers) deleteContest(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("contest")
	if _, err := s.require(r, podium.ScopeAdmin, id); err != nil {
		return err
	}
	if err := emptyBody(r, s.maxBody); err != nil {
		return err
	}
	if err := s.contests.DeleteContest(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// DELETE /v1/contests/{contest}/challenges/{challenge}: a challenge no
// team solved (409 otherwise).
func (s *contestHandlers) deleteChallenge(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("contest")
	if _, err := s.require(r, podium.ScopeAdmin, id); err != nil {
		return err
	}
	if err := emptyBody(r, s.maxBody); err != nil {
		return err
	}
	if err := s.contests.DeleteChallenge(r.Context(), id, r.PathValue("challenge")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// liveWindow is the name, in the contest hub, of the window of a
// contest's live standings. A contest id cannot contain '/', so it never
// names a public window. The hub lets everyone read it (the view says
// public): the handler lets only admin keys of the contest subscribe, and
// keys do not change their scopes, only end (revoked: the hub ends their
// connections).
const livePrefix = "live/"

func liveWindow(id string) string { return livePrefix + id }

func liveContest(window string) (string, bool) { return strings.CutPrefix(window, livePrefix) }

// streamView parses ?view= of the contest stream: public (the default) or
// live, for admin keys of the contest.
func (s *contestHandlers) streamView(r *http.Request, id string) (live bool, err error) {
	switch v, _ := queryValue(r, "view"); v {
	case "", "public":
		return false, nil
	case "live":
		if _, err := s.require(r, podium.ScopeAdmin, id); err != nil {
			if podium.ErrorCode(err) == podium.ECodeForbidden {
				return false, podium.Errorf(podium.ECodeForbidden, "the live stream of a contest needs an admin key of the contest")
			}
			return false, err
		}
		return true, nil
	}
	return false, podium.Errorf(podium.ECodeInvalid, "view must be public or live")
}
