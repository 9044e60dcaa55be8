package sessions

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// newSessionToken returns a fresh random session token.
func newSessionToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "pds_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// SessionDefaults returns the default and longest TTL and the cap.
func (m *Module) SessionDefaults() (ttl, maxTTL time.Duration, limit int) {
	return m.cfg.TTL, m.cfg.MaxTTL, m.cfg.Cap
}

// IssueSession signs player in on device for ttl (0: the default) and
// returns the session with its token, which is shown only this once. It
// replaces the player's session on the same device and, past the cap,
// the oldest. marker, if not "", is the hashed Idempotency-Key: a second
// issue under it is ECodeConflict. Bad input is ECodeInvalid.
func (m *Module) IssueSession(ctx context.Context, player, device string, ttl time.Duration, marker string) (podium.Session, string, error) {
	if err := podium.ValidPlayerID(player); err != nil {
		return podium.Session{}, "", err
	}
	if err := podium.ValidateDevice(device); err != nil {
		return podium.Session{}, "", err
	}
	if ttl == 0 {
		ttl = m.cfg.TTL
	}
	if ttl < podium.MinSessionTTL || ttl > m.cfg.MaxTTL {
		return podium.Session{}, "", podium.Errorf(podium.ECodeInvalid, "ttl must be %s to %s", podium.MinSessionTTL, m.cfg.MaxTTL)
	}
	if err := m.host.WriteRefusal(); err != nil {
		return podium.Session{}, "", err
	}
	if m.store == nil {
		return podium.Session{}, "", errNoSessions
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return podium.Session{}, "", err
	}
	token := newSessionToken()
	now := m.host.Now().UTC().Truncate(time.Millisecond)
	s := podium.Session{ID: "ses_" + hex.EncodeToString(id[:]), Player: player, Device: device, Hash: engine.HashSecret(token),
		TTL: ttl, CreatedAt: now, RefreshedAt: now, ExpiresAt: now.Add(ttl), Marker: marker}
	removed, err := m.store.PutSession(ctx, &s, m.cfg.Cap)
	if err != nil {
		return podium.Session{}, "", m.host.StoreFailed("put session", err)
	}
	m.held.put(&s)
	for _, id := range removed {
		m.drop(id)
	}
	// The sessions the cap evicted are revoked: the notice names them, so
	// that the other nodes refuse them at once, as for RevokeSessions.
	m.host.Changed(removed...)
	return s, token, nil
}

// SessionByMarker returns the session issued under an idempotency marker,
// nil if none.
func (m *Module) SessionByMarker(ctx context.Context, marker string) (*podium.Session, error) {
	if m.store == nil {
		return nil, errNoSessions
	}
	return m.store.SessionByMarker(ctx, marker)
}

// PlayerSessions lists a player's unexpired sessions, oldest first.
func (m *Module) PlayerSessions(ctx context.Context, player string) ([]podium.Session, error) {
	if m.store == nil {
		return nil, errNoSessions
	}
	list, err := m.store.PlayerSessions(ctx, player)
	if err != nil {
		return nil, err
	}
	now := m.host.Now()
	out := list[:0]
	for _, s := range list {
		if now.Before(s.ExpiresAt) {
			out = append(out, s)
		}
	}
	return out, nil
}

// RevokeSessions revokes one session of a player (id not "") or all of
// them, at once: its token stops working and its streams end, here and on
// every node. It returns the ids revoked; a missing session is
// ECodeNotFound.
func (m *Module) RevokeSessions(ctx context.Context, player, id string) ([]string, error) {
	if err := m.host.WriteRefusal(); err != nil {
		return nil, err
	}
	if m.store == nil {
		return nil, errNoSessions
	}
	ids, err := m.store.DeleteSessions(ctx, player, id)
	if err != nil {
		return nil, m.host.StoreFailed("delete sessions", err)
	}
	for _, id := range ids {
		m.drop(id)
	}
	if len(ids) > 0 {
		m.host.Changed(ids...)
	}
	return ids, nil
}

// RefreshSession rotates a session's token: the old one stops working at
// once, and the session lives for its TTL again from now. It returns the
// session with its new token. A missing or expired session (or another
// player's) is ECodeNotFound.
func (m *Module) RefreshSession(ctx context.Context, player, id string) (podium.Session, string, error) {
	if err := m.host.WriteRefusal(); err != nil {
		return podium.Session{}, "", err
	}
	if m.store == nil {
		return podium.Session{}, "", errNoSessions
	}
	s, err := m.store.LoadSession(ctx, id)
	if err != nil {
		return podium.Session{}, "", m.host.StoreFailed("load session", err)
	}
	now := m.host.Now().UTC().Truncate(time.Millisecond)
	if s == nil || s.Player != player || !now.Before(s.ExpiresAt) {
		return podium.Session{}, "", podium.Errorf(podium.ECodeNotFound, "session %q of player %q does not exist", id, player)
	}
	token := newSessionToken()
	ttl := min(s.TTL, m.cfg.MaxTTL)
	s.Hash, s.RefreshedAt, s.ExpiresAt = engine.HashSecret(token), now, now.Add(ttl)
	if err := m.store.RotateSession(ctx, id, s.Hash, s.RefreshedAt, s.ExpiresAt); err != nil {
		return podium.Session{}, "", m.host.StoreFailed("rotate session", err)
	}
	m.held.put(s)
	m.host.Changed()
	return *s, token, nil
}
