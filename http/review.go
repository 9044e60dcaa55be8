package http

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// reviewHandlers serves moderation: the review queue, approvals and
// rejections, and freezes.
type reviewHandlers struct {
	*base
	eng reviewEngine
	rv  reviewStore   // the review module (review/)
	ev  evidenceStore // an item's evidence (evidence_review.go)
}

// reviewEngine is what the moderation handlers read of the engine.
type reviewEngine interface {
	Entry(ctx context.Context, q engine.Query, player string) (engine.Page, error)
}

// reviewStore is what the moderation handlers call of the review module.
type reviewStore interface {
	historyReader // history.go
	ReviewItems(ctx context.Context, f podium.ReviewFilter) ([]podium.ReviewItem, error)
	ReviewItem(ctx context.Context, id string) (*podium.ReviewItem, error)
	Approve(ctx context.Context, id, by, note string) (*podium.ReviewItem, engine.Result, error)
	Reject(ctx context.Context, id, by, note string) (*podium.ReviewItem, error)
	ReviewEvidence(ctx context.Context, board, player string, seq uint64, reviewID string) (doc []byte, ok bool, err error)
	Freeze(ctx context.Context, player, by, reason string) (podium.Freeze, error)
	Unfreeze(ctx context.Context, player string) error
	Frozen(player string) *podium.Freeze
}

// Moderation (issue 9, section 5): the review queue, decisions, freezes
// and a player's submission history. See docs/API.md, "Moderation".

// reviewHistoryLen is how many of the player's latest log rows an item of
// the queue shows.
const reviewHistoryLen = 5

// historyScans bounds the store calls of one history page (on SQLite, a
// board without the player index is scanned HistoryScan log rows a call).
const historyScans = 4

// decisionBody is the body of an approve or reject.
type decisionBody struct {
	Reason string `json:"reason"`
}

// freezeBody is the body of a freeze.
type freezeBody struct {
	Reason string `json:"reason"`
}

// appendHeld is the answer to a held submission (status pending).
func appendHeld(b []byte, r *engine.Result) []byte {
	b = append(b, `{"status":"pending","id":`...)
	b = appendString(b, r.Held.ID)
	b = append(b, `,"board":`...)
	b = appendString(b, r.Board)
	b = append(b, `,"period":`...)
	b = appendString(b, r.Period)
	b = append(b, `,"player":`...)
	b = appendString(b, r.Player)
	b = append(b, `,"reason":`...)
	b = appendString(b, r.Held.Reason)
	b = append(b, `,"evidence_url":`...) // evidence_review.go
	b = appendString(b, evidencePath(r.Board, r.Player, 0, r.Held.ID))
	if r.Reconstructed {
		b = append(b, `,"reconstructed":true`...)
	}
	return append(b, '}')
}

// appendReviewSetting appends a board's review setting, if any.
func appendReviewSetting(b []byte, r *podium.Review) []byte {
	if r == nil {
		return b
	}
	b = append(b, `,"review":{"hold":`...)
	b = appendString(b, r.Hold)
	if r.Top > 0 {
		b = append(b, `,"top":`...)
		b = strconv.AppendInt(b, int64(r.Top), 10)
	}
	if r.Threshold != nil {
		b = append(b, `,"threshold":`...)
		b = appendKeys(b, r.Threshold)
	}
	return append(b, '}')
}

// reviewKey returns the request's key if it may review board ("" for
// every board: an unrestricted key): the review scope, or admin.
func (s *reviewHandlers) reviewKey(r *http.Request, board string) (*podium.APIKey, error) {
	k, err := s.require(r, podium.ScopeReview, board)
	if err != nil {
		return nil, err
	}
	if board == "" && len(k.Boards) > 0 {
		return nil, podium.Errorf(podium.ECodeForbidden, "this key is limited to some boards: name one with board=")
	}
	return k, nil
}

// parseReviewCursor reads a cursor of the queue: "<unix ms>.<item id>".
func parseReviewCursor(v string) (podium.ReviewCursor, error) {
	ms, id, ok := strings.Cut(v, ".")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || n < 0 || !podium.ValidReviewID(id) {
		return podium.ReviewCursor{}, podium.Errorf(podium.ECodeInvalid, "cursor is not one this API returned")
	}
	return podium.ReviewCursor{At: podium.FromMillis(n), ID: id}, nil
}

