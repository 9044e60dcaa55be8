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

// BoardPartMaker adds a module's rows to the transaction that stores a
// board change, so that they are stored exactly when the change is (a
// transactional outbox: webhooks' board.created and board.deleted). old
// is nil when the board is made, next nil when it is deleted; both are
// set for an update. Both run on the writer, after the BoardGuards:
// BoardParts once next is as it will be stored (a SharedStore has set its
// Gen; nil or empty: no rows), and BoardStored once the store has answered
// (err nil: committed; the change is then applied and the BoardWatchers
// hear of it). BoardStored also follows a change that failed before its
// parts were asked for. Board PUTs that share a commit (boardbatch.go)
// each get BoardParts, in order, before each gets BoardStored, in the
// same order: a maker keeps what it made by the board (next, or old for a
// delete), not in one slot.
type BoardPartMaker interface {
	BoardParts(store podium.Store, old, next *podium.Board) []podium.Part
	BoardStored(old, next *podium.Board, err error)
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

// boardParts asks the BoardPartMakers for their rows of a board change, in
// registration order.
func (h *hooks) boardParts(st podium.Store, old, next *podium.Board) []podium.Part {
	var parts []podium.Part
	for _, pm := range h.boardRows {
		parts = append(parts, pm.BoardParts(st, old, next)...)
	}
	return parts
}

// boardStored tells the BoardPartMakers how a board change's store ended.
func (h *hooks) boardStored(old, next *podium.Board, err error) {
	for _, pm := range h.boardRows {
		pm.BoardStored(old, next, err)
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
