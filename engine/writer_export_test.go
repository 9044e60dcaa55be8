package engine

// QueuedOps is the number of ops waiting for the writer (tests of what
// one group holds: restore_group_test.go).
func (e *Engine) QueuedOps() int { return len(e.w.ops) }

// Knows reports whether this node has the board in memory, without
// asking the database as Board does in shared mode (lookup): tests of a
// node that has not heard of a board yet.
func (e *Engine) Knows(id string) bool { return e.board(id) != nil }
