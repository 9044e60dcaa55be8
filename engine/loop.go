package engine

import (
	"context"
	"time"
)

// committer is how the writer's work reaches the database of record. The
// writer loop (run, process) is the same for both modes; a committer
// decides how a group is committed and how board changes are made safe:
//
//   - localCommitter (pipeline.go): a store of its own (SQLite). Groups are
//     computed on the writer and committed by a second goroutine, so that one
//     group is computed while the previous one is written; a board change
//     first waits for the pipeline to empty.
//   - cluster (shared.go): several nodes on one database
//     (PostgreSQL). Each group locks its boards in the database, catches up
//     with what other nodes wrote, then computes, commits and applies in
//     turn; a follower goroutine brings in what the others commit.
//
// Every method runs on the writer goroutine.
type committer interface {
	// load runs in Start, after the indexes are loaded and before the
	// writer starts.
	load(ctx context.Context) error
	// start runs on the writer goroutine as it starts.
	start()
	// started runs once Start has made the engine serve reads.
	started()
	// group computes, commits, applies and answers a run of score,
	// delete-entry, module (a join) and restore ops, or one module Work
	// that runs alone (Work.Alone: a settlement).
	group(ops []*op)
	// quiesce returns once nothing handed to the commit is unapplied, so
	// that what follows runs alone.
	quiesce()
	// putBoards makes a run of board PUTs, setting each op's err;
	// deleteBoard makes a board's delete.
	putBoards(ops []*op)
	deleteBoard(id string) error
	// tick is the once-a-second housekeeping.
	tick()
	// drained runs after the ops of each drain are processed.
	drained()
	// stop finishes the commit's work once the writer's last op is
	// answered.
	stop()
}

// writer is the writer goroutine's side of the write path: the queue of
// ops that senders fill (Engine.send) and the loop that drains it and
// processes the ops in order through the committer. Engine holds it by
// value, so a sender reaches the queue without one more pointer.
type writer struct {
	e        *Engine
	com      committer     // how groups are committed
	ops      chan *op      // senders -> writer
	done     chan struct{} // closed when run returns
	maxBatch int
}

func newWriter(e *Engine, maxBatch int) writer {
	return writer{e: e, ops: make(chan *op, 4096), done: make(chan struct{}), maxBatch: maxBatch}
}

// run is the writer goroutine: it drains requests and processes them in
// order through the committer, until Engine.stop is closed.
func (w *writer) run() {
	defer close(w.done)
	c := w.com
	c.start()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var ops []*op
	for {
		ops = ops[:0]
		select {
		case o := <-w.ops:
			ops = append(ops, o)
		case <-tick.C:
			c.tick()
			continue
		case <-w.e.stop:
			// Answer what was already handed over, then stop.
			for {
				select {
				case o := <-w.ops:
					w.process([]*op{o})
				default:
					c.stop()
					return
				}
			}
		}
		w.process(w.drain(ops))
		c.drained()
	}
}

// drain adds to ops (which holds one) every op already waiting, up to
// MaxBatch submissions: the group that the next commit carries.
func (w *writer) drain(ops []*op) []*op {
	n := ops[0].size()
	for n < w.maxBatch {
		select {
		case o := <-w.ops:
			ops = append(ops, o)
			n += o.size()
		default:
			return ops
		}
	}
	return ops
}

// inGroup reports whether o joins a group commit with the ops around it.
func inGroup(o *op) bool {
	return o.kind == opScores || o.kind == opDeleteEntry || o.kind == opModule && !alone(o) || o.kind == opRestore
}

// alone reports whether o is a module's Work that is a group of its own
// (Work.Alone, hooks_tourney.go).
func alone(o *op) bool { return o.kind == opModule && o.work().w.Alone }

// process runs ops in order: runs of score, delete-entry, module (a join)
// and restore ops become one group commit; a Work that runs alone is a
// group of its own; board and player changes wait until the commit holds
// nothing and then run alone.
func (w *writer) process(ops []*op) {
	e, c := w.e, w.com
	ctx := context.Background()
	for len(ops) > 0 {
		i := 0
		for i < len(ops) && inGroup(ops[i]) {
			i++
		}
		if i > 0 {
			c.group(ops[:i])
			ops = ops[i:]
			continue
		}
		c.quiesce()
		o := ops[0]
		if alone(o) { // hooks_tourney.go: committed before anything after it is computed
			c.group(ops[:1])
			c.quiesce()
			ops = ops[1:]
			continue
		}
		if o.kind == opPutBoard { // boardbatch.go: the run shares a commit
			j := 1
			for j < len(ops) && ops[j].kind == opPutBoard {
				j++
			}
			c.putBoards(ops[:j])
			for _, o := range ops[:j] {
				close(o.done)
			}
			ops = ops[j:]
			continue
		}
		switch o.kind {
		case opDeleteBoard:
			o.err = c.deleteBoard(o.boardID())
		case opPutPlayer:
			o.err = e.applyPutPlayer(o.player())
		case opSync: // shared mode only: the follower sends it (follow.go)
			o.err = e.sh.applySync(ctx, o.sync())
		case opReload:
			o.err = e.Checker().reload(ctx)
		case opFunc:
			o.fn()()
		case opCheck:
			o.check().diffs, o.err = e.Checker().indexes(ctx)
		}
		close(o.done)
		ops = ops[1:]
	}
}