func (s *reviewHandlers) reviewQueue(w http.ResponseWriter, r *http.Request) error {
	board, _ := queryValue(r, "board")
	if board != "" && !podium.ValidBoardID(board) {
		return podium.Errorf(podium.ECodeInvalid, "board must match [a-z0-9][a-z0-9_.:-]{0,127}")
	}
	if _, err := s.reviewKey(r, board); err != nil {
		return err
	}
	f := podium.ReviewFilter{Board: board, Status: podium.ReviewPending}
	if p, ok := queryValue(r, "player"); ok {
		if err := podium.ValidPlayerRef(p); err != nil {
			return err
		}
		f.Player = p
	}
	switch st, _ := queryValue(r, "status"); st {
	case "", podium.ReviewPending:
	case podium.ReviewApproved, podium.ReviewRejected:
		f.Status = st
	case "all":
		f.Status = ""
	default:
		return podium.Errorf(podium.ECodeInvalid, "status must be pending, approved, rejected or all")
	}
	if c, ok := queryValue(r, "cursor"); ok {
		cur, err := parseReviewCursor(c)
		if err != nil {
			return err
		}
		f.After = cur
	}
	limit, err := queryInt(r, "limit", 20, 1, podium.MaxReviewPageLimit)
	if err != nil {
		return err
	}
	f.Limit = limit + 1 // one more tells whether there is a next page
	items, err := s.rv.ReviewItems(r.Context(), f)
	if err != nil {
		return err
	}
	more := len(items) > limit
	if more {
		items = items[:limit]
	}
	b := append(make([]byte, 0, 1024), `{"items":[`...)
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = s.appendReviewItem(r.Context(), b, &items[i]); err != nil {
			return err
		}
	}
	b = append(b, `],"next_cursor":`...)
	if more {
		last := &items[len(items)-1]
		b = appendString(b, strconv.FormatInt(podium.Millis(last.SubmittedAt), 10)+"."+last.ID)
	} else {
		b = append(b, "null"...)
	}
	writeJSON(w, http.StatusOK, append(b, '}'))
	return nil
}

// reviewItemFor loads an item and checks that the request may review it.
func (s *reviewHandlers) reviewItemFor(r *http.Request) (*podium.ReviewItem, *podium.APIKey, error) {
	if _, err := s.require(r, podium.ScopeReview, ""); err != nil {
		return nil, nil, err
	}
	it, err := s.rv.ReviewItem(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, nil, err
	}
	k, err := s.reviewKey(r, it.Board)
	if err != nil {
		return nil, nil, err
	}
	return it, k, nil
}

