package sqlstore

// Period retention (podium.RetentionStore): a bounded batch of a board's
// entries and log rows in periods it no longer keeps. Each statement
// walks a primary key from its start: entries (board, period, player),
// the log (board, seq), whose oldest rows are the oldest periods'.
var (
	PruneEntries = New(`DELETE FROM entries WHERE board = ? AND period < ? AND (period, player) IN
		(SELECT period, player FROM entries WHERE board = ? AND period < ? ORDER BY period, player LIMIT ?)`)
	LogHead    = New("SELECT seq, period FROM submissions WHERE board = ? ORDER BY seq LIMIT ?")
	LogLastSeq = New("SELECT coalesce(max(seq), 0) FROM submissions WHERE board = ?")
	PruneLog   = New("DELETE FROM submissions WHERE board = ? AND seq >= ? AND seq <= ?")
)
