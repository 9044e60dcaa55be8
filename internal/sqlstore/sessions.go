package sqlstore

import (
	"time"

	"github.com/podiumhq/podium"
)

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

// Scanner is a row of either driver: a *sql.Row or *sql.Rows, a pgx.Row
// or pgx.CollectableRow.
type Scanner interface {
	Scan(dest ...any) error
}

// ScanSession reads a row of SessionCols. Neither driver needs anything
// of its own for these columns (none is NULL), so one function serves
// both stores.
func ScanSession(r Scanner) (podium.Session, error) {
	var (
		s                                podium.Session
		ttl, created, refreshed, expires int64
	)
	err := r.Scan(&s.ID, &s.Player, &s.Device, &s.Hash, &ttl, &created, &refreshed, &expires, &s.Marker)
	s.TTL = time.Duration(ttl) * time.Millisecond
	s.CreatedAt, s.RefreshedAt, s.ExpiresAt = podium.FromMillis(created), podium.FromMillis(refreshed), podium.FromMillis(expires)
	return s, err
}
