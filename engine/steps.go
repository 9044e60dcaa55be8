package engine

import (
	"context"

	"github.com/podiumhq/podium"
)

// Steps runs step on the writer again and again, each run a group of its
// own that is committed and applied before the next, with other writes in
// between, until step reports done or fails: a module's long work over many
// entries (an aggregate recomputing every entry) that must not hold writes
// back for long. In shared mode each run holds boards (widened by the
// Lockers) locked and caught up with, as a group does. Once started it
// runs to the end even if the caller goes away. what names the rows in the
// error when a run's commit fails ("the aggregate's entries").
func (e *Engine) Steps(boards []string, what string, step func(g *Group) (done bool, err error)) error {
	for {
		var (
			done bool
			err  error
		)
		o := &op{kind: opFunc, p: func() { done, err = e.runStep(context.Background(), boards, what, step) }}
		if serr := e.send(context.Background(), o); serr != nil {
			return serr
		}
		if err != nil || done {
			return err
		}
	}
}

// runStep runs one step of Steps on the writer.
func (e *Engine) runStep(ctx context.Context, boards []string, what string, step func(g *Group) (bool, error)) (done bool, err error) {
	var tx podium.WriteTx
	if e.sh == nil {
		e.pl.recover()
	} else {
		if tx, err = e.sh.lockStep(ctx, boards); err != nil {
			return false, err
		}
		defer tx.Rollback()
	}
	g := e.newGroup(nil)
	if done, err = step(g); err != nil {
		e.old.release(g)
		return false, err
	}
	if len(g.batch.Submissions) == 0 {
		e.old.release(g)
		return done, nil
	}
	if e.sh == nil {
		e.pl.handOff(g)
		e.pl.barrier()
	} else {
		e.sh.commitStep(ctx, tx, g)
	}
	if g.err != nil {
		return false, podium.Errorf(podium.ECodeUnavailable, "%s could not be stored (%s)", what, storageCause(g.err))
	}
	return done, nil
}

// newGroup returns an empty group computed at the engine's now.
func (e *Engine) newGroup(ops []*op) *Group {
	return &Group{e: e, ops: ops, now: e.now(), overlay: map[ovKey]ovVal{}, seqs: map[*BoardState]uint64{}, periods: map[*BoardState]string{}}
}
