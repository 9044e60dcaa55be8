package engine

import (
	"context"
	"slices"

	"github.com/podiumhq/podium"
)

// Beginning a write in shared mode. A writer must know every board a
// module widens its write to (Locker: the aggregates that depend on the
// boards it writes, and their sources) before it computes, or it would
// write a source without its aggregate. The follower learns of new definitions
// asynchronously (a notice, or the next poll), so the writer also checks
// under its locks: an aggregate is defined (or changed) in a transaction
// that holds its sources, so a writer holding a source afterwards finds
// the feed position past that change (WriteTx.LastChange), applies the
// changes it has not seen, and locks again if the set of boards to lock
// grew.

// begin begins the write transaction of a group writing boards: with the
// boards the Lockers add locked too, and every definition committed
// before the locks applied.
func (sh *cluster) begin(ctx context.Context, boards []string) (podium.WriteTx, []string, error) {
	e := sh.e
	for try := 0; ; try++ {
		ids := e.hooks.lockSet(boards)
		tx, err := sh.store.Begin(ctx, ids)
		if err != nil {
			return nil, nil, err
		}
		if !sh.catchUpChanges(ctx, tx) || try == 2 || slices.Equal(e.hooks.lockSet(boards), ids) {
			return tx, ids, nil
		}
		tx.Rollback() // the definitions now ask for more (or other) locks
	}
}

// metaCaughtUp applies the metadata changes committed before tx's locks
// (catchUpChanges), for a board change that the BoardGuards check (an
// aggregate over the board): an
// aggregate over the board, made on another node, was made under the
// board's lock, so it is then known here, and the check needs no read of
// every board. ECodeUnavailable when the changes could not all be applied.
func (sh *cluster) metaCaughtUp(ctx context.Context, tx podium.WriteTx) error {
	sh.catchUpChanges(ctx, tx)
	if sh.seen < tx.LastChange() {
		return podium.Errorf(podium.ECodeUnavailable, "could not read what other nodes changed, to check the aggregates; nothing was changed, retry shortly")
	}
	return nil
}

// catchUpChanges applies, on the writer, the metadata changes committed
// before tx's locks that this node has not applied yet, and reports
// whether there were any. A failure is logged and left to the follower.
func (sh *cluster) catchUpChanges(ctx context.Context, tx podium.WriteTx) bool {
	e := sh.e
	last := tx.LastChange()
	applied := false
	for sh.seen < last {
		cs, err := sh.store.Changes(ctx, sh.seen, 1000)
		if err != nil || len(cs) == 0 {
			if err != nil {
				e.log.Warn("read the change feed before a write", "err", err)
			}
			return applied
		}
		for _, c := range cs {
			if err := sh.refresh(ctx, c); err != nil {
				e.log.Warn("apply a change before a write", "kind", c.Kind, "key", c.Key, "err", err)
				return applied
			}
			sh.seen = max(sh.seen, c.ID)
			applied = true
		}
	}
	return applied
}