func (s *reviewHandlers) getReviewItem(w http.ResponseWriter, r *http.Request) error {
	it, _, err := s.reviewItemFor(r)
	if err != nil {
		return err
	}
	b, err := s.appendReviewItem(r.Context(), nil, it)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

func (s *reviewHandlers) approveReview(w http.ResponseWriter, r *http.Request) error {
	return s.decideReview(w, r, podium.ReviewApproved)
}

func (s *reviewHandlers) rejectReview(w http.ResponseWriter, r *http.Request) error {
	return s.decideReview(w, r, podium.ReviewRejected)
}

func (s *reviewHandlers) decideReview(w http.ResponseWriter, r *http.Request, status string) error {
	_, k, err := s.reviewItemFor(r)
	if err != nil {
		return err
	}
	var body decisionBody
	if err := s.optionalBody(r, &body); err != nil {
		return err
	}
	if err := podium.ValidNote(body.Reason, status == podium.ReviewRejected); err != nil {
		return err
	}
	var (
		it  *podium.ReviewItem
		res engine.Result
	)
	if status == podium.ReviewApproved {
		it, res, err = s.rv.Approve(r.Context(), r.PathValue("id"), k.ID, body.Reason)
	} else {
		it, err = s.rv.Reject(r.Context(), r.PathValue("id"), k.ID, body.Reason)
	}
	if err != nil {
		return err
	}
	b, err := s.appendReviewItem(r.Context(), nil, it)
	if err != nil {
		return err
	}
	if status == podium.ReviewApproved {
		// The answer of the submission the approval applied, as a submit
		// would have answered it.
		b = append(b[:len(b)-1], `,"result":`...)
		b = append(appendResult(b, &res), '}')
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

// optionalBody decodes a JSON body into v; an empty body leaves v as it is.
func (s *reviewHandlers) optionalBody(r *http.Request, v any) error {
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	if len(strings.TrimSpace(buf.String())) == 0 {
		return nil
	}
	return decodeStrict(buf.Bytes(), v)
}

// appendReviewItem appends an item with the player's entry in its period,
// their latest log rows and the evidence lookup's answer.
func (s *reviewHandlers) appendReviewItem(ctx context.Context, b []byte, it *podium.ReviewItem) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = appendString(b, it.ID)
	b = append(b, `,"board":`...)
	b = appendString(b, it.Board)
	b = append(b, `,"period":`...)
	b = appendString(b, it.Period)
	b = append(b, `,"player":`...)
	b = appendString(b, it.Player)
	b = append(b, `,"keys":`...)
	b = appendKeys(b, it.Keys)
	b = append(b, `,"meta":`...)
	b = appendMeta(b, it.Meta)
	b = append(b, `,"submitted_at":`...)
	b = appendTime(b, it.SubmittedAt)
	b = append(b, `,"reason":`...)
	b = appendString(b, it.Reason)
	b = append(b, `,"status":`...)
	b = appendString(b, it.Status)
	b = append(b, `,"decision":`...)
	if it.Status == podium.ReviewPending {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"by":`...)
		b = appendString(b, it.DecidedBy)
		b = append(b, `,"at":`...)
		b = appendTime(b, it.DecidedAt)
		b = append(b, `,"reason":`...)
		b = appendString(b, it.Note)
		if it.Seq > 0 {
			b = append(b, `,"seq":`...)
			b = strconv.AppendUint(b, it.Seq, 10)
		}
		b = append(b, '}')
	}
	b = append(b, `,"entry":`...)
	page, err := s.eng.Entry(ctx, engine.Query{Board: it.Board, Period: it.Period, IncludeHidden: true}, it.Player)
	switch code := podium.ErrorCode(err); {
	case err == nil:
		e := &page.Entries[0]
		for i := range page.Entries {
			if page.Entries[i].Player == it.Player {
				e = &page.Entries[i]
			}
		}
		b = appendEntry(b, e)
	case code == podium.ECodeEntryNotFound || code == podium.ECodeBoardNotFound || code == podium.ECodeInvalid:
		b = append(b, "null"...)
	default:
		return nil, err
	}
	rows, _, err := s.rv.History(ctx, it.Board, it.Player, 0, reviewHistoryLen) // the recent rows: a partial scan is enough
	if err != nil {
		return nil, err
	}
	b = append(b, `,"history":`...)
	b = appendHistory(b, rows, true)
	b = append(b, `,"evidence":`...)
	if b, err = s.appendItemEvidence(ctx, b, it); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendItemEvidence appends an item's evidence: the engine's lookup's
// answer if one is set, else the evidence uploaded for the held item (at
// the approved seq once approved) with its download path
// (evidence_review.go), else null.
func (s *reviewHandlers) appendItemEvidence(ctx context.Context, b []byte, it *podium.ReviewItem) ([]byte, error) {
	doc, ok, err := s.rv.ReviewEvidence(ctx, it.Board, it.Player, it.Seq, it.ID)
	switch {
	case err != nil:
		return nil, err
	case ok && doc != nil:
		return append(b, doc...), nil
	case ok:
		return append(b, "null"...), nil
	}
	return s.appendHeldEvidence(ctx, b, it)
}

func appendFreeze(b []byte, f *podium.Freeze) []byte {
	b = append(b, `{"player":`...)
	b = appendString(b, f.Player)
	b = append(b, `,"frozen":true,"by":`...)
	b = appendString(b, f.By)
	b = append(b, `,"reason":`...)
	b = appendString(b, f.Reason)
	b = append(b, `,"at":`...)
	b = appendTime(b, f.At)
	return append(b, '}')
}

// freeze answers POST /v1/players/{player}/freeze (admin).
func (s *reviewHandlers) freeze(w http.ResponseWriter, r *http.Request) error {
	k, err := s.requireGlobalAdmin(r)
	if err != nil {
		return err
	}
	var body freezeBody
	if err := s.optionalBody(r, &body); err != nil {
		return err
	}
	f, err := s.rv.Freeze(r.Context(), r.PathValue("player"), k.ID, body.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, appendFreeze(nil, &f))
	return nil
}

// unfreeze answers POST /v1/players/{player}/unfreeze (admin).
func (s *reviewHandlers) unfreeze(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	player := r.PathValue("player")
	if err := podium.ValidPlayerRef(player); err != nil {
		return err
	}
	if err := s.rv.Unfreeze(r.Context(), player); err != nil {
		return err
	}
	b := appendString([]byte(`{"player":`), player)
	writeJSON(w, http.StatusOK, append(b, `,"frozen":false}`...))
	return nil
}

// getFreeze answers GET /v1/players/{player}/freeze (review or admin).
func (s *reviewHandlers) getFreeze(w http.ResponseWriter, r *http.Request) error {
	// A freeze holds the player on every board, so a moderator of any
	// board may read it (the route takes no board= to name one).
	if _, err := s.require(r, podium.ScopeReview, ""); err != nil {
		return err
	}
	player := r.PathValue("player")
	if err := podium.ValidPlayerRef(player); err != nil {
		return err
	}
	f := s.rv.Frozen(player)
	if f == nil {
		b := appendString([]byte(`{"player":`), player)
		writeJSON(w, http.StatusOK, append(b, `,"frozen":false}`...))
		return nil
	}
	writeJSON(w, http.StatusOK, appendFreeze(nil, f))
	return nil
}
