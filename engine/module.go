package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
)

// The modules' lifecycle (issue 19). A feature module (Module, hooks.go)
// may also implement the interfaces below, which the engine discovers by
// type assertion (as Caddy does) when it is made; a module implements only
// those it uses. Besides the write path's hooks (hooks.go), the engine
// calls them in this order, each in registration order:
//
//  1. Provisioner.Provision, at the end of New: the module takes what it
//     needs from the Host (its store, the clock, the engine's reads).
//  2. Loader.Load, in Start, after the boards, players and keys are
//     loaded and before the idempotency keys and the writer: what the
//     module holds in memory (the tournaments' settlements). An error
//     fails Start.
//  3. Starter.Start, in Start once the writer runs, before the engine is
//     ready: the module's background goroutines (Host.Go), which Close
//     joins after the writer has stopped. (There is no Stopper: what a
//     module runs ends with Host.Go's context, and Close waits for it.)
//
// While the engine serves:
//   - Authenticator.Authenticate when a secret is neither the admin's nor
//     an API key's (the first module that knows it wins), and
//     Authenticator.Revoked for each credential another node's notice
//     says it revoked, before the Listener ends its streams;
//   - Follower.Follow for each change of the change feed the core does
//     not apply itself, and for a player change before the core applies it
//     (review's freezes), and Follower.Resync after the node missed
//     changes, after the boards, players and keys (shared mode, on the
//     follower).
//
// Other packages (http) find a module they serve among Modules by the
// small interface they need.

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
// to its principal; Revoked drops a credential another node revoked.
type Authenticator interface {
	Authenticate(hash string) (*podium.APIKey, bool)
	Revoked(id string)
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
	// Registerer receives the module's Prometheus metrics (nil: none).
	Registerer() prometheus.Registerer
	// Listener is the engine's Listener now (nil: none), which a module
	// may tell more through an optional interface of its own.
	Listener() Listener
	// Node names this node: Config.Node in shared mode (as its notices
	// and leases name it), "local" on a store of its own.
	Node() string
}

// lifecycle holds the modules by the lifecycle interfaces they implement,
// in registration order.
type lifecycle struct {
	loaders   []Loader
	starters  []Starter
	auth      []Authenticator
	followers []Follower
}

// Modules returns the registered modules, in registration order.
func (e *Engine) Modules() []Module { return e.hooks.modules }

// provision provisions mods and sorts them by the lifecycle interfaces
// they implement.
func (e *Engine) provision(mods []Module) {
	for _, m := range mods {
		if p, ok := m.(Provisioner); ok {
			p.Provision(host{e})
		}
		if l, ok := m.(Loader); ok {
			e.life.loaders = append(e.life.loaders, l)
		}
		if s, ok := m.(Starter); ok {
			e.life.starters = append(e.life.starters, s)
		}
		if a, ok := m.(Authenticator); ok {
			e.life.auth = append(e.life.auth, a)
		}
		if f, ok := m.(Follower); ok {
			e.life.followers = append(e.life.followers, f)
		}
	}
}

// load runs the Loaders.
func (l *lifecycle) load(ctx context.Context) error {
	for _, x := range l.loaders {
		if err := x.Load(ctx); err != nil {
			return fmt.Errorf("load %s: %w", x.(Module).Name(), err) // every Loader came as a Module
		}
	}
	return nil
}

// start runs the Starters.
func (l *lifecycle) start() {
	for _, x := range l.starters {
		x.Start()
	}
}

// authenticate asks the Authenticators for a secret's hash; the first that
// knows it answers.
func (l *lifecycle) authenticate(hash string) (*podium.APIKey, bool) {
	for _, x := range l.auth {
		if k, ok := x.Authenticate(hash); ok {
			return k, true
		}
	}
	return nil, false
}

// revoked tells the Authenticators that another node revoked id.
func (l *lifecycle) revoked(id string) {
	for _, x := range l.auth {
		x.Revoked(id)
	}
}

// follow hands a change of the feed to the Followers.
func (l *lifecycle) follow(ctx context.Context, c podium.Change) error {
	for _, x := range l.followers {
		if err := x.Follow(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// resync tells the Followers that changes were missed.
func (l *lifecycle) resync(ctx context.Context) error {
	for _, x := range l.followers {
		if err := x.Resync(ctx); err != nil {
			return err
		}
	}
	return nil
}

// host is the Host of the engine's modules.
type host struct{ e *Engine }

func (h host) Store() podium.Store                      { return h.e.store }
func (h host) Now() time.Time                           { return h.e.now() }
func (h host) Logger() *slog.Logger                     { return h.e.log }
func (h host) Engine() *Engine                          { return h.e }
func (h host) Go(fn func(ctx context.Context))          { h.e.bg.Go(func() { fn(h.e.stopCtx) }) }
func (h host) WriteRefusal() error                      { return h.e.health.refusal() }
func (h host) StoreFailed(call string, err error) error { return h.e.health.storeFailed(call, err) }
func (h host) Changed(revoked ...string)                { h.e.sh.changed(revoked...) }
func (h host) Registerer() prometheus.Registerer        { return h.e.reg }
func (h host) Listener() Listener                       { return h.e.listener }

func (h host) Node() string {
	if h.e.sh != nil {
		return h.e.sh.node
	}
	return "local"
}

func (h host) KeyRevoked(id string) {
	if h.e.listener != nil {
		h.e.listener.KeyRevoked(id)
	}
}
