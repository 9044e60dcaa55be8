package http

import (
	"net/http"
	"strings"

	"github.com/podiumhq/podium"
)

// Admin additions to the contests: deletes, and the live stream.

// DELETE /v1/contests/{contest}: the contest with its challenges, solves,
// audit log and snapshots. Its streams end with an error event.
func (s *Server) deleteContest(w http.ResponseWriter, r *http.Request) error {
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
func (s *Server) deleteChallenge(w http.ResponseWriter, r *http.Request) error {
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
func (s *Server) streamView(r *http.Request, id string) (live bool, err error) {
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
