package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

var _ podium.SessionStore = (*Store)(nil)

// sessionRows is the Store's player sessions (podium.SessionStore).
type sessionRows struct{ *Store }

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(dest ...any) error }

func (s sessionRows) querySessions(ctx context.Context, what, q string, args ...any) ([]podium.Session, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []podium.Session
	for rows.Next() {
		ses, err := sqlstore.ScanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, ses)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// ActiveSessions lists the sessions that expire after now.
func (s sessionRows) ActiveSessions(ctx context.Context, now time.Time) ([]podium.Session, error) {
	return s.querySessions(ctx, "sessions", sqlstore.ActiveSessions.SQLite, podium.Millis(now))
}

// PlayerSessions lists a player's sessions, oldest first.
func (s sessionRows) PlayerSessions(ctx context.Context, player string) ([]podium.Session, error) {
	return s.querySessions(ctx, "player sessions", sqlstore.PlayerSessions.SQLite, player)
}

func (s sessionRows) oneSession(ctx context.Context, what, q, arg string) (*podium.Session, error) {
	ses, err := sqlstore.ScanSession(s.r.QueryRowContext(ctx, q, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &ses, nil
}

// LoadSession returns one session, nil if it does not exist.
func (s sessionRows) LoadSession(ctx context.Context, id string) (*podium.Session, error) {
	return s.oneSession(ctx, "load session", sqlstore.LoadSession.SQLite, id)
}

// SessionByMarker returns the session issued under marker, nil if none.
func (s sessionRows) SessionByMarker(ctx context.Context, marker string) (*podium.Session, error) {
	if marker == "" {
		return nil, nil
	}
	return s.oneSession(ctx, "session by marker", sqlstore.SessionByMarker.SQLite, marker)
}

// PutSession stores a new session, removing the player's session on the
// same device and the oldest beyond max.
func (s sessionRows) PutSession(ctx context.Context, ses *podium.Session, max int) ([]string, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("put session: %w", err)
	}
	defer tx.Rollback()
	if ses.Marker != "" {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM player_sessions WHERE marker = ?", ses.Marker).Scan(&n); err != nil {
			return nil, fmt.Errorf("put session: %w", err)
		}
		if n > 0 {
			return nil, podium.Errorf(podium.ECodeConflict, "a session was already issued under this Idempotency-Key")
		}
	}
	var removed []string
	collect := func(q string, args ...any) error {
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			removed = append(removed, id)
		}
		return rows.Err()
	}
	if err := collect(sqlstore.DeleteDeviceSession.SQLite, ses.Player, ses.Device); err != nil {
		return nil, fmt.Errorf("put session: %w", err)
	}
	if _, err := tx.ExecContext(ctx, sqlstore.InsertSession.SQLite,
		ses.ID, ses.Player, ses.Device, ses.Hash, ses.TTL.Milliseconds(), podium.Millis(ses.CreatedAt),
		podium.Millis(ses.RefreshedAt), podium.Millis(ses.ExpiresAt), ses.Marker); err != nil {
		if sqliteCode(err) == codeConstraintUnique {
			return nil, podium.Errorf(podium.ECodeConflict, "another session has the same id or token")
		}
		return nil, fmt.Errorf("put session: %w", err)
	}
	if err := collect(`DELETE FROM player_sessions WHERE id IN (SELECT id FROM player_sessions WHERE player = ?
		ORDER BY id = ? DESC, created_ms DESC, id DESC LIMIT -1 OFFSET ?) RETURNING id`, ses.Player, ses.ID, max); err != nil {
		return nil, fmt.Errorf("put session: %w", err)
	}
	if err := s.commitTx(tx); err != nil {
		return nil, fmt.Errorf("put session: %w", err)
	}
	return removed, s.durable(ctx)
}

// RotateSession gives a session a new hash and times.
func (s sessionRows) RotateSession(ctx context.Context, id, hash string, refreshed, expires time.Time) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	res, err := s.w.ExecContext(ctx, sqlstore.RotateSession.SQLite,
		hash, podium.Millis(refreshed), podium.Millis(expires), id)
	if err != nil {
		return fmt.Errorf("rotate session: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("rotate session: %w", err)
	} else if n == 0 {
		return podium.Errorf(podium.ECodeNotFound, "session %q does not exist", id)
	}
	return s.durable(ctx)
}

// DeleteSessions removes one session of a player, or all of them.
func (s sessionRows) DeleteSessions(ctx context.Context, player, id string) ([]string, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	q, args := sqlstore.DeletePlayerSessions.SQLite, []any{player}
	if id != "" {
		q, args = sqlstore.DeletePlayerSession.SQLite, []any{player, id}
	}
	rows, err := s.w.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("delete sessions: %w", err)
	}
	var removed []string
	for rows.Next() {
		var rid string
		if err := rows.Scan(&rid); err != nil {
			rows.Close()
			return nil, fmt.Errorf("delete sessions: %w", err)
		}
		removed = append(removed, rid)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("delete sessions: %w", err)
	}
	if id != "" && len(removed) == 0 {
		return nil, podium.Errorf(podium.ECodeNotFound, "session %q of player %q does not exist", id, player)
	}
	if len(removed) == 0 {
		return nil, nil
	}
	return removed, s.durable(ctx)
}

// SweepSessions deletes at most limit expired sessions, the oldest first.
func (s sessionRows) SweepSessions(ctx context.Context, before time.Time, limit int) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	res, err := s.w.ExecContext(ctx, `DELETE FROM player_sessions WHERE id IN (SELECT id FROM player_sessions
		WHERE expires_ms <= ? ORDER BY expires_ms LIMIT ?)`, podium.Millis(before), limit)
	if err != nil {
		return 0, fmt.Errorf("sweep sessions: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sweep sessions: %w", err)
	}
	if n > 0 {
		err = s.durable(ctx)
	}
	return int(n), err
}
