package sqlstore

// The entries, watermarks and idempotency records outside the write
// path (the commit and the scans of entries and the log stay in each store).
var (
	PruneIdempotency   = New("DELETE FROM idempotency WHERE created_ms < ?")
	AllPeriods         = New("SELECT board, period, count(*) FROM entries GROUP BY board, period")
	Watermarks         = New("SELECT board, seq FROM watermarks")
	SchemaVersion      = New("SELECT coalesce(max(version), 0) FROM schema_migrations")
	Periods            = New(`SELECT period, count(*) FROM entries WHERE board = ? GROUP BY period ORDER BY period DESC`)
	IdempotencyRecords = New(`SELECT scope, key, request_hash, status, body, created_ms FROM idempotency
		WHERE created_ms >= ? ORDER BY created_ms, scope, key`)
	IdempotencyIndex = New(`SELECT scope, key, request_hash, status, created_ms FROM idempotency
		WHERE created_ms >= ? ORDER BY created_ms DESC`)
)
