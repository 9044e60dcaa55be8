package http

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/podiumhq/podium"
)

// codeStatus is the one table from error code to HTTP status.
var codeStatus = map[string]int{
	podium.ECodeInvalidJSON:     http.StatusBadRequest,
	podium.ECodeInvalid:         http.StatusBadRequest,
	podium.ECodeUnauthenticated: http.StatusUnauthorized,
	podium.ECodeForbidden:       http.StatusForbidden,
	podium.ECodeBoardNotFound:   http.StatusNotFound,
	podium.ECodeEntryNotFound:   http.StatusNotFound,
	podium.ECodeNotFound:        http.StatusNotFound,
	"method_not_allowed":        http.StatusMethodNotAllowed,
	codeRequestTimeout:          http.StatusRequestTimeout,
	podium.ECodeConflict:        http.StatusConflict,
	podium.ECodeTooLarge:        http.StatusRequestEntityTooLarge,
	podium.ECodeUnsupportedType: http.StatusUnsupportedMediaType,
	podium.ECodeUnprocessable:   http.StatusUnprocessableEntity,
	podium.ECodeRateLimited:     http.StatusTooManyRequests,
	podium.ECodeUnavailable:     http.StatusServiceUnavailable,
	podium.ECodeOutcomeUnknown:  http.StatusServiceUnavailable,
	podium.ECodeInternal:        http.StatusInternalServerError,
	// Tournaments (tournament.go).
	podium.ECodeTournamentClosed: http.StatusConflict,
	podium.ECodeNotJoined:        http.StatusForbidden,
	podium.ECodeTournamentFull:   http.StatusConflict,
	podium.ECodePointsBoard:      http.StatusConflict,
	// Leagues (leagues.go): the previous period settles within seconds.
	podium.ECodeLeagueSettling: http.StatusServiceUnavailable,
	// Quotas (quota.go).
	podium.ECodeQuotaExceeded: http.StatusTooManyRequests,
}

// StatusOf returns the HTTP status for an error code.
func StatusOf(code string) int {
	if s, ok := codeStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// writeError answers with the error envelope. Internal errors are logged and
// shown as a generic message.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = podium.Errorf(podium.ECodeUnavailable, "the request was cancelled or timed out before it finished")
	}
	if failed := storageFailure(err); failed != nil {
		// The query helps to reproduce; secrets in it (?key=) are cut.
		s.log.Error("storage failure", "method", r.Method, "path", r.URL.Path, "query", redactQuery(r.URL.RawQuery),
			"code", failed.Code, "err", err)
		err = failed
	}
	code := podium.ErrorCode(err)
	if code == podium.ECodeInternal {
		s.log.Error("internal error", "method", r.Method, "path", r.URL.Path, "query", redactQuery(r.URL.RawQuery), "err", err)
	}
	status := StatusOf(code)
	if status == http.StatusRequestTimeout && isHTTP1(r) {
		// The rest of the body may still come: this connection cannot
		// carry another request. (HTTP/2 resets just the stream.)
		w.Header().Set("Connection", "close")
	}
	qe := quotaError(err) // quota.go
	if qe != nil {
		setQuotaRetry(w.Header(), qe)
	}
	if status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
		if w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", "1")
		}
	}
	b := appendErrorBody(make([]byte, 0, 128), code, podium.ErrorMessage(err))
	if qe != nil {
		b = appendQuotaErrorBody(b[:0], qe)
	}
	writeJSON(w, status, b)
}

// storageFailure is what a client is told of an error that is not a
// *podium.Error, nil for one that is. Every module keeps its state in a
// store, and a store's errors that are not *podium.Error are failures of
// the database or the disk under it (podium's own refusals are always
// *podium.Error): they are never a 500. By the stores' contract a failed
// write stored nothing unless its error wraps podium.ErrOutcomeUnknown (its
// COMMIT or fsync failed), so the answer is 503 outcome_unknown for those
// and 503 unavailable for the rest, with Retry-After (writeError).
func storageFailure(err error) *podium.Error {
	var pe *podium.Error
	if errors.As(err, &pe) {
		return nil
	}
	if errors.Is(err, podium.ErrOutcomeUnknown) {
		return podium.Errorf(podium.ECodeOutcomeUnknown, "the write reached the database but its commit failed: it may or may not have been stored; "+
			"retry the same request (with the same Idempotency-Key), which is safe, once podium is back")
	}
	return podium.Errorf(podium.ECodeUnavailable, "the database could not complete the request; nothing was changed, retry shortly")
}

func appendErrorBody(b []byte, code, msg string) []byte {
	b = append(b, `{"error":{"code":`...)
	b = appendString(b, code)
	b = append(b, `,"message":`...)
	b = appendString(b, msg)
	return append(b, "}}"...)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(body) + 1)}
	w.WriteHeader(status)
	body = append(body, '\n')
	w.Write(body)
}

var jsonContentType = []string{"application/json"}
