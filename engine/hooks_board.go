package engine

import (
	"context"

	"github.com/podiumhq/podium"
)

// Hooks around boards: what a module that derives boards from others (the
// aggregates) or guards them needs to hear and to say when a board is
// made, changed, deleted, locked or restored. Each is called in
// registration order; the first refusal wins.

// BoardWatcher hears that a board's definition changed: old is nil when the
// board is made, next nil when it is deleted, both the same when its state
// was reloaded. Called after the change is applied, with no engine lock
// held.
type BoardWatcher interface {
	BoardChanged(old, next *podium.Board)
}

// BoardGuard may refuse a board change before it is stored (on the writer;
// in shared mode under the board's lock, caught up with every definition
// committed before it). CheckPut gets the normalized board about to be
// stored.
type BoardGuard interface {
	CheckPut(b *podium.Board) error
	CheckDelete(id string) error
}

// BoardPutter runs after a PUT of a board is stored and applied, before it
// is answered (an aggregate recomputes its entries). An error is the
// PUT's answer; the board stays stored.
type BoardPutter interface {
	BoardPut(ctx context.Context, def *podium.Board) error
}

// Locker widens the boards a write locks in shared mode: LockSet returns
// ids (sorted) plus the boards that must be locked with them (an
// aggregate's sources and the aggregates over them), sorted; PutLocks the
// boards a PUT of u must lock besides u.ID (cur: the board now, nil if
// new).
type Locker interface {
	LockSet(ids []string) []string
	PutLocks(u *podium.BoardUpdate, cur *podium.Board) []string
}

// RestoreGuard says why a board takes no restored entries ("" if it may).
type RestoreGuard interface {
	RestoreRefusal(def *podium.Board) string
}

// boardChanged tells the BoardWatchers.
func (h *hooks) boardChanged(old, next *podium.Board) {
	for _, w := range h.watchers {
		w.BoardChanged(old, next)
	}
}

// checkPut asks the BoardGuards about a board about to be stored.
func (h *hooks) checkPut(b *podium.Board) error {
	for _, gd := range h.guards {
		if err := gd.CheckPut(b); err != nil {
			return err
		}
	}
	return nil
}

// checkDelete asks the BoardGuards about a board about to be deleted.
func (h *hooks) checkDelete(id string) error {
	for _, gd := range h.guards {
		if err := gd.CheckDelete(id); err != nil {
			return err
		}
	}
	return nil
}

// lockSet widens the boards of a shared-mode write (Locker).
func (h *hooks) lockSet(ids []string) []string {
	for _, l := range h.lockers {
		ids = l.LockSet(ids)
	}
	return ids
}

// putLocks lists the boards a shared-mode PUT locks besides the board.
func (h *hooks) putLocks(u *podium.BoardUpdate, cur *podium.Board) []string {
	var ids []string
	for _, l := range h.lockers {
		ids = append(ids, l.PutLocks(u, cur)...)
	}
	return ids
}
