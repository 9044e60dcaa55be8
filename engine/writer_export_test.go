package engine

// QueuedOps is the number of ops waiting for the writer (tests of what
// one group holds: restore_group_test.go).
func (e *Engine) QueuedOps() int { return len(e.w.ops) }
