package sqlstore

// SessionCols are the columns of a player session, in the order the
// stores scan them.
const SessionCols = "id, player, device, hash, ttl_ms, created_ms, refreshed_ms, expires_ms, marker"

// Player sessions (podium.SessionStore).
var (
	DeleteDeviceSession  = New("DELETE FROM player_sessions WHERE player = ? AND device = ? RETURNING id")
	DeletePlayerSession  = New("DELETE FROM player_sessions WHERE player = ? AND id = ? RETURNING id")
	DeletePlayerSessions = New("DELETE FROM player_sessions WHERE player = ? RETURNING id")
	InsertSession        = New("INSERT INTO player_sessions (" + SessionCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	ActiveSessions       = New("SELECT " + SessionCols + ` FROM player_sessions WHERE expires_ms > ? ORDER BY id`)
	PlayerSessions       = New("SELECT " + SessionCols + ` FROM player_sessions WHERE player = ? ORDER BY created_ms, id`)
	LoadSession          = New("SELECT " + SessionCols + " FROM player_sessions WHERE id = ?")
	SessionByMarker      = New("SELECT " + SessionCols + " FROM player_sessions WHERE marker = ?")
	RotateSession        = New("UPDATE player_sessions SET hash = ?, refreshed_ms = ?, expires_ms = ? WHERE id = ?")
)
