package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/podiumhq/podium"
)

// Modules (issue 19). A feature that is not the write path's core lives in
// a package of its own and registers with the engine in Config.Modules;
// cmd/podium's wiring lists them, nothing registers itself, so a test
// builds an engine with exactly the modules it needs. The engine never
// imports a module: it knows one by Module and by the optional interfaces
// below, which it discovers by type assertion (as Caddy does). A module
// implements only those it uses. The engine calls them in this order,
// each in registration order:
//
//  1. Provisioner.Provision, in New: the module takes what it needs from
//     the Host (its store, the clock, the engine's reads).
//  2. Loader.Load, in Start, after the boards, players, keys and freezes
//     are loaded and before the idempotency keys, settlements and the
//     writer: what the module holds in memory. An error fails Start.
//  3. Starter.Start, in Start once the writer runs, before the engine is
//     ready: the module's background goroutines (Host.Go), which Close
//     joins after the writer has stopped.
//
// While the engine serves:
//   - Authenticator.Authenticate when a secret is neither the admin's nor
//     an API key's (the first module that knows it wins), and
//     Authenticator.Forget for each credential another node's notice says
//     it revoked, before the Listener ends its streams;
//   - Follower.Follow for each change of the change feed the core does
//     not apply itself, and Follower.Resync after the node missed changes,
//     after the boards, players and keys and before the freezes (shared
//     mode, on the follower).
type Module interface {
	// Name names the module in logs and errors.
	Name() string
}

// Provisioner is a module that takes what it needs from the engine.
type Provisioner interface {
	Provision(Host)
}

// Loader is a module that loads its state from the store at start.
type Loader interface {
	Load(ctx context.Context) error
}

// Starter is a module with background work, started once the writer runs.
type Starter interface {
	Start()
}

// Authenticator is a module that holds credentials of its own (player
// sessions): Authenticate resolves the hex SHA-256 of a secret (HashSecret)
// to its principal; Forget drops a credential another node revoked.
type Authenticator interface {
	Authenticate(hash string) (*podium.APIKey, bool)
	Forget(id string)
}

// Follower is a module whose state other nodes change (shared mode).
// Follow applies one change of the change feed (it ignores kinds that are
// not its own); Resync reloads everything after missed changes.
type Follower interface {
	Follow(ctx context.Context, c podium.Change) error
	Resync(ctx context.Context) error
}

// Host is what the engine offers a module at Provision.
type Host interface {
	// Store is the engine's store; a module type-asserts the interface
	// of its own rows (podium.SessionStore, podium.EvidenceStore).
	Store() podium.Store
	Now() time.Time
	Logger() *slog.Logger
	// Engine is the engine itself, for its reads; a module keeps it as a
	// small interface of what it uses.
	Engine() *Engine
	// Go runs fn in a goroutine that Close waits for; ctx ends once the
	// writer has stopped, and fn must return then.
	Go(fn func(ctx context.Context))
	// WriteRefusal is the error a write gets while the engine takes none
	// (loading, closing, or stopped after a storage failure), nil if it
	// takes them.
	WriteRefusal() error
	// StoreFailed turns a store error of call into the error a write
	// answers, and stops writes if the outcome is unknown.
	StoreFailed(call string, err error) error
	// KeyRevoked ends on this node what a credential opened (the
	// Listener's live streams).
	KeyRevoked(id string)
	// Changed tells the other nodes (shared mode) that the change feed
	// moved; revoked names credentials they must refuse at once.
	Changed(revoked ...string)
}

// modules are the engine's modules, by the interfaces they implement.
type modules struct {
	loaders   []Loader
	starters  []Starter
	auth      []Authenticator
	followers []Follower
}

// provision provisions mods and sorts them by what they implement.
func (e *Engine) provision(mods []Module) {
	for _, m := range mods {
		if p, ok := m.(Provisioner); ok {
			p.Provision(host{e})
		}
		if l, ok := m.(Loader); ok {
			e.mods.loaders = append(e.mods.loaders, l)
		}
		if s, ok := m.(Starter); ok {
			e.mods.starters = append(e.mods.starters, s)
		}
		if a, ok := m.(Authenticator); ok {
			e.mods.auth = append(e.mods.auth, a)
		}
		if f, ok := m.(Follower); ok {
			e.mods.followers = append(e.mods.followers, f)
		}
	}
}

// host is the Host of the engine's modules.
type host struct{ e *Engine }

func (h host) Store() podium.Store                      { return h.e.store }
func (h host) Now() time.Time                           { return h.e.now() }
func (h host) Logger() *slog.Logger                     { return h.e.log }
func (h host) Engine() *Engine                          { return h.e }
func (h host) Go(fn func(ctx context.Context))          { h.e.bg.Go(func() { fn(h.e.stopCtx) }) }
func (h host) WriteRefusal() error                      { return h.e.writeRefusal() }
func (h host) StoreFailed(call string, err error) error { return h.e.storeFailed(call, err) }
func (h host) Changed(revoked ...string)                { h.e.changed(revoked...) }

func (h host) KeyRevoked(id string) {
	if h.e.listener != nil {
		h.e.listener.KeyRevoked(id)
	}
}
