// Package tournament is the module of tournaments (issue 19; the domain,
// podium.Tournament and podium.Points, is at the root): a tournament's
// window and joins on the write path, the join op, the reads of who
// joined, and the rules of changing or deleting a tournament or points
// board (boards.go); the settlement that turns final ranks into points
// credits (settle.go, settle_credit.go), its lease and scheduler
// (settle_run.go), a tournament's status (status.go) and the offline
// check and repair of settlements (settle_check.go).
//
// On the write path the window, joins and the participant cap are checked
// where a score is computed (a ScoreGuard, after the core's period checks
// and before the quotas' Gate), so a refused item of a batch fails alone
// and the rest goes on. Joins are stored in the transaction of the group
// that makes them (a podium.TourneyBatch part), an explicit join as well
// as the first score of a player on a capped tournament that does not
// require joining: so the cap holds however players arrive.
//
// The module keeps, per tournament board, the set of players who joined
// (joinSet), loaded from the store on first use. It holds joins computed
// but not yet committed too, as the pending overlay does for entries; a
// failed commit drops the sets of its boards (Finisher; and after a
// pipeline failure, Forgetter drops them all), and the next use reloads
// them. In shared mode the writer holds the board's lock when it
// computes, and every join is written under that lock, so reading the
// joins numbered after the set's last one (Joins(after); CatchUpper)
// brings the set up to date.
package tournament

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Config configures the module; the zero value means the defaults.
type Config struct {
	// SettleEvery is how often the settlement scheduler looks for ended
	// tournaments to settle (default 1s; negative: no scheduler, for
	// tests and tools that call SettleDue themselves).
	SettleEvery time.Duration
}

// Module is the tournaments module. Lock order: docs/LOCKS.md.
type Module struct {
	host  engine.Host
	eng   *engine.Engine
	store podium.Store
	log   *slog.Logger

	every time.Duration // scheduler period; < 0: no scheduler
	// passes counts the scheduler's completed looks for due tournaments
	// (podium_settle_scheduler_passes_total): tests wait for looks
	// instead of sleeping through them.
	passes atomic.Uint64

	// settleMu makes this node's settlers (the scheduler, admins) take
	// turns: the lease is per node, and two of them under one lease would
	// both find a tournament due.
	settleMu sync.Mutex

	smu sync.Mutex
	// settled is what this node knows of settlements (from the store at
	// start and after its own runs; the scheduler re-reads the store
	// before it settles).
	settled map[string]podium.Settlement
	// failed holds when the scheduler last failed to settle a board: it
	// waits settleRetry before trying that one again.
	failed map[string]time.Time

	mu    sync.Mutex
	joins map[*engine.BoardState]*joinSet
}

// New returns the module configured by c; it takes the engine and its
// store at Provision.
func New(c Config) *Module {
	if c.SettleEvery == 0 {
		c.SettleEvery = time.Second
	}
	return &Module{every: c.SettleEvery, joins: map[*engine.BoardState]*joinSet{},
		settled: map[string]podium.Settlement{}, failed: map[string]time.Time{}}
}

var (
	_ engine.Provisioner = (*Module)(nil)
	_ engine.ScoreGuard  = (*Module)(nil)
	_ engine.CatchUpper  = (*Module)(nil)
	_ engine.PartMaker   = (*Module)(nil)
	_ engine.Finisher    = (*Module)(nil)
	_ engine.Forgetter   = (*Module)(nil)
	_ engine.BoardGuard  = (*Module)(nil)
	_ engine.Loader      = (*Module)(nil)
	_ engine.Starter     = (*Module)(nil)
)

// Name implements engine.Module.
func (m *Module) Name() string { return "tournament" }

// Provision takes the engine and its store, and registers the
// scheduler's metric.
func (m *Module) Provision(h engine.Host) {
	m.host, m.eng, m.store, m.log = h, h.Engine(), h.Store(), h.Logger()
	if reg := h.Registerer(); reg != nil {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "podium_settle_scheduler_passes_total",
			Help: "Looks the settlement scheduler took for tournaments that are due (one every --settle-every).",
		}, func() float64 { return float64(m.passes.Load()) }))
	}
}

func (m *Module) tourneyStore() (podium.TourneyStore, error) {
	ts, ok := m.store.(podium.TourneyStore)
	if !ok {
		return nil, podium.Errorf(podium.ECodeUnavailable, "this store does not keep tournaments")
	}
	return ts, nil
}

// rows is what the module keeps with a group: its joins, or a
// settlement's payouts, status and fence (a group of its own).
type rows struct {
	joins  []podium.Join
	settle *podium.TourneyBatch
}

func (m *Module) rows(g *engine.Group) *rows {
	r, _ := g.Slot(m).(*rows)
	if r == nil {
		r = &rows{}
		g.SetSlot(m, r)
	}
	return r
}

// Parts gives the store the joins of the groups sharing a transaction,
// and a settlement's rows, as one part: a fencing part, which the store
// writes before anything else of the transaction, its fence first. A
// settlement's group commits alone, so its fence is the part's.
func (m *Module) Parts(store podium.Store, gs []*engine.Group) []podium.Part {
	var tb *podium.TourneyBatch
	for _, g := range gs {
		r, _ := g.Slot(m).(*rows)
		if r == nil {
			continue
		}
		if len(r.joins) > 0 {
			tb = podium.MergeTourney(tb, &podium.TourneyBatch{Joins: r.joins})
		}
		if r.settle != nil {
			tb = podium.MergeTourney(tb, r.settle)
			tb.Fence = r.settle.Fence
		}
	}
	if tb.Len() == 0 {
		return nil
	}
	ts, ok := store.(podium.TourneyStore)
	if !ok {
		return nil // cannot arise: a join needs the store's joins
	}
	return []podium.Part{ts.TourneyPart(tb)}
}

// Finished marks a committed group's joins durable, or drops the join
// sets of a failed group's boards (they are reloaded on next use); a
// committed settlement is what this node knows settled.
func (m *Module) Finished(g *engine.Group, err error) {
	r, _ := g.Slot(m).(*rows)
	if r == nil {
		return
	}
	if r.settle != nil && err == nil {
		m.smu.Lock()
		for _, st := range r.settle.Settlements {
			m.settled[st.Board] = st
		}
		m.smu.Unlock()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, j := range r.joins {
		bs := m.eng.Lookup(j.Board)
		if bs == nil {
			continue
		}
		if err != nil {
			delete(m.joins, bs)
			continue
		}
		if js := m.joins[bs]; js != nil {
			js.durable = max(js.durable, j.N)
		}
	}
}

// Forget drops every join set: pending joins are gone with the groups
// that failed.
func (m *Module) Forget() {
	m.mu.Lock()
	clear(m.joins)
	m.mu.Unlock()
}

// CatchUp brings a loaded join set up to the store (shared mode, with the
// board's lock held: joins numbered after the set's last).
func (m *Module) CatchUp(ctx context.Context, id string) error {
	bs := m.eng.Lookup(id)
	if bs == nil || !tracksJoins(bs.Def().Tournament) {
		return nil
	}
	m.mu.Lock()
	js := m.joins[bs]
	m.mu.Unlock()
	if js == nil {
		return nil // loaded on first use
	}
	ts, err := m.tourneyStore()
	if err != nil {
		return err
	}
	list, err := ts.Joins(ctx, id, js.durable)
	if err != nil {
		return err
	}
	m.mu.Lock()
	for _, j := range list {
		js.players[j.Player] = j.N
		js.n = max(js.n, j.N)
		js.durable = max(js.durable, j.N)
	}
	m.mu.Unlock()
	return nil
}
