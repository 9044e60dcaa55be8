package engine

import (
	"context"
	"errors"
	"time"

	"github.com/podiumhq/podium"
)

// The write pipeline has two stages. The writer goroutine (run) drains
// requests and computes each group against memory; the committer
// (commitLoop) stores a group, waits until it is on disk, applies it to the
// indexes and answers. While one group is written and fsynced, the next is
// computed on the other core. A group computed before the previous ones are
// applied sees them through the pending overlay below.
//
// If a commit fails, every group computed on top of it is failed too: the
// committer marks the pipeline broken and fails what it receives until the
// writer, seeing the mark, has drained the pipe with a barrier and cleared
// the overlay.

// pending is what groups handed to the committer will change, until they
// are applied. Guarded by Engine.pmu.
type pending struct {
	entries map[ovKey]pendingVal
	seqs    map[*BoardState]pendingSeq
	broken  bool
	gen     uint64 // last group handed off
}

type pendingVal struct {
	v   ovVal
	gen uint64
}

type pendingSeq struct {
	seq uint64
	gen uint64
}

func newPending() pending {
	return pending{entries: map[ovKey]pendingVal{}, seqs: map[*BoardState]pendingSeq{}}
}

func (e *Engine) pendingEntry(k ovKey) (ovVal, bool) {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	p, ok := e.pend.entries[k]
	return p.v, ok
}

func (e *Engine) pendingSeq(bs *BoardState) (uint64, bool) {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	p, ok := e.pend.seqs[bs]
	return p.seq, ok
}

// handOff publishes a computed group's changes in the overlay and queues it
// for the committer.
func (e *Engine) handOff(g *Group) {
	e.pmu.Lock()
	e.pend.gen++
	g.gen = e.pend.gen
	for k, v := range g.overlay {
		e.pend.entries[k] = pendingVal{v, g.gen}
	}
	for bs, seq := range g.seqs {
		e.pend.seqs[bs] = pendingSeq{seq, g.gen}
	}
	e.pmu.Unlock()
	e.hooks.handedOff(g) // hooks_feed.go: before the committer may finish it
	e.pipe <- g
}

// barrier waits until the committer has dealt with every group handed to it.
func (e *Engine) barrier() {
	b := &Group{barrier: make(chan struct{})}
	e.pipe <- b
	<-b.barrier
}

// recover resets the pipeline after a failed commit, before the writer
// computes anything new.
func (e *Engine) recover() {
	e.pmu.Lock()
	broken := e.pend.broken
	e.pmu.Unlock()
	if !broken {
		return
	}
	e.barrier() // every group queued behind the failure is failed by now
	e.pmu.Lock()
	e.pend = newPending()
	e.pmu.Unlock()
	e.hooks.forget() // hooks.go: module state may include what failed (tournament joins, the feed's pending #1s)
}

// deferredCommitter is an optional Store ability: commit without waiting
// for the disk, then wait for a commit (and all before it) to be durable.
// sqlite.Store has it; the engine uses it to time the two parts apart.
type deferredCommitter interface {
	CommitDeferred(ctx context.Context, b *podium.Batch) (uint64, error)
	Sync(ctx context.Context, ticket uint64) error
}

// commitLoop is the committer goroutine: it stores each group, waits for
// the disk, applies it and answers. Groups that queued up meanwhile share
// the next transaction and fsync.
//
// A third stage that fsyncs while the next group is written was tried: on
// two cores shared with the clients it made groups smaller (5.7 scores a
// commit instead of 13) and, since commits cost CPU per transaction, single
// submits slower (30k/s against 32k/s with wrk). Group size matters more
// than overlap here.
func (e *Engine) commitLoop() {
	defer close(e.committed)
	dc, deferred := e.store.(deferredCommitter)
	var merged podium.Batch
	var buf []*Group // the groups of one transaction, reused
	for g := range e.pipe {
		if g.barrier != nil {
			close(g.barrier)
			continue
		}
		if g.housekeeping {
			e.housekeeping()
			continue
		}
		groups := append(buf[:0], g)
		var after *Group // a barrier or housekeeping item met while merging
	more:
		for len(groups) < 16 {
			select {
			case n, ok := <-e.pipe:
				if !ok {
					break more
				}
				if n.barrier != nil || n.housekeeping {
					after = n
					break more
				}
				groups = append(groups, n)
			default:
				break more
			}
		}
		b := &g.batch
		if len(groups) > 1 {
			merged.Reset()
			for _, x := range groups {
				merged.Submissions = append(merged.Submissions, x.batch.Submissions...)
				merged.Idempotency = append(merged.Idempotency, x.batch.Idempotency...)
			}
			// One part per module for the whole transaction, as for the
			// log: one statement for every group's feed events.
			e.seal(&merged, groups) // hooks_commit.go
			b = &merged
		}
		err := e.storeGroup(dc, deferred, b)
		for _, x := range groups {
			x.err = err
			e.finishGroup(x)
		}
		clear(groups) // let them go
		buf = groups[:0]
		if len(e.cp.dirty) >= checkpointMax {
			e.checkpoint(checkpointMax)
		}
		if after != nil {
			if after.barrier != nil {
				close(after.barrier)
			} else {
				e.housekeeping()
			}
		}
	}
}

