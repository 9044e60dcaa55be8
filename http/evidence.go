package http

import (
	"context"
	"encoding/hex"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/evidence"
)

// evidenceHandlers serves evidence uploads and reads, of logged and of
// held submissions (evidence_review.go).
type evidenceHandlers struct {
	*base
	eng evidenceEngine
	ev  evidenceStore
	evb *evidence.Budgets
	evm *evidenceMetrics
}

// evidenceEngine is what the evidence handlers read of the engine.
type evidenceEngine interface {
	Board(id string) (engine.BoardInfo, error)
	Player(id string) (podium.Player, error)
}

// evidenceStore is what the evidence handlers, and the review queue
// (ItemEvidence), call of the evidence module (package evidence).
type evidenceStore interface {
	EvidenceTarget(ctx context.Context, board, player string, seq uint64) (uint64, string, engine.BoardInfo, error)
	HeldEvidenceTarget(ctx context.Context, board, player, id string) (uint64, engine.BoardInfo, error)
	Evidence(ctx context.Context, board, player string, seq uint64) (*podium.Evidence, error)
	EvidenceData(ctx context.Context, board, player string, seq uint64) (*podium.Evidence, []byte, error)
	PlayerContent(ctx context.Context, player, contentSHA256 string) (string, bool, error)
	StoreEvidence(ctx context.Context, ev podium.Evidence, data []byte, period string) (podium.Evidence, podium.EvidenceOutcome, error)
	HeldItem(ctx context.Context, board, player, id string) (*podium.ReviewItem, error)
	ItemEvidenceData(ctx context.Context, it *podium.ReviewItem) (*podium.Evidence, []byte, error)
	ItemEvidence(ctx context.Context, it *podium.ReviewItem) (*podium.Evidence, error)
}

var _ evidenceStore = (*evidence.Module)(nil)

// Evidence uploads (issue 9 §4, docs/API.md "Evidence"):
//
//	PUT /v1/boards/{board}/entries/{player}/evidence?seq=&content_sha256=&compressed_sha256=
//	GET /v1/boards/{board}/entries/{player}/evidence?seq=
//
// or, for a held submission, review=<item id> instead of seq
// (evidence_review.go).
//
// The order of the checks follows seed 002 §7.1: the request line and
// headers (auth, hashes, Content-Encoding, a declared length over the
// limit) first; then the submission and what is already stored (a
// duplicate is answered without reading the body); then the concurrency
// and byte budgets; only then is the body read, through the validator,
// which counts, inflates and hashes it as it streams. Nothing is stored
// unless every check passes, and the answer comes after the commit.

type evidenceMetrics struct {
	uploads  *prometheus.CounterVec // by result and reason
	received *prometheus.CounterVec // body bytes read, by result
	stored   prometheus.Counter     // bytes of new content stored
}

func newEvidenceMetrics(reg prometheus.Registerer) *evidenceMetrics {
	m := &evidenceMetrics{
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podium_evidence_uploads_total",
			Help: "Evidence uploads by result (stored, reused, refused) and, when refused, reason.",
		}, []string{"result", "reason"}),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podium_evidence_received_bytes_total",
			Help: "Evidence body bytes read, by result (accepted, refused).",
		}, []string{"result"}),
		stored: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "podium_evidence_stored_bytes_total", Help: "Bytes of new evidence content stored (reused content not counted).",
		}),
	}
	reg.MustRegister(m.uploads, m.received, m.stored)
	return m
}

func (s *Server) evidenceRoutes() {
	s.evidence.evm = newEvidenceMetrics(s.reg)
	var lim = s.evLimiter
	s.evidence.evb = evidence.NewBudgets(s.evCfg, lim)
	s.mux.HandleFunc("PUT /v1/boards/{board}/entries/{player}/evidence", s.api(s.evidence.putEvidence, "seq", "review", "content_sha256", "compressed_sha256"))
	s.mux.HandleFunc("GET /v1/boards/{board}/entries/{player}/evidence", s.api(s.evidence.getEvidence, "seq", "review"))
}

