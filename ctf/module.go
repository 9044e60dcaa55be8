package ctf

import (
	"context"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/engine"
)

// Module is the contests as a feature module of the engine (issue 19),
// registered like the boards' modules (package modules): it runs a Service
// over the engine's store, clock and logger, with the engine's players as
// its teams. A store without contests (no contest.Store) leaves it off:
// Service is nil, and the server has no contest routes.
//
// Its lifecycle (engine/module.go): Provision makes the Service; Load
// loads every contest at the engine's Start, before the writer runs (as
// the server started the contests before the engine before they were a
// module); Start starts the background work (following the other nodes,
// snapshots, the broker subscription) with Host.Go, so that the engine's
// Close stops it once the writer has stopped and joins it.
type Module struct {
	cfg ModuleConfig
	svc *Service
	run func(fn func(ctx context.Context)) // Host.Go
}

// ModuleConfig configures the Module. Zero values mean the defaults.
type ModuleConfig struct {
	// Broker, when set, carries notices between the nodes on one
	// database (Config.Broker); Node names this node in them.
	Broker podium.Broker
	Node   string
	// PollEvery is how often a node of several on one database (a
	// podium.SharedStore) reads what the others changed (Config.Poll:
	// default 1 s; negative: never). A node with a database of its own
	// never polls: nobody else writes.
	PollEvery time.Duration
}

var (
	_ engine.Provisioner = (*Module)(nil)
	_ engine.Loader      = (*Module)(nil)
	_ engine.Starter     = (*Module)(nil)
)

// NewModule returns the contests module with cfg.
func NewModule(cfg ModuleConfig) *Module { return &Module{cfg: cfg} }

// Name is "contests".
func (m *Module) Name() string { return "contests" }

// Service returns the contest service, nil if the store keeps no contests.
// It is made at Provision and serves once the engine has started.
func (m *Module) Service() *Service { return m.svc }

// Provision makes the Service over the engine's store (its contest.Store,
// if it has one), clock and logger, with the engine as its Players.
func (m *Module) Provision(h engine.Host) {
	cs, ok := h.Store().(contest.Store)
	if !ok {
		return
	}
	poll := time.Duration(-1) // a database of its own: nobody else writes
	if _, shared := h.Store().(podium.SharedStore); shared {
		poll = m.cfg.PollEvery
	}
	m.svc = New(Config{Store: cs, Players: h.Engine(), Now: h.Now, Logger: h.Logger(),
		Broker: m.cfg.Broker, Node: m.cfg.Node, Poll: poll})
	m.run = h.Go
}

// Load loads every contest from the store.
func (m *Module) Load(ctx context.Context) error {
	if m.svc == nil {
		return nil
	}
	return m.svc.Sync(ctx)
}

// Start starts the background work (Service.Start's) on the engine's
// goroutines.
func (m *Module) Start() {
	if m.svc == nil {
		return
	}
	m.svc.run(m.run)
}