// storeGroup commits one transaction and waits until it is durable.
func (e *Engine) storeGroup(dc deferredCommitter, deferred bool, b *podium.Batch) error {
	e.pmu.Lock()
	broken := e.pend.broken
	e.pmu.Unlock()
	if broken {
		return errBroken
	}
	if b.Len() == 0 {
		return nil
	}
	t0 := time.Now()
	var ticket uint64
	var err error
	if deferred {
		ticket, err = dc.CommitDeferred(context.Background(), b)
	} else {
		err = e.store.Commit(context.Background(), b)
	}
	e.metrics.commit(len(b.Submissions), time.Since(t0))
	if err == nil && deferred {
		t1 := time.Now()
		if err = dc.Sync(context.Background(), ticket); err == nil {
			e.metrics.sync(time.Since(t1))
		} else if !errors.Is(err, podium.ErrOutcomeUnknown) {
			// The data is in the database but may not be on the disk.
			err = podium.OutcomeUnknown(err)
		}
	}
	if err != nil {
		e.pmu.Lock()
		e.pend.broken = true
		e.pmu.Unlock()
		if errors.Is(err, podium.ErrOutcomeUnknown) {
			// What is on disk may differ from memory from now on: stop
			// writing and let an operator restart, which loads what
			// survived (PostgreSQL's "fsyncgate" lesson).
			e.log.Error("commit outcome unknown: storage is unreliable; podium stops accepting writes, restart it", "err", err, "rows", b.Len())
		} else {
			e.log.Error("group commit failed; nothing of it was stored", "err", err, "rows", b.Len())
		}
		e.commitFailed(err, errors.Is(err, podium.ErrOutcomeUnknown))
		return err
	}
	e.commitWorked()
	return nil
}

// finishGroup applies a stored group and answers its requests, or answers
// them with the failure.
func (e *Engine) finishGroup(g *Group) {
	defer e.releaseHolds(g) // oldperiods.go
	if g.err != nil {
		e.idem.requeue(g.bodies)
		e.hooks.finished(g, g.err) // hooks_commit.go: tournament joins are dropped
		for _, o := range g.ops {
			if o.err == nil {
				switch {
				case errors.Is(g.err, podium.ErrOutcomeUnknown):
					o.err = errOutcomeUnknown(g.err)
				case g.err == errBroken:
					o.err = errBroken
				case errors.Is(g.err, podium.ErrDecided): // review.go
					o.err = podium.ErrDecided
				default:
					o.err = podium.Errorf(podium.ECodeUnavailable, "the database could not store the write (%s); nothing was applied, retry later", storageCause(g.err))
				}
			}
			o.results = nil
			close(o.done)
		}
		return
	}
	e.applyChanges(g)
	e.idem.stored(g.bodies)
	// Applied: the index now holds what the overlay held for this group.
	e.pmu.Lock()
	for k := range g.overlay {
		if p, ok := e.pend.entries[k]; ok && p.gen == g.gen {
			delete(e.pend.entries, k)
		}
	}
	for bs := range g.seqs {
		if p, ok := e.pend.seqs[bs]; ok && p.gen == g.gen {
			delete(e.pend.seqs, bs)
		}
	}
	e.pmu.Unlock()
	e.hooks.finished(g, nil) // hooks_commit.go: the feed's events
	for _, o := range g.ops {
		if o.kind == opScores && o.err == nil {
			for i := range o.results {
				e.metrics.submitted(o.results[i].Err)
			}
		}
		close(o.done)
	}
}

var errBroken = podium.Errorf(podium.ECodeUnavailable, "an earlier write failed to be stored, so nothing of this one was applied; retry")

// localCommitter is the committer on a store of its own (loop.go): the
// writer computes each group and hands it to the committer goroutine
// (commitLoop), which stores, applies and answers it.
type localCommitter struct{ e *Engine }

func (c localCommitter) load(context.Context) error { return nil }

func (c localCommitter) start() { go c.e.commitLoop() }

func (c localCommitter) started() {}

func (c localCommitter) group(ops []*op) { c.e.computeGroup(ops) }

func (c localCommitter) quiesce() { c.e.barrier() }

func (c localCommitter) putBoard(o *putBoardOp) error {
	return c.e.applyPutBoard(o, func(b *podium.Board) error { return c.e.store.PutBoard(context.Background(), b) })
}

func (c localCommitter) deleteBoard(id string) error {
	return c.e.applyDeleteBoard(id, func(id string) error { return c.e.store.DeleteBoard(context.Background(), id) })
}

// tick queues the housekeeping for the committer goroutine, behind the
// groups it holds.
func (c localCommitter) tick() { c.e.pipe <- &Group{housekeeping: true} }

func (c localCommitter) drained() {}

// stop lets the committer finish what it holds, then stores what is left:
// idempotency answers and a last checkpoint.
func (c localCommitter) stop() {
	close(c.e.pipe)
	<-c.e.committed
	c.e.flushIdempotency()
	c.e.checkpoint(0)
}