func querySeq(r *http.Request) (uint64, error) {
	v, ok := queryValue(r, "seq")
	if !ok || v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 63)
	if err != nil || n == 0 {
		return 0, podium.Errorf(podium.ECodeInvalid, "seq must be a submission's seq, an integer from 1")
	}
	return n, nil
}

func queryHash(r *http.Request, name string) (string, error) {
	v, _ := queryValue(r, name)
	if len(v) != 64 {
		return "", podium.Errorf(podium.ECodeInvalid, "%s is required: the SHA-256 as 64 hex digits", name)
	}
	if _, err := hex.DecodeString(v); err != nil {
		return "", podium.Errorf(podium.ECodeInvalid, "%s must be 64 hex digits", name)
	}
	return strings.ToLower(v), nil
}

// evidenceWho reads the path's player and returns it with the request's
// principal (nil without credentials). The board is looked up after the
// checks that do not depend on it (auth.go, "Private ids").
func (s *evidenceHandlers) evidenceWho(r *http.Request) (string, *podium.APIKey, error) {
	player := r.PathValue("player")
	if err := podium.ValidPlayerRef(player); err != nil {
		return "", nil, err
	}
	k, err := s.principal(r)
	if err != nil {
		return "", nil, err
	}
	return player, k, nil
}

// uploadMay: an admin or a key with the submit scope for the board, or
// the player's own session on a board that takes player submissions. It
// checks what does not depend on the board before the board is looked up;
// sessionUploadMay checks the rest.
func uploadMay(k *podium.APIKey, board, player string) error {
	if k == nil {
		return podium.Errorf(podium.ECodeUnauthenticated, "uploading evidence needs an API key or the player's session: send Authorization: Bearer <key>")
	}
	if k.Player != "" {
		if k.Player != player {
			return podium.Errorf(podium.ECodeForbidden, "a player session uploads evidence only for its own player (%q)", k.Player)
		}
		return nil
	}
	if !k.Allows(podium.ScopeSubmit, board) {
		return podium.Errorf(podium.ECodeForbidden, "this key may not submit to board %q", board)
	}
	return nil
}

// sessionUploadMay: a player session uploads only to a board that takes
// player submissions; a private board that does not is, to it, unknown.
func sessionUploadMay(k *podium.APIKey, bi *engine.BoardInfo) error {
	if k.Player == "" || bi.PlayerSubmit {
		return nil
	}
	if !bi.Public {
		return podium.BoardNotFound(bi.ID)
	}
	return podium.Errorf(podium.ECodeForbidden, "board %q does not take submissions from player sessions", bi.ID)
}

func evidenceLimits(p *podium.EvidencePolicy) evidence.Limits {
	if p == nil {
		return evidence.Limits{}
	}
	return evidence.Limits{MaxBytes: p.MaxBytes, MaxInflatedBytes: p.MaxInflatedBytes, MaxEvents: p.MaxEvents, MaxLineBytes: p.MaxLineBytes}
}

// refuseEvidence counts a refused upload and returns err.
func (s *evidenceHandlers) refuseEvidence(reason string, err error) error {
	s.evm.uploads.WithLabelValues("refused", reason).Inc()
	return err
}

