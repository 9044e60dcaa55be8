// Package aggregate is the module of aggregate boards (podium.Aggregate):
// boards whose entries are computed from other boards' entries, in the
// same group commit as the source change that moves them.
//
// When a group changes a player's entry on a board, the module (an
// engine.Effect) recomputes that player's entry on every aggregate that
// depends on the board (also through other aggregates, sources first) from
// the state so far, and when the aggregate's keys change the core logs a
// row on the aggregate board with the whole new value (an aggregate board
// replays like a latest board; a delete row when the player no longer has
// an aggregate entry). The rows ride in the same group commit as the
// source change, so the aggregate can never be seen out of step with its
// sources, and they are the aggregate's own log: checkpoints, followers,
// live streams, resume, check and rebuild need nothing new. A row is
// logged only when the value changes, so its time is when the aggregate
// reached its value: the usual tie-break.
//
// In shared mode a group locks, with the boards it writes, every aggregate
// depending on them and every source of those aggregates (LockSet), so two
// nodes never compute an aggregate from different states.
//
// Board changes around aggregates: an aggregate's definition is checked
// against its sources when it is put (they exist, have the same number of
// keys in the same orders and the same cadence, best_k_sum sources keep
// enough results, no cycle, at most podium.MaxAggregateDepth levels); then
// every entry is recomputed (BoardPut), so a changed definition never
// leaves old values behind. A source cannot be deleted (409) nor changed
// so that an aggregate reading it would no longer be valid (409): the
// aggregate would be silently wrong.
package aggregate

import (
	"log/slog"
	"sync"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Module is the aggregate boards' module.
type Module struct {
	eng *engine.Engine
	log *slog.Logger

	// mu guards g, the dependency graph of the aggregates, rebuilt after
	// an aggregate is made, changed or removed, from the aggregates alone
	// (the engine keeps them apart), so that neither making a plain board
	// nor the rebuild costs in the number of boards. Lock order:
	// docs/LOCKS.md.
	mu sync.Mutex
	g  *graph // nil: to rebuild
}

// New returns the module.
func New() *Module { return &Module{} }

var (
	_ engine.Provisioner  = (*Module)(nil)
	_ engine.Effect       = (*Module)(nil)
	_ engine.BoardWatcher = (*Module)(nil)
	_ engine.BoardGuard   = (*Module)(nil)
	_ engine.BoardPutter  = (*Module)(nil)
	_ engine.Locker       = (*Module)(nil)
	_ engine.RestoreGuard = (*Module)(nil)
)

// Name implements engine.Module.
func (m *Module) Name() string { return "aggregate" }

// Provision keeps the engine, for its boards and its writer, and its
// logger.
func (m *Module) Provision(h engine.Host) { m.eng, m.log = h.Engine(), h.Logger() }

// BoardChanged drops the dependency graph when a board change can change
// it: old (nil: none) or next (nil: deleted) is an aggregate. Which plain
// boards exist does not change it.
func (m *Module) BoardChanged(old, next *podium.Board) {
	if old != nil && old.Aggregate != nil || next != nil && next.Aggregate != nil {
		m.invalidate()
	}
}

// invalidate drops the dependency graph; the next use rebuilds it.
func (m *Module) invalidate() {
	m.mu.Lock()
	m.g = nil
	m.mu.Unlock()
}

func (m *Module) graph() *graph {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.g == nil {
		m.g = buildGraph(m.eng.AggregateDefs())
	}
	return m.g
}

// RestoreRefusal refuses restores into an aggregate and into a board an
// aggregate reads.
func (m *Module) RestoreRefusal(def *podium.Board) string {
	switch {
	case def.Aggregate != nil:
		return "is an aggregate: its entries are computed from its source boards"
	case len(m.graph().deps[def.ID]) > 0:
		return "feeds an aggregate, which a restore would not recompute"
	}
	return ""
}
