package http

import "net/http"

// SetExportPause makes an export call f after writing each chunk but the
// last, so that a test can change the board between chunks.
func (s *Server) SetExportPause(f func(chunk int)) { s.entries.exportPause = f }

// SetAfterAuth makes principal call f each time it accepts a request's
// key, so that a test can revoke the key between two checks.
func (s *Server) SetAfterAuth(f func(r *http.Request)) { s.afterAuth = f }

// SetCohortRereadError makes a followed cohort's re-read pass its error
// (nil when it read) through f, so that a test can fail one read.
func (s *Server) SetCohortRereadError(f func(error) error) { s.leagues.rereadErr = f }
