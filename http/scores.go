package http

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// scoreHandlers serves score submissions, one or a batch, with their
// Idempotency-Key.
type scoreHandlers struct {
	*base
	eng  scoreWriter
	idem idempotent
}

// idempotent is what the submit handlers call for an Idempotency-Key: the
// engine's engine.Idempotency.
type idempotent interface {
	Claim(ctx context.Context, scope, key string, hash []byte) (*engine.Claim, *podium.IdempotencyRecord, error)
	Reconstruct(ctx context.Context, rec podium.IdempotencyRecord, scores []engine.Score) []engine.Result
}

// scoreWriter is what the submit handlers call.
type scoreWriter interface {
	Board(id string) (engine.BoardInfo, error)
	Submit(ctx context.Context, scores []engine.Score, single bool, claim *engine.Claim) ([]engine.Result, error)
	AwaitIdempotency(ctx context.Context, rec podium.IdempotencyRecord, wait time.Duration) podium.IdempotencyRecord
}

// scoreBody is one submission as sent by clients.
type scoreBody struct {
	Board  string          `json:"board"`
	Player string          `json:"player"`
	Keys   []int64         `json:"keys"`
	Score  *int64          `json:"score"`
	Meta   json.RawMessage `json:"meta"`
}

// toScore validates a submission's shape; the board's key count is checked
// by the engine, which knows the board.
func (sb *scoreBody) toScore(board string) (engine.Score, error) {
	if err := podium.ValidPlayerID(sb.Player); err != nil {
		return engine.Score{}, err
	}
	keys := sb.Keys
	switch {
	case sb.Score != nil && keys != nil:
		return engine.Score{}, podium.Errorf(podium.ECodeInvalid, "send either keys or score, not both")
	case sb.Score != nil:
		keys = []int64{*sb.Score}
	case len(keys) == 0:
		return engine.Score{}, podium.Errorf(podium.ECodeInvalid, "keys (1 to %d integers) or score is required", podium.MaxKeys)
	case len(keys) > podium.MaxKeys:
		return engine.Score{}, podium.Errorf(podium.ECodeInvalid, "keys holds %d values; boards have at most %d keys", len(keys), podium.MaxKeys)
	}
	var meta json.RawMessage
	if len(sb.Meta) > 0 && string(sb.Meta) != "null" {
		m, err := podium.NormalizeMeta(sb.Meta)
		if err != nil {
			return engine.Score{}, err
		}
		if string(m) != "{}" {
			meta = m
		}
	}
	return engine.Score{Board: board, Player: sb.Player, Keys: keys, Meta: meta}, nil
}

// idempotent handles the Idempotency-Key header: it returns a claim to pass
// to the engine, or answers the request itself from an earlier answer
// (done=true).
func (s *scoreHandlers) idempotent(w http.ResponseWriter, r *http.Request, k *podium.APIKey, body []byte, replay rebuild) (claim *engine.Claim, done bool, err error) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return nil, false, nil
	}
	if len(key) > 255 {
		return nil, false, podium.Errorf(podium.ECodeInvalid, "Idempotency-Key is longer than 255 bytes")
	}
	h := sha256.Sum256(body)
	claim, prior, err := s.idem.Claim(r.Context(), k.ID+" "+r.URL.Path, key, h[:])
	if err != nil {
		return nil, false, err
	}
	if prior == nil {
		return claim, false, nil
	}
	return nil, true, s.answerPrior(w, r, prior, replay)
}

// rebuild answers a request whose earlier twin was committed but whose
// answer was lost, from the twin's marker (see engine.Reconstruct).
type rebuild func(w http.ResponseWriter, rec podium.IdempotencyRecord) error

// answerPrior answers a request from the stored answer of an earlier one
// with the same Idempotency-Key and body, byte for byte. When that request
// was committed but its answer is not stored (not yet written by the node
// that took it, or lost in a crash), it waits a moment for it, then
// rebuilds the answer without applying anything again and says so
// (Idempotent-Reconstructed: true, "reconstructed": true).
func (s *scoreHandlers) answerPrior(w http.ResponseWriter, r *http.Request, prior *podium.IdempotencyRecord, replay rebuild) error {
	rec := s.eng.AwaitIdempotency(r.Context(), *prior, 2*time.Second)
	w.Header().Set("Idempotent-Replayed", "true")
	if rec.Status == 0 {
		w.Header().Set("Idempotent-Reconstructed", "true")
		return replay(w, rec)
	}
	writeJSON(w, rec.Status, bytes.TrimSuffix(append([]byte(nil), rec.Body...), []byte("\n")))
	return nil
}

