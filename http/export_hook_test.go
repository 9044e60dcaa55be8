package http

// SetExportPause makes an export call f after writing each chunk but the
// last, so that a test can change the board between chunks.
func (s *Server) SetExportPause(f func(chunk int)) { s.exportPause = f }
