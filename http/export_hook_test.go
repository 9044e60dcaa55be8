package http

import "net/http"

// SetExportPause makes an export call f after writing each chunk but the
// last, so that a test can change the board between chunks.
func (s *Server) SetExportPause(f func(chunk int)) { s.entries.exportPause = f }

// SetAfterAuth makes principal call f each time it accepts a request's
// key, so that a test can revoke the key between two checks.
func (s *Server) SetAfterAuth(f func(r *http.Request)) { s.afterAuth = f }
