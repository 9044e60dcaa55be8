package podium

import (
	"errors"
	"fmt"
)

// Error codes. The http package maps each to a status; adapters and the
// engine return *Error values carrying one of them.
const (
	ECodeInvalidJSON     = "invalid_json"
	ECodeInvalid         = "invalid_argument"
	ECodeUnauthenticated = "unauthenticated"
	ECodeForbidden       = "forbidden"
	ECodeBoardNotFound   = "board_not_found"
	ECodeEntryNotFound   = "entry_not_found"
	ECodeNotFound        = "not_found"
	ECodeConflict        = "conflict"
	ECodeTooLarge        = "too_large"
	ECodeUnsupportedType = "unsupported_media_type"
	ECodeUnprocessable   = "unprocessable"
	ECodeRateLimited     = "rate_limited"
	ECodeUnavailable     = "unavailable"
	// ECodeOutcomeUnknown: the write was handed to the database but podium
	// cannot tell whether it was stored (a COMMIT or an fsync failed). A
	// retry with the same Idempotency-Key is safe.
	ECodeOutcomeUnknown = "outcome_unknown"
	ECodeInternal       = "internal"
)

// ErrOutcomeUnknown marks a storage error after which the store cannot
// tell whether a write was stored: the COMMIT itself failed, or the data
// was written but the disk did not confirm it. Stores wrap such errors
// with OutcomeUnknown; any other error from a write means nothing of it
// was stored.
var ErrOutcomeUnknown = errors.New("the outcome of the write is unknown")

// OutcomeUnknown wraps err as an ErrOutcomeUnknown error.
func OutcomeUnknown(err error) error { return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err) }

// BoardNotFound is the ECodeBoardNotFound error of a board id that does not
// exist. It is also the answer, word for word, for a private board the
// caller may not read, so that a private id cannot be told from an unknown
// one (docs/API.md, "Private ids").
func BoardNotFound(id string) error {
	return Errorf(ECodeBoardNotFound, "board %q does not exist", id)
}

// Error is the one error type users see. Message is a human sentence safe
// to show to a client; internal details stay in wrapped errors and logs.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err if it is, or wraps, an *Error, and
// ECodeInternal otherwise.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ECodeInternal
}

// ErrorMessage returns the user-facing message of err; internal errors get a
// generic sentence so that internals never leak.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
