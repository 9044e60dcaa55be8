package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

var _ podium.SessionStore = (*Store)(nil)

// sessionRows is the Store's player sessions (podium.SessionStore).
type sessionRows struct{ *Store }

// Player sessions (podium.SessionStore). Every write appends a session
// change per session it touches, so that the other nodes reload (or
// forget) it at once. Writers of sessions take the change feed's lock
// before any session row, the order queueChange asks for; PutSession takes
// a per-player advisory lock first, so that two nodes issuing for one
// player take turns and the cap holds.

func (s sessionRows) querySessions(ctx context.Context, what, q string, args ...any) ([]podium.Session, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.Session, error) { return sqlstore.ScanSession(r) })
	return out, wrap(what, err)
}

// ActiveSessions lists the sessions that expire after now.
func (s sessionRows) ActiveSessions(ctx context.Context, now time.Time) ([]podium.Session, error) {
	return s.querySessions(ctx, "sessions", sqlstore.ActiveSessions.Postgres, podium.Millis(now))
}

// PlayerSessions lists a player's sessions, oldest first.
func (s sessionRows) PlayerSessions(ctx context.Context, player string) ([]podium.Session, error) {
	return s.querySessions(ctx, "player sessions", sqlstore.PlayerSessions.Postgres, player)
}

func (s sessionRows) oneSession(ctx context.Context, what, q, arg string) (*podium.Session, error) {
	ses, err := sqlstore.ScanSession(s.pool.QueryRow(ctx, q, arg))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &ses, nil
}

// LoadSession returns one session, nil if it does not exist.
func (s sessionRows) LoadSession(ctx context.Context, id string) (*podium.Session, error) {
	return s.oneSession(ctx, "load session", sqlstore.LoadSession.Postgres, id)
}

// SessionByMarker returns the session issued under marker, nil if none.
func (s sessionRows) SessionByMarker(ctx context.Context, marker string) (*podium.Session, error) {
	if marker == "" {
		return nil, nil
	}
	return s.oneSession(ctx, "session by marker", sqlstore.SessionByMarker.Postgres, marker)
}

// lockChanges takes the change feed's lock for a transaction that
// learns which sessions it changes only as it goes.
func lockChanges(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, "SELECT last FROM change_lock FOR UPDATE")
	return err
}

func collectIDs(ctx context.Context, tx pgx.Tx, q string, args ...any) ([]string, error) {
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (s sessionRows) appendSessionChanges(ctx context.Context, tx pgx.Tx, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	var b pgx.Batch
	for _, id := range ids {
		s.queueChange(&b, podium.ChangeSession, id)
	}
	return tx.SendBatch(ctx, &b).Close()
}

// PutSession stores a new session, removing the player's session on the
// same device and the oldest beyond max.
func (s sessionRows) PutSession(ctx context.Context, ses *podium.Session, max int) ([]string, error) {
	var removed []string
	err := inWriteTx(ctx, s.pool, func(tx pgx.Tx) error {
		removed = nil
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('podium.session:' || $1::text, 0))", ses.Player); err != nil {
			return err
		}
		if err := lockChanges(ctx, tx); err != nil {
			return err
		}
		if ses.Marker != "" {
			var taken bool
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT FROM player_sessions WHERE marker = $1)", ses.Marker).Scan(&taken); err != nil {
				return err
			}
			if taken {
				return podium.Errorf(podium.ECodeConflict, "a session was already issued under this Idempotency-Key")
			}
		}
		ids, err := collectIDs(ctx, tx, sqlstore.DeleteDeviceSession.Postgres, ses.Player, ses.Device)
		if err != nil {
			return err
		}
		removed = append(removed, ids...)
		if _, err := tx.Exec(ctx, sqlstore.InsertSession.Postgres,
			ses.ID, ses.Player, ses.Device, ses.Hash, ses.TTL.Milliseconds(), podium.Millis(ses.CreatedAt),
			podium.Millis(ses.RefreshedAt), podium.Millis(ses.ExpiresAt), ses.Marker); err != nil {
			if code, _ := pgCode(err); code == codeUniqueViolation {
				return podium.Errorf(podium.ECodeConflict, "another session has the same id, token or Idempotency-Key")
			}
			return err
		}
		ids, err = collectIDs(ctx, tx, `DELETE FROM player_sessions WHERE id IN (SELECT id FROM player_sessions WHERE player = $1
			ORDER BY id = $2 DESC, created_ms DESC, id DESC OFFSET $3) RETURNING id`, ses.Player, ses.ID, max)
		if err != nil {
			return err
		}
		removed = append(removed, ids...)
		return s.appendSessionChanges(ctx, tx, append([]string{ses.ID}, removed...))
	})
	if podium.ErrorCode(err) == podium.ECodeConflict {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("put session: %w", err)
	}
	return removed, nil
}

// RotateSession gives a session a new hash and times.
func (s sessionRows) RotateSession(ctx context.Context, id, hash string, refreshed, expires time.Time) error {
	err := inWriteTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.appendSessionChanges(ctx, tx, []string{id}); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, sqlstore.RotateSession.Postgres,
			hash, podium.Millis(refreshed), podium.Millis(expires), id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return podium.Errorf(podium.ECodeNotFound, "session %q does not exist", id)
		}
		return nil
	})
	if podium.ErrorCode(err) == podium.ECodeNotFound {
		return err
	}
	return wrap("rotate session", err)
}

// DeleteSessions removes one session of a player, or all of them.
func (s sessionRows) DeleteSessions(ctx context.Context, player, id string) ([]string, error) {
	var removed []string
	err := inWriteTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockChanges(ctx, tx); err != nil {
			return err
		}
		var err error
		if id == "" {
			removed, err = collectIDs(ctx, tx, sqlstore.DeletePlayerSessions.Postgres, player)
		} else {
			removed, err = collectIDs(ctx, tx, sqlstore.DeletePlayerSession.Postgres, player, id)
		}
		if err != nil {
			return err
		}
		if id != "" && len(removed) == 0 {
			return podium.Errorf(podium.ECodeNotFound, "session %q of player %q does not exist", id, player)
		}
		return s.appendSessionChanges(ctx, tx, removed)
	})
	if podium.ErrorCode(err) == podium.ECodeNotFound {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("delete sessions: %w", err)
	}
	return removed, nil
}

// SweepSessions deletes at most limit expired sessions, the oldest first.
// It appends no change: every node refuses an expired session by its
// clock, and forgets it on its own.
func (s sessionRows) SweepSessions(ctx context.Context, before time.Time, limit int) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM player_sessions WHERE id IN (SELECT id FROM player_sessions
		WHERE expires_ms <= $1 ORDER BY expires_ms LIMIT $2 FOR UPDATE SKIP LOCKED)`, podium.Millis(before), limit)
	if err != nil {
		return 0, fmt.Errorf("sweep sessions: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
