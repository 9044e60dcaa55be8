package http

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/podiumhq/podium"
)

// Evidence of held submissions (docs/API.md "Evidence (replay) uploads"
// and "Moderation"): PUT and GET .../evidence?review=<item id> upload and
// read the evidence of a pending item, which its approval moves to the
// approved seq (engine/evidence_review.go).

// evidenceQuery reads seq and review, which exclude each other.
func evidenceQuery(r *http.Request) (uint64, string, error) {
	seq, err := querySeq(r)
	if err != nil {
		return 0, "", err
	}
	review, err := queryReview(r)
	if err != nil {
		return 0, "", err
	}
	if seq != 0 && review != "" {
		return 0, "", podium.Errorf(podium.ECodeInvalid, "seq and review exclude each other: seq names a logged submission, review a held one")
	}
	return seq, review, nil
}

// queryReview reads review, "" when absent.
func queryReview(r *http.Request) (string, error) {
	v, ok := queryValue(r, "review")
	if !ok {
		return "", nil
	}
	if !podium.ValidReviewID(v) {
		return "", podium.Errorf(podium.ECodeInvalid, "review must be a held submission's id (rv_ and 16 hex digits)")
	}
	return v, nil
}

// evidencePath is where evidence is downloaded: by seq, or by review id
// while it is a held submission's.
func evidencePath(board, player string, seq uint64, review string) string {
	p := "/v1/boards/" + url.PathEscape(board) + "/entries/" + url.PathEscape(player) + "/evidence?"
	if review != "" {
		return p + "review=" + review
	}
	return p + "seq=" + strconv.FormatUint(seq, 10)
}

// mayReadHeldEvidence: admins and review keys of the board, and the
// owning player's session. A held submission is not published, so a
// board's public evidence setting does not open it.
// It depends on the board's id only, so it runs before the board is looked
// up (auth.go, "Private ids").
func mayReadHeldEvidence(k *podium.APIKey, board, player string) error {
	switch {
	case k == nil:
		return podium.Errorf(podium.ECodeUnauthenticated, "the evidence of a held submission needs a review or admin key, or the player's session")
	case k.Player != "":
		if k.Player != player {
			return podium.Errorf(podium.ECodeForbidden, "a player session reads only its own player's evidence")
		}
		return nil
	case k.Allows(podium.ScopeReview, board):
		return nil
	}
	return podium.Errorf(podium.ECodeForbidden, "the evidence of a held submission of board %q is readable only by its moderators and its player", board)
}

// getHeldEvidence answers GET .../evidence?review=: the item's evidence,
// wherever it is (under the item while pending or rejected, at the
// approved seq once approved).
func (s *evidenceHandlers) getHeldEvidence(w http.ResponseWriter, r *http.Request, board, player string, k *podium.APIKey) error {
	if err := mayReadHeldEvidence(k, board, player); err != nil {
		return err
	}
	bi, err := s.eng.Board(board)
	if err != nil {
		return err
	}
	if k.Player != "" && !bi.Public && !bi.PlayerSubmit {
		return podium.BoardNotFound(bi.ID) // a session knows only public boards and its own
	}
	_, review, err := evidenceQuery(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	it, err := s.ev.HeldItem(ctx, bi.ID, player, review)
	if err != nil {
		return err
	}
	ev, data, err := s.ev.ItemEvidenceData(ctx, it)
	if err != nil {
		return err
	}
	name := "evidence-" + it.ID
	if ev.ReviewID == "" {
		name = "evidence-" + strconv.FormatUint(ev.Seq, 10)
	}
	writeEvidenceFile(w, ev, data, name, false)
	return nil
}

// appendHeldEvidence appends what the review queue shows of an item's
// evidence without a lookup: the upload's answer with a download path,
// or null.
func (s *reviewHandlers) appendHeldEvidence(ctx context.Context, b []byte, it *podium.ReviewItem) ([]byte, error) {
	ev, err := s.ev.ItemEvidence(ctx, it)
	if err != nil && podium.ErrorCode(err) != podium.ECodeUnavailable { // unavailable: the store keeps none
		return nil, err
	}
	if ev == nil {
		return append(b, "null"...), nil
	}
	b = appendEvidence(b, ev, false)
	b = append(b[:len(b)-1], `,"download":`...)
	b = appendString(b, evidencePath(ev.Board, ev.Player, ev.Seq, ev.ReviewID))
	return append(b, '}'), nil
}