func (s *evidenceHandlers) putEvidence(w http.ResponseWriter, r *http.Request) error {
	player, k, err := s.evidenceWho(r)
	if err != nil {
		return err
	}
	if err := uploadMay(k, r.PathValue("board"), player); err != nil {
		return err
	}
	bi, err := s.eng.Board(r.PathValue("board"))
	if err != nil {
		return err
	}
	if err := sessionUploadMay(k, &bi); err != nil {
		return err
	}
	seq, review, err := evidenceQuery(r) // evidence_review.go
	if err != nil {
		return err
	}
	content, err := queryHash(r, "content_sha256")
	if err != nil {
		return err
	}
	compressed, err := queryHash(r, "compressed_sha256")
	if err != nil {
		return err
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return s.refuseEvidence("content_encoding", podium.Errorf(podium.ECodeUnprocessable,
			"send the gzip file as the body with no Content-Encoding (got %q): podium does not undo transfer encodings of evidence", ce))
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/gzip" && mt != "application/x-gzip" && mt != "application/octet-stream") {
			return s.refuseEvidence("content_type", podium.Errorf(podium.ECodeUnsupportedType, "evidence is application/gzip, not %s", ct))
		}
	}
	lim := evidenceLimits(bi.Evidence)
	maxBytes := lim.MaxBytes
	if maxBytes <= 0 {
		maxBytes = evidence.DefaultMaxBytes
	}
	if r.ContentLength > maxBytes {
		w.Header().Set("Connection", "close")
		return s.refuseEvidence(evidence.ReasonTooLarge, podium.Errorf(podium.ECodeTooLarge, "the evidence is larger than %d bytes (compressed)", maxBytes))
	}
	ctx := r.Context()
	var period string
	if review != "" {
		seq, bi, err = s.ev.HeldEvidenceTarget(ctx, bi.ID, player, review)
	} else {
		seq, period, bi, err = s.ev.EvidenceTarget(ctx, bi.ID, player, seq)
	}
	if err != nil {
		return err
	}
	target := podium.Evidence{Board: bi.ID, Player: player, Seq: seq, ReviewID: review, ContentSHA256: content, CompressedSHA256: compressed}

	// What is stored already is answered without reading the body.
	if have, err := s.ev.Evidence(ctx, bi.ID, player, seq); err != nil {
		return err
	} else if have != nil {
		have.ReviewID = review
		if have.ContentSHA256 != content {
			return s.refuseEvidence("conflict", podium.Errorf(podium.ECodeConflict, "%s already has other evidence", target.Target()))
		}
		s.evm.uploads.WithLabelValues("reused", "").Inc()
		writeJSON(w, http.StatusOK, appendEvidence(nil, have, true))
		return nil
	}
	if comp, ok, err := s.ev.PlayerContent(ctx, player, content); err != nil {
		return err
	} else if ok && comp == compressed {
		got, outcome, err := s.ev.StoreEvidence(ctx, target, nil, period)
		if err == nil {
			s.evm.uploads.WithLabelValues("reused", "").Inc()
			writeJSON(w, evidenceStatus(outcome), appendEvidence(nil, &got, true))
			return nil
		}
		if podium.ErrorCode(err) != podium.ECodeNotFound { // else swept meanwhile: take the body
			return err
		}
	}

	release, err := s.evb.Acquire(player)
	if err != nil {
		return s.budgetRefused(w, err)
	}
	defer release()
	// The budgets are charged as the body is read, a step ahead, and
	// what was charged and not read is given back (issue 17 item 15: the
	// declared length was charged up front and never refunded, so
	// header-only requests spent everyone's budget).
	meter := s.evb.Meter(ctx, player, r.Body, r.ContentLength)
	defer meter.Settle()
	res, n, err := evidence.Validate(meter, lim)
	if err != nil {
		s.evm.received.WithLabelValues("refused").Add(float64(n))
		return s.evidenceReadError(w, err)
	}
	if hex.EncodeToString(res.CompressedSHA256[:]) != compressed {
		s.evm.received.WithLabelValues("refused").Add(float64(n))
		return s.refuseEvidence("hash_mismatch", podium.Errorf(podium.ECodeUnprocessable, "compressed_sha256 does not match the body (SHA-256 of the bytes as sent)"))
	}
	if hex.EncodeToString(res.ContentSHA256[:]) != content {
		s.evm.received.WithLabelValues("refused").Add(float64(n))
		return s.refuseEvidence("hash_mismatch", podium.Errorf(podium.ECodeUnprocessable, "content_sha256 does not match the body (SHA-256 of the inflated JSON Lines)"))
	}
	s.evm.received.WithLabelValues("accepted").Add(float64(n))
	target.InflatedBytes, target.Events = res.Inflated, res.Events
	got, outcome, err := s.ev.StoreEvidence(ctx, target, res.Compressed, period)
	if err != nil {
		if podium.ErrorCode(err) == podium.ECodeConflict {
			s.evm.uploads.WithLabelValues("refused", "conflict").Inc()
		}
		return err
	}
	result := "stored"
	if outcome != podium.EvidenceStored {
		result = "reused"
	} else {
		s.evm.stored.Add(float64(len(res.Compressed)))
	}
	s.evm.uploads.WithLabelValues(result, "").Inc()
	writeJSON(w, evidenceStatus(outcome), appendEvidence(nil, &got, outcome != podium.EvidenceStored))
	return nil
}

