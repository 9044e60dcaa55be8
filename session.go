package podium

import (
	"context"
	"time"
)

// ScopeSessions lets a key issue, list and revoke player sessions (admin
// holds it too).
const ScopeSessions = "sessions"

// Session defaults and bounds (the server's flags can change the first
// three).
const (
	DefaultSessionTTL    = 30 * 24 * time.Hour
	DefaultSessionMaxTTL = 90 * 24 * time.Hour
	DefaultSessionCap    = 10
	MinSessionTTL        = time.Minute
	MaxDeviceLen         = 64
)

// Session is a player's sign-in on one device: a bearer token whose
// holder acts as the player. Only the SHA-256 of the token is stored; the
// token is shown at issue and at each refresh, never again.
type Session struct {
	ID          string        `json:"id"` // "ses_" and 16 hex digits
	Player      string        `json:"player"`
	Device      string        `json:"device"`
	Hash        string        `json:"-"` // hex SHA-256 of the token
	TTL         time.Duration `json:"-"`
	CreatedAt   time.Time     `json:"created_at"`
	RefreshedAt time.Time     `json:"refreshed_at"`
	ExpiresAt   time.Time     `json:"expires_at"`
	// Marker is the hex SHA-256 of the Idempotency-Key it was issued
	// under (with the issuer's id), "" for none: a retry finds the session
	// by it and is refused, since the token cannot be shown again.
	Marker string `json:"-"`
}

// ValidateDevice checks a device label: 1 to MaxDeviceLen bytes of
// printable text.
func ValidateDevice(d string) error {
	if d == "" || len(d) > MaxDeviceLen {
		return Errorf(ECodeInvalid, "device must be 1 to %d bytes", MaxDeviceLen)
	}
	return validText("device", d)
}

// SessionStore is the optional Store ability that player sessions need;
// both stores have it. Every method owns its transaction.
type SessionStore interface {
	// ActiveSessions lists the sessions that expire after now, hashes included.
	ActiveSessions(ctx context.Context, now time.Time) ([]Session, error)
	// PlayerSessions lists one player's sessions (expired ones too, until
	// swept), oldest first.
	PlayerSessions(ctx context.Context, player string) ([]Session, error)
	// LoadSession returns one session, nil if it does not exist.
	LoadSession(ctx context.Context, id string) (*Session, error)
	// SessionByMarker returns the session issued under an idempotency
	// marker, nil if none.
	SessionByMarker(ctx context.Context, marker string) (*Session, error)
	// PutSession stores a new session in one transaction with what it
	// displaces: the player's session on the same device, then the
	// player's oldest sessions (by creation, then id) beyond max. It
	// returns the ids it removed. A marker another session holds is
	// ECodeConflict, and nothing changes. Two issues for one player are
	// serialised, so the cap holds across nodes.
	PutSession(ctx context.Context, s *Session, max int) (removed []string, err error)
	// RotateSession gives a session a new hash, refresh time and expiry.
	// A missing session is ECodeNotFound.
	RotateSession(ctx context.Context, id, hash string, refreshed, expires time.Time) error
	// DeleteSessions removes one session of a player (id not "") or all of
	// them (id ""), and returns the ids removed. A missing session is
	// ECodeNotFound; a player without sessions removes none.
	DeleteSessions(ctx context.Context, player, id string) ([]string, error)
	// SweepSessions deletes at most limit sessions that expired at or
	// before before, the oldest first, and returns how many.
	SweepSessions(ctx context.Context, before time.Time, limit int) (int, error)
}
