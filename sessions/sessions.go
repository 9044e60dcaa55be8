// Package sessions is the player sessions module (podium.Session): bearer
// tokens that act as one player.
//
// Like API keys they are held in memory by token hash, so authentication
// is a map lookup (the engine asks the module when a secret is no API key:
// engine.Authenticator); the store is the authority, and in shared mode
// every issue, refresh and revocation travels on the change feed, so each
// node reloads or forgets the session at once (engine.Follower). An
// expired session is refused by the clock on every node without waiting
// for anything; a heap of expiry times lets a background loop end its
// open streams, and a sweep deletes expired rows in bounded batches.
//
// The module registers with the engine (engine.Config.Modules) and owns
// its state, its loop and its config; the engine never imports it.
package sessions

import (
	"context"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Config configures player sessions; zero values mean the defaults.
type Config struct {
	TTL    time.Duration // default podium.DefaultSessionTTL
	MaxTTL time.Duration // the longest a request may ask (default podium.DefaultSessionMaxTTL)
	Cap    int           // sessions per player (default podium.DefaultSessionCap)
	// ExpireEvery is how often expired sessions are forgotten and their
	// streams ended (default 1s; negative: never, tests call
	// ExpireSessions); SweepEvery how often expired rows are deleted
	// (default 1m), SweepBatch rows at a time (default 500).
	ExpireEvery time.Duration
	SweepEvery  time.Duration
	SweepBatch  int
}

func (c *Config) fill() {
	if c.TTL <= 0 {
		c.TTL = podium.DefaultSessionTTL
	}
	if c.MaxTTL <= 0 {
		c.MaxTTL = podium.DefaultSessionMaxTTL
	}
	if c.MaxTTL < c.TTL {
		c.MaxTTL = c.TTL
	}
	if c.Cap <= 0 {
		c.Cap = podium.DefaultSessionCap
	}
	if c.ExpireEvery == 0 {
		c.ExpireEvery = time.Second
	}
	if c.SweepEvery <= 0 {
		c.SweepEvery = time.Minute
	}
	if c.SweepBatch <= 0 {
		c.SweepBatch = 500
	}
}

// Module is player sessions. Register it with one engine
// (engine.Config.Modules) before using it.
type Module struct {
	cfg   Config
	host  engine.Host
	store podium.SessionStore // nil: the store has no sessions
	held  held
}

var (
	_ engine.Provisioner   = (*Module)(nil)
	_ engine.Loader        = (*Module)(nil)
	_ engine.Starter       = (*Module)(nil)
	_ engine.Authenticator = (*Module)(nil)
	_ engine.Follower      = (*Module)(nil)
)

// New returns the sessions module with cfg.
func New(cfg Config) *Module {
	cfg.fill()
	return &Module{cfg: cfg, held: newHeld()}
}

var errNoSessions = podium.Errorf(podium.ECodeUnavailable, "this store keeps no player sessions")

// Name is "sessions".
func (m *Module) Name() string { return "sessions" }

// Provision takes the engine's store (its podium.SessionStore, if it has
// one) and clock.
func (m *Module) Provision(h engine.Host) {
	m.host = h
	m.store, _ = h.Store().(podium.SessionStore)
}

// Load reads the unexpired sessions at start.
func (m *Module) Load(ctx context.Context) error {
	if m.store == nil {
		return nil
	}
	list, err := m.store.ActiveSessions(ctx, m.host.Now())
	if err != nil {
		return err
	}
	for i := range list {
		m.held.put(&list[i])
	}
	return nil
}

// Start starts the loop that expires and sweeps sessions until the engine
// stops.
func (m *Module) Start() { m.host.Go(m.loop) }

func (m *Module) loop(ctx context.Context) {
	var expire <-chan time.Time
	if m.cfg.ExpireEvery > 0 {
		t := time.NewTicker(m.cfg.ExpireEvery)
		defer t.Stop()
		expire = t.C
	}
	sweep := time.NewTicker(m.cfg.SweepEvery)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-expire:
			m.ExpireSessions()
		case <-sweep.C:
			// A few batches a tick keep each short; what is left goes at
			// the next tick. A sweep under way when the engine stops
			// finishes: Close waits for it.
			if _, err := m.SweepSessions(context.Background(), 10); err != nil {
				m.host.Logger().Warn("sweep expired player sessions", "err", err)
			}
		}
	}
}

// Authenticate returns the principal of an unexpired session by token
// hash.
func (m *Module) Authenticate(hash string) (*podium.APIKey, bool) {
	return m.held.lookup(hash, m.host.Now())
}

// Revoked forgets a session another node revoked; the engine then ends
// its streams.
func (m *Module) Revoked(id string) { m.held.remove(id) }

// Follow applies a session change from the change feed.
func (m *Module) Follow(ctx context.Context, c podium.Change) error {
	if c.Kind != podium.ChangeSession || m.store == nil {
		return nil
	}
	s, err := m.store.LoadSession(ctx, c.Key)
	if err != nil {
		return err
	}
	if s == nil || !m.host.Now().Before(s.ExpiresAt) {
		m.drop(c.Key)
		return nil
	}
	m.held.put(s)
	return nil
}

// Resync reloads every session after missed changes.
func (m *Module) Resync(ctx context.Context) error {
	if m.store == nil {
		return nil
	}
	list, err := m.store.ActiveSessions(ctx, m.host.Now())
	if err != nil {
		return err
	}
	kept := make(map[string]bool, len(list))
	for i := range list {
		kept[list[i].ID] = true
		m.held.put(&list[i])
	}
	for _, id := range m.held.ids() {
		if !kept[id] {
			m.drop(id)
		}
	}
	return nil
}

// drop forgets a session and ends its open streams.
func (m *Module) drop(id string) {
	m.held.remove(id)
	m.host.KeyRevoked(id)
}

// ExpireSessions forgets the sessions that have expired by the engine's
// clock and ends their streams; the module calls it every ExpireEvery.
// It returns how many it ended.
func (m *Module) ExpireSessions() int {
	ids := m.held.expired(m.host.Now())
	for _, id := range ids {
		m.host.KeyRevoked(id)
	}
	return len(ids)
}

// SweepSessions deletes expired sessions from the store in batches of
// SweepBatch, at most max batches, and returns how many rows went.
func (m *Module) SweepSessions(ctx context.Context, max int) (int, error) {
	if m.store == nil {
		return 0, nil
	}
	total := 0
	for range max {
		n, err := m.store.SweepSessions(ctx, m.host.Now(), m.cfg.SweepBatch)
		total += n
		if err != nil || n < m.cfg.SweepBatch {
			return total, err
		}
	}
	return total, nil
}