// evidenceStatus: 201 for a new attachment, 200 for one already there.
func evidenceStatus(o podium.EvidenceOutcome) int {
	if o == podium.EvidenceAlready {
		return http.StatusOK
	}
	return http.StatusCreated
}

// budgetRefused answers 429 with Retry-After for a spent budget.
func (s *evidenceHandlers) budgetRefused(w http.ResponseWriter, err error) error {
	var ref *evidence.Refusal
	if !errors.As(err, &ref) {
		return err
	}
	w.Header().Set("Retry-After", strconv.FormatInt(max(ceilSeconds(ref.RetryAfter), 1), 10))
	return s.refuseEvidence(ref.Budget, podium.Errorf(podium.ECodeRateLimited, "%s", ref.Error()))
}

// evidenceReadError maps what the validator refused to the answer: 413
// for too many compressed bytes, 408 for a slow body, 429 for a budget
// spent while streaming, 422 for the content. The rest of a body cut
// short is not read: the connection closes.
func (s *evidenceHandlers) evidenceReadError(w http.ResponseWriter, err error) error {
	var (
		ve   *evidence.Error
		slow *errBodyTimeout
		ref  *evidence.Refusal
	)
	switch {
	case errors.As(err, &ve):
		if ve.Reason == evidence.ReasonTooLarge {
			w.Header().Set("Connection", "close")
			return s.refuseEvidence(ve.Reason, podium.Errorf(podium.ECodeTooLarge, "%s", ve.Msg))
		}
		return s.refuseEvidence(ve.Reason, podium.Errorf(podium.ECodeUnprocessable, "%s", ve.Msg))
	case errors.As(err, &slow):
		return s.refuseEvidence("timeout", podium.Errorf(codeRequestTimeout, "%s; the connection is closed", slow.msg))
	case errors.As(err, &ref):
		w.Header().Set("Connection", "close")
		return s.budgetRefused(w, ref)
	}
	return s.refuseEvidence("read_error", podium.Errorf(podium.ECodeInvalid, "could not read the body: %v", err))
}

func appendEvidence(b []byte, ev *podium.Evidence, reused bool) []byte {
	b = append(b, `{"board":`...)
	b = appendString(b, ev.Board)
	b = append(b, `,"player":`...)
	b = appendString(b, ev.Player)
	if ev.ReviewID != "" { // a held submission's: no seq yet
		b = append(b, `,"seq":null,"review":`...)
		b = appendString(b, ev.ReviewID)
	} else {
		b = append(b, `,"seq":`...)
		b = strconv.AppendUint(b, ev.Seq, 10)
	}
	b = append(b, `,"content_sha256":`...)
	b = appendString(b, ev.ContentSHA256)
	b = append(b, `,"compressed_sha256":`...)
	b = appendString(b, ev.CompressedSHA256)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, ev.Bytes, 10)
	b = append(b, `,"inflated_bytes":`...)
	b = strconv.AppendInt(b, ev.InflatedBytes, 10)
	b = append(b, `,"events":`...)
	b = strconv.AppendInt(b, int64(ev.Events), 10)
	b = append(b, `,"reused":`...)
	b = strconv.AppendBool(b, reused)
	b = append(b, `,"created_at":`...)
	b = appendTime(b, ev.CreatedAt)
	b = append(b, `,"expires_at":`...)
	b = appendOptTime(b, ev.ExpiresAt)
	b = append(b, `,"promoted_at":`...)
	b = appendOptTime(b, ev.PromotedAt)
	return append(b, '}')
}