func (s *scoreHandlers) submit(w http.ResponseWriter, r *http.Request) error {
	board := r.PathValue("board")
	k, err := s.requireSubmitter(r, board) // a key or a player session (sessions.go)
	if err != nil {
		return err
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	var sb scoreBody
	if err := decodeStrict(buf.Bytes(), &sb); err != nil {
		return err
	}
	if sb.Board != "" && sb.Board != board {
		return podium.Errorf(podium.ECodeInvalid, "board %q in the body differs from the board %q in the path", sb.Board, board)
	}
	if _, err := s.eng.Board(board); err != nil {
		return err
	}
	sc, err := sb.toScore(board)
	if err != nil {
		return err
	}
	if err := s.submitMay(k, board, sc.Player); err != nil {
		return err
	}
	replay := func(w http.ResponseWriter, rec podium.IdempotencyRecord) error {
		res := s.idem.Reconstruct(r.Context(), rec, []engine.Score{sc})
		if res[0].Err != nil {
			return res[0].Err
		}
		status := http.StatusOK
		if res[0].Held != nil {
			status = http.StatusAccepted
		}
		writeJSON(w, status, appendResult(nil, &res[0]))
		return nil
	}
	claim, done, err := s.idempotent(w, r, k, buf.Bytes(), replay)
	if err != nil || done {
		return err
	}
	res, err := s.eng.Submit(r.Context(), []engine.Score{sc}, true, claim)
	var prior *engine.PriorAnswer
	if errors.As(err, &prior) {
		// Another node took this request first.
		return s.answerPrior(w, r, &prior.Record, replay)
	}
	if err != nil {
		return err
	}
	out := appendResult(make([]byte, 0, 384), &res[0])
	status := http.StatusOK
	if res[0].Held != nil {
		status = http.StatusAccepted // held for review (review.go)
	}
	if claim != nil {
		claim.Finish(status, append(append([]byte(nil), out...), '\n'))
	}
	writeJSON(w, status, out)
	return nil
}

func (s *scoreHandlers) submitBatch(w http.ResponseWriter, r *http.Request) error {
	k, err := s.requireSubmitter(r, "")
	if err != nil {
		return err
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	items, itemErrs, err := decodeBatch(buf.Bytes())
	if err != nil {
		return err
	}
	scores := make([]engine.Score, 0, len(items))
	errs := make([]error, len(items))
	for i := range items {
		if itemErrs != nil && itemErrs[i] != nil {
			errs[i] = itemErrs[i]
			continue
		}
		it := &items[i]
		if !podium.ValidBoardID(it.Board) {
			errs[i] = podium.Errorf(podium.ECodeInvalid, "board must match [a-z0-9][a-z0-9_.:-]{0,127}")
			continue
		}
		if err := s.submitMay(k, it.Board, it.Player); err != nil {
			errs[i] = err
			continue
		}
		sc, err := it.toScore(it.Board)
		if err != nil {
			errs[i] = err
			continue
		}
		scores = append(scores, sc)
	}
	render := func(res []engine.Result) []byte {
		out := make([]byte, 0, 64+len(items)*256)
		out = append(out, `{"results":[`...)
		j := 0
		for i := range items {
			if i > 0 {
				out = append(out, ',')
			}
			if errs[i] != nil {
				out = appendItemError(out, errs[i])
				continue
			}
			if res[j].Err != nil {
				out = appendItemError(out, res[j].Err)
			} else {
				out = appendResult(out, &res[j])
			}
			j++
		}
		return append(out, "]}"...)
	}
	replay := func(w http.ResponseWriter, rec podium.IdempotencyRecord) error {
		writeJSON(w, http.StatusOK, render(s.idem.Reconstruct(r.Context(), rec, scores)))
		return nil
	}
	claim, done, err := s.idempotent(w, r, k, buf.Bytes(), replay)
	if err != nil || done {
		return err
	}
	var res []engine.Result
	if len(scores) > 0 {
		res, err = s.eng.Submit(r.Context(), scores, false, claim)
		var prior *engine.PriorAnswer
		if errors.As(err, &prior) {
			return s.answerPrior(w, r, &prior.Record, replay)
		}
		if err != nil {
			return err
		}
	} else if claim != nil {
		claim.Abort()
		claim = nil
	}
	out := render(res)
	if claim != nil {
		claim.Finish(http.StatusOK, append(append([]byte(nil), out...), '\n'))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func appendItemError(b []byte, err error) []byte {
	if qe := quotaError(err); qe != nil {
		return appendQuotaErrorBody(b, qe) // quota.go
	}
	b = append(b, `{"error":{"code":`...)
	b = appendString(b, podium.ErrorCode(err))
	b = append(b, `,"message":`...)
	b = appendString(b, podium.ErrorMessage(err))
	return append(b, "}}"...)
}
