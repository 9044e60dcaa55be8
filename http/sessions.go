package http

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/sessions"
)

// sessionHandlers serves player sessions: issue, list, refresh, revoke.
type sessionHandlers struct {
	*base
	eng sessionStore
}

// sessionStore is what the session handlers call: the sessions module
// (package sessions).
type sessionStore interface {
	SessionDefaults() (ttl, maxTTL time.Duration, limit int)
	SessionByMarker(ctx context.Context, marker string) (*podium.Session, error)
	IssueSession(ctx context.Context, player, device string, ttl time.Duration, marker string) (podium.Session, string, error)
	PlayerSessions(ctx context.Context, player string) ([]podium.Session, error)
	RefreshSession(ctx context.Context, player, id string) (podium.Session, string, error)
	RevokeSessions(ctx context.Context, player, id string) ([]string, error)
}

var _ sessionStore = (*sessions.Module)(nil)

// Player sessions: a key with the sessions scope (or admin) issues a
// bearer token that acts as one player (docs/API.md "Player sessions").

func (s *Server) sessionRoutes() {
	s.mux.HandleFunc("POST /v1/players/{player}/sessions", s.api(s.sessions.issueSession))
	s.mux.HandleFunc("GET /v1/players/{player}/sessions", s.api(s.sessions.listSessions))
	s.mux.HandleFunc("DELETE /v1/players/{player}/sessions", s.api(s.sessions.revokeSessions))
	s.mux.HandleFunc("DELETE /v1/players/{player}/sessions/{id}", s.api(s.sessions.revokeSession))
	s.mux.HandleFunc("POST /v1/players/{player}/sessions/{id}/refresh", s.api(s.sessions.refreshSession))
}

type sessionBody struct {
	Device     string `json:"device"`
	TTLSeconds int64  `json:"ttl_seconds"` // 0: the server's default
}

// sessionAccess authorises a request about a player's sessions: an
// unrestricted key with the sessions scope (admin holds it) may do
// anything; a session of the same player may do what self allows
// (selfID "": any session of the player; else only that session);
// nothing else may. It returns the key it authorised: a handler uses
// that one rather than authenticating again, which would find nothing if
// the key was revoked in between.
func (s *sessionHandlers) sessionAccess(r *http.Request, player string, self bool, selfID string) (*podium.APIKey, error) {
	k, err := s.principal(r)
	if err != nil {
		return nil, err
	}
	if k == nil {
		return nil, podium.Errorf(podium.ECodeUnauthenticated, "this request needs an API key or a session: send Authorization: Bearer <token>")
	}
	if k.Player != "" {
		if !self || k.Player != player || selfID != "" && k.ID != selfID {
			return nil, podium.Errorf(podium.ECodeForbidden, "a player session may not do this")
		}
		return k, nil
	}
	if !k.Allows(podium.ScopeSessions, "") {
		return nil, podium.Errorf(podium.ECodeForbidden, "this key lacks the sessions scope")
	}
	if len(k.Boards) > 0 {
		return nil, podium.Errorf(podium.ECodeForbidden, "this key is limited to some boards; player sessions need a key that is not")
	}
	return k, nil
}

func appendSession(b []byte, ses *podium.Session, token string) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, ses.ID)
	b = append(b, `,"player":`...)
	b = appendString(b, ses.Player)
	b = append(b, `,"device":`...)
	b = appendString(b, ses.Device)
	b = append(b, `,"created_at":`...)
	b = appendTime(b, ses.CreatedAt)
	b = append(b, `,"refreshed_at":`...)
	b = appendTime(b, ses.RefreshedAt)
	b = append(b, `,"expires_at":`...)
	b = appendTime(b, ses.ExpiresAt)
	if token != "" {
		b = append(b, `,"token":`...)
		b = appendString(b, token)
	}
	return append(b, '}')
}

// issueSession serves POST /v1/players/{player}/sessions. A retry with
// the same Idempotency-Key is 409: the token was shown once and is not
// kept, so it cannot be answered again (docs/API.md).
func (s *sessionHandlers) issueSession(w http.ResponseWriter, r *http.Request) error {
	player := r.PathValue("player")
	k, err := s.sessionAccess(r, player, false, "")
	if err != nil {
		return err
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	var body sessionBody
	if err := decodeStrict(buf.Bytes(), &body); err != nil {
		return err
	}
	_, maxTTL, _ := s.eng.SessionDefaults()
	if body.TTLSeconds < 0 || body.TTLSeconds > int64(maxTTL/time.Second) {
		return podium.Errorf(podium.ECodeInvalid, "ttl_seconds must be 0 (the default) to %d", int64(maxTTL/time.Second))
	}
	marker := ""
	if ik := r.Header.Get("Idempotency-Key"); ik != "" {
		if len(ik) > 255 {
			return podium.Errorf(podium.ECodeInvalid, "Idempotency-Key is longer than 255 bytes")
		}
		h := sha256.Sum256([]byte(k.ID + "\x00" + r.URL.Path + "\x00" + ik))
		marker = hex.EncodeToString(h[:])
		prior, err := s.eng.SessionByMarker(r.Context(), marker)
		if err != nil {
			return err
		}
		if prior != nil {
			return alreadyIssued(prior.ID)
		}
	}
	ses, token, err := s.eng.IssueSession(r.Context(), player, body.Device, time.Duration(body.TTLSeconds)*time.Second, marker)
	if podium.ErrorCode(err) == podium.ECodeConflict && marker != "" {
		if prior, _ := s.eng.SessionByMarker(r.Context(), marker); prior != nil {
			return alreadyIssued(prior.ID) // a concurrent twin won
		}
	}
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, appendSession(nil, &ses, token))
	return nil
}

