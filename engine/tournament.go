package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium"
)

// The engine's part of tournaments, until it moves into the tournament
// module (tournament/, issue 19): the settlement's state. The window,
// joins and the rules of changing or deleting a tournament or points board
// are the module's.

// tourney is the engine's tournament state. Lock order: docs/LOCKS.md.
type tourney struct {
	every time.Duration // scheduler period; < 0: no scheduler
	// passes counts the scheduler's completed looks for due tournaments
	// (podium_settle_scheduler_passes_total): tests wait for looks
	// instead of sleeping through them.
	passes atomic.Uint64

	// settleMu makes this node's settlers (the scheduler, admins) take
	// turns: the lease is per node, and two of them under one lease would
	// both find a tournament due.
	settleMu sync.Mutex

	mu sync.Mutex
	// settled is what this node knows of settlements (from the store at
	// start and after its own runs; the scheduler re-reads the store
	// before it settles).
	settled map[string]podium.Settlement
	// failed holds when the scheduler last failed to settle a board: it
	// waits settleRetry before trying that one again.
	failed map[string]time.Time
}

func newTourney(every time.Duration) *tourney {
	if every == 0 {
		every = time.Second
	}
	return &tourney{every: every, settled: map[string]podium.Settlement{}, failed: map[string]time.Time{}}
}

func (e *Engine) tourneyStore() (podium.TourneyStore, error) {
	ts, ok := e.store.(podium.TourneyStore)
	if !ok {
		return nil, podium.Errorf(podium.ECodeUnavailable, "this store does not keep tournaments")
	}
	return ts, nil
}

// tracksJoins reports whether a tournament needs its join set.
func tracksJoins(t *podium.Tournament) bool {
	return t != nil && (t.JoinRequired || t.MaxParticipants > 0)
}

// joinCounter is the tournament module's count of a tournament's joins,
// which a tournament's status reports (until the status moves into the
// module).
type joinCounter interface {
	JoinCount(ctx context.Context, bs *BoardState) (int64, error)
}

// joinCount asks the module that keeps joins for a tournament's count.
func (e *Engine) joinCount(ctx context.Context, bs *BoardState) (int64, error) {
	for _, m := range e.hooks.modules {
		if jc, ok := m.(joinCounter); ok {
			return jc.JoinCount(ctx, bs)
		}
	}
	return 0, nil
}
