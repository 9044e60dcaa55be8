package sqlstore

// Boards, players and API keys, and what deleting a board deletes.
var (
	DeleteKey              = New("DELETE FROM api_keys WHERE id = ?")
	DeleteBoard            = New("DELETE FROM boards WHERE id = ?")
	DeleteBoardEntries     = New("DELETE FROM entries WHERE board = ?")
	DeleteBoardFeed        = New("DELETE FROM feed WHERE board = ?")
	DeleteBoardReviewItems = New("DELETE FROM review_items WHERE board = ?")
	DeleteBoardLog         = New("DELETE FROM submissions WHERE board = ?")
	DeleteBoardWatermark   = New("DELETE FROM watermarks WHERE board = ?")
	ExpireBoardEvidence    = New("UPDATE evidence SET expires_ms = 0 WHERE board = ?")
	PutKey                 = New(`INSERT INTO api_keys (id, name, scopes, boards, hash, created_ms) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, scopes = excluded.scopes, boards = excluded.boards,
		hash = excluded.hash, created_ms = excluded.created_ms`)
	PutBoard = New(`INSERT INTO boards (id, body, created_ms, updated_ms) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET body = excluded.body, created_ms = excluded.created_ms, updated_ms = excluded.updated_ms`)
	PutPlayer = New(`INSERT INTO players (id, name, hidden, meta, updated_ms) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, hidden = excluded.hidden, meta = excluded.meta, updated_ms = excluded.updated_ms`)
	Players = New("SELECT id, name, hidden, meta, updated_ms FROM players ORDER BY id")
	Keys    = New("SELECT id, name, scopes, boards, hash, created_ms FROM api_keys ORDER BY id")
)