func alreadyIssued(id string) error {
	return podium.Errorf(podium.ECodeConflict, "session %s was already issued under this Idempotency-Key; its token was shown once and is not kept: use it, or revoke the session and issue another with a new key", id)
}

// listSessions serves GET /v1/players/{player}/sessions (never a token).
func (s *sessionHandlers) listSessions(w http.ResponseWriter, r *http.Request) error {
	player := r.PathValue("player")
	if _, err := s.sessionAccess(r, player, true, ""); err != nil {
		return err
	}
	list, err := s.eng.PlayerSessions(r.Context(), player)
	if err != nil {
		return err
	}
	b := appendList([]byte(`{"sessions":[`), list, func(b []byte, s *podium.Session) []byte { return appendSession(b, s, "") })
	writeJSON(w, http.StatusOK, append(b, "]}"...))
	return nil
}

// revokeSession serves DELETE /v1/players/{player}/sessions/{id}: a
// session may sign out itself or another device of its player.
func (s *sessionHandlers) revokeSession(w http.ResponseWriter, r *http.Request) error {
	player := r.PathValue("player")
	if _, err := s.sessionAccess(r, player, true, ""); err != nil {
		return err
	}
	if _, err := s.eng.RevokeSessions(r.Context(), player, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// revokeSessions serves DELETE /v1/players/{player}/sessions: log out
// everywhere.
func (s *sessionHandlers) revokeSessions(w http.ResponseWriter, r *http.Request) error {
	player := r.PathValue("player")
	if _, err := s.sessionAccess(r, player, true, ""); err != nil {
		return err
	}
	ids, err := s.eng.RevokeSessions(r.Context(), player, "")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, append(strconv.AppendInt([]byte(`{"revoked":`), int64(len(ids)), 10), '}'))
	return nil
}

// refreshSession serves POST /v1/players/{player}/sessions/{id}/refresh:
// a new token (shown once) for the session, the old one dead at once.
func (s *sessionHandlers) refreshSession(w http.ResponseWriter, r *http.Request) error {
	player, id := r.PathValue("player"), r.PathValue("id")
	if _, err := s.sessionAccess(r, player, true, id); err != nil {
		return err
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	if buf.Len() > 0 {
		var none struct{}
		if err := decodeStrict(buf.Bytes(), &none); err != nil {
			return err
		}
	}
	ses, token, err := s.eng.RefreshSession(r.Context(), player, id)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, appendSession(nil, &ses, token))
	return nil
}

// requireSubmitter returns the principal of a score submission: a key with
// the submit scope for board ("" for a batch, checked item by item), or a
// player session, whose items submitMay checks.
func (s *base) requireSubmitter(r *http.Request, board string) (*podium.APIKey, error) {
	k, err := s.principal(r)
	if err == nil && k != nil && k.Player != "" {
		return k, nil
	}
	return s.require(r, podium.ScopeSubmit, board)
}

// submitMay checks one score of a principal: a key needs the submit scope
// for the board; a session may submit only as its own player, to a board
// that allows player submissions.
func (s *base) submitMay(k *podium.APIKey, board, player string) error {
	if k.Player == "" {
		if !k.Allows(podium.ScopeSubmit, board) {
			return podium.Errorf(podium.ECodeForbidden, "this key may not submit to board %q", board)
		}
		return nil
	}
	if player != k.Player {
		return podium.Errorf(podium.ECodeForbidden, "a player session submits only as its own player (%q)", k.Player)
	}
	bi, err := s.acc.Board(board)
	if err != nil {
		return err
	}
	if !bi.PlayerSubmit {
		if !bi.Public {
			return podium.BoardNotFound(bi.ID) // a session knows only public boards and its own (auth.go, "Private ids")
		}
		return podium.Errorf(podium.ECodeForbidden, "board %q does not take submissions from player sessions", board)
	}
	return nil
}
