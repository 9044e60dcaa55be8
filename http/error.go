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
	code := podium.ErrorCode(err)
	if code == podium.ECodeInternal {
		// The query helps to reproduce; secrets in it (?key=) are cut.
		s.log.Error("internal error", "method", r.Method, "path", r.URL.Path, "query", redactQuery(r.URL.RawQuery), "err", err)
	}
	status := StatusOf(code)
	if status == http.StatusRequestTimeout {
		// The rest of the body may still come: this connection cannot
		// carry another request.
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
