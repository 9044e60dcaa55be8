// Package feed is the activity feed's module (see podium.FeedEvent): a
// capped feed per board of notable events, derived by the writer while it
// computes a group, from the state the group is computed against, and
// stored in the same transaction as the submissions that caused them, or
// not at all (the feed's part of the group's batch, FeedStore.FeedPart).
// Nothing else derives events: start-up replay, following other nodes'
// commits, reloads and rebuilds replay the log into the indexes and never
// compute a group, so they cannot emit any. Other nodes read the events
// from the database, where the committing node stored them.
//
// Which submissions make events:
//   - personal_best: on a best board, a submission that improves the
//     player's entry of the period (old keys null when the player had none);
//     latest and sum boards have no personal bests (every submission
//     replaces or adds to the entry);
//   - new_leader, on every board: a submission after which its player is #1
//     of the period among visible (not hidden) players and was not before.
//     A #1 that changes without a submission of the new #1 (the old one was
//     deleted, hidden, or dropped on a latest or sum board) makes no event;
//   - tournament_settled: emitted by a settlement run (Group.Emit, taken as
//     an EventSink) or appended (Module.Append).
//
// Hidden players make no events.
package feed

import (
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// DefaultCap is the number of events kept per board by default.
const DefaultCap = 200

// Config configures the module; the zero value means the defaults.
type Config struct {
	// Cap is how many events are kept per board (default DefaultCap).
	Cap int
}

// Module is the activity feed's module. It is off (Cap 0, no events) when
// the store keeps no feed (podium.FeedStore).
type Module struct {
	eng   *engine.Engine
	host  engine.Host
	log   *slog.Logger
	store podium.FeedStore // nil: no feed
	cap   int
	every time.Duration // between prune rounds

	// pmu guards pend, the #1 of each period as of the groups handed to
	// the committer and not yet applied (leader.go). Lock order:
	// docs/LOCKS.md.
	pmu  sync.Mutex
	pend map[key]pending

	merged []podium.FeedEvent // the committer's: the events of merged groups

	// mu guards prune, the boards that may hold more than cap events.
	mu    sync.Mutex
	prune map[string]struct{}

	events  *prometheus.CounterVec // stored by this node, by kind
	deleted prometheus.Counter     // pruned by this node
}

// New returns the module.
func New(c Config) *Module {
	if c.Cap <= 0 {
		c.Cap = DefaultCap
	}
	return &Module{cap: c.Cap, every: time.Second, pend: map[key]pending{}, prune: map[string]struct{}{}}
}

var (
	_ engine.Provisioner   = (*Module)(nil)
	_ engine.Starter       = (*Module)(nil)
	_ engine.Scorer        = (*Module)(nil)
	_ engine.EntryResetter = (*Module)(nil)
	_ engine.HandOffer     = (*Module)(nil)
	_ engine.Forgetter     = (*Module)(nil)
	_ engine.PartMaker     = (*Module)(nil)
	_ engine.Finisher      = (*Module)(nil)
	_ engine.EventSink     = (*Module)(nil)
)

// Name implements engine.Module.
func (m *Module) Name() string { return "feed" }

// Provision takes the store's feed, if it keeps one, and registers the
// metrics.
func (m *Module) Provision(h engine.Host) {
	m.eng, m.host, m.log = h.Engine(), h, h.Logger()
	fs, ok := h.Store().(podium.FeedStore)
	if !ok {
		return
	}
	m.store = fs
	m.events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "podium_feed_events_total",
		Help: "Activity feed events this node stored, by kind (the same event stored again counts again).",
	}, []string{"kind"})
	m.deleted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "podium_feed_pruned_total",
		Help: "Activity feed events this node deleted past the per-board cap.",
	})
	if reg := h.Registerer(); reg != nil {
		reg.MustRegister(m.events, m.deleted)
	}
}

// Cap is the number of events the feed keeps per board (0: no feed).
func (m *Module) Cap() int {
	if m.store == nil {
		return 0
	}
	return m.cap
}

// rows is what the module keeps with a group (Group.Slot): its events and
// the #1 of the periods it touched.
type rows struct {
	events  []podium.FeedEvent
	leaders map[key]leader
}

// rowsOf returns g's rows, made if make is set (nil otherwise when none).
func (m *Module) rowsOf(g *engine.Group, make bool) *rows {
	r, _ := g.Slot(m).(*rows)
	if r == nil && make {
		r = &rows{}
		g.SetSlot(m, r)
	}
	return r
}

// Event implements engine.EventSink: an event another module emitted in
// g (a tournament's settlement) commits with g.
func (m *Module) Event(g *engine.Group, ev podium.FeedEvent) {
	if m.store == nil {
		return
	}
	r := m.rowsOf(g, true)
	r.events = append(r.events, ev)
}

// Parts implements engine.PartMaker: one part for the events of every
// group of the transaction, one chunked insert.
func (m *Module) Parts(_ podium.Store, gs []*engine.Group) []podium.Part {
	if m.store == nil {
		return nil
	}
	if len(gs) == 1 {
		r := m.rowsOf(gs[0], false)
		if r == nil || len(r.events) == 0 {
			return nil
		}
		return []podium.Part{m.store.FeedPart(r.events)}
	}
	// Merged groups: only the committer merges, so one buffer serves.
	m.merged = m.merged[:0]
	for _, g := range gs {
		if r := m.rowsOf(g, false); r != nil {
			m.merged = append(m.merged, r.events...)
		}
	}
	if len(m.merged) == 0 {
		return nil
	}
	return []podium.Part{m.store.FeedPart(m.merged)}
}

// Finished implements engine.Finisher: once g is applied, its #1s are in
// the index, and its events are marked for pruning and announced.
func (m *Module) Finished(g *engine.Group, err error) {
	r := m.rowsOf(g, false)
	if err != nil || r == nil {
		return
	}
	m.applied(g, r)
	m.committed(r.events)
	m.announce(r.events)
}