// appendOptTime appends t, or null for the zero time.
func appendOptTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, "null"...)
	}
	return appendTime(b, t)
}

// mayReadEvidence: admins of the board, the owning player's session, and
// everyone who may read the board when its evidence is public. Never
// anyone else, whatever they know of the submission or its hashes.
func (s *evidenceHandlers) mayReadEvidence(k *podium.APIKey, bi *engine.BoardInfo, player string) error {
	if k != nil && k.Player == "" && k.Allows(podium.ScopeAdmin, bi.ID) {
		return nil
	}
	if k != nil && k.Player == player && (bi.Public || bi.PlayerSubmit) {
		return nil
	}
	if !mayRead(k, bi.ID, bi.Public) {
		return podium.BoardNotFound(bi.ID) // auth.go, "Private ids"
	}
	if bi.Evidence != nil && bi.Evidence.Public {
		if p, err := s.eng.Player(player); err == nil && p.Hidden {
			// Hidden players are left out of public reads.
			return podium.Errorf(podium.ECodeNotFound, "no evidence of player %q on board %q", player, bi.ID)
		}
		return nil
	}
	if k == nil {
		return podium.Errorf(podium.ECodeUnauthenticated, "this evidence is not public: send an admin key or the player's session")
	}
	return podium.Errorf(podium.ECodeForbidden, "the evidence of board %q is readable only by admins and its player", bi.ID)
}

func (s *evidenceHandlers) getEvidence(w http.ResponseWriter, r *http.Request) error {
	player, k, err := s.evidenceWho(r)
	if err != nil {
		return err
	}
	if _, ok := queryValue(r, "review"); ok {
		return s.getHeldEvidence(w, r, r.PathValue("board"), player, k) // evidence_review.go
	}
	bi, err := s.eng.Board(r.PathValue("board"))
	if err != nil {
		return err
	}
	if err := s.mayReadEvidence(k, &bi, player); err != nil {
		return err
	}
	seq, err := querySeq(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if seq, _, _, err = s.ev.EvidenceTarget(ctx, bi.ID, player, seq); err != nil {
		return err
	}
	ev, data, err := s.ev.EvidenceData(ctx, bi.ID, player, seq)
	if err != nil {
		return err
	}
	writeEvidenceFile(w, ev, data, "evidence-"+strconv.FormatUint(seq, 10), bi.Evidence != nil && bi.Evidence.Public && bi.Public)
	return nil
}

// writeEvidenceFile answers 200 with evidence's gzip bytes, cacheable by
// anyone when public.
func writeEvidenceFile(w http.ResponseWriter, ev *podium.Evidence, data []byte, name string, public bool) {
	h := w.Header()
	h.Set("Content-Type", "application/gzip")
	h.Set("Content-Length", strconv.Itoa(len(data)))
	h.Set("Content-Disposition", `attachment; filename="`+name+`.jsonl.gz"`)
	h.Set("ETag", `"`+ev.CompressedSHA256+`"`)
	h.Set("Podium-Content-SHA256", ev.ContentSHA256)
	h.Set("X-Content-Type-Options", "nosniff")
	if public {
		h.Set("Cache-Control", "public, max-age=60")
	} else {
		h.Set("Cache-Control", "private, no-store")
	}
	w.WriteHeader(http.StatusOK)
	w.Write(data)
}
