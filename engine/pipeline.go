package engine

import (
	"context"
	"errors"
	"sync"
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

// pipeline is the commit side of the write path: the committer goroutine
// of a store of its own (commitLoop), the pending overlay between the
// writer and it, and the checkpoints of the entries (checkpoint.go). In
// shared mode only finishGroup is used (the overlay stays empty, the
// checkpointer is off). Engine holds it by value, so the writer reaches it
// without one more pointer.
type pipeline struct {
	e         *Engine
	pipe      chan *Group   // writer -> committer
	committed chan struct{} // closed when the committer exits
	cp        checkpointer  // committer goroutine only (or the writer behind a barrier)

	mu   sync.Mutex
	pend pending
}

func newPipeline(e *Engine) pipeline {
	return pipeline{e: e, pipe: make(chan *Group, 8), committed: make(chan struct{}), cp: newCheckpointer(), pend: newPending()}
}

// handOff publishes a computed group's changes in the overlay and queues it
// for the committer.
func (p *pipeline) handOff(g *Group) {
	p.mu.Lock()
	p.pend.gen++
	g.gen = p.pend.gen
	for k, v := range g.overlay {
		p.pend.entries[k] = pendingVal{v, g.gen}
	}
	for bs, seq := range g.seqs {
		p.pend.seqs[bs] = pendingSeq{seq, g.gen}
	}
	p.mu.Unlock()
	p.e.hooks.handedOff(g) // hooks_feed.go: before the committer may finish it
	p.pipe <- g
}

// barrier waits until the committer has dealt with every group handed to it.
func (p *pipeline) barrier() {
	b := &Group{barrier: make(chan struct{})}
	p.pipe <- b
	<-b.barrier
}

// recover resets the pipeline after a failed commit, before the writer
// computes anything new.
func (p *pipeline) recover() {
	p.mu.Lock()
	broken := p.pend.broken
	p.mu.Unlock()
	if !broken {
		return
	}
	p.barrier() // every group queued behind the failure is failed by now
	p.mu.Lock()
	p.pend = newPending()
	p.mu.Unlock()
	p.e.hooks.forget() // hooks.go: module state may include what failed (tournament joins, the feed's pending #1s)
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
func (p *pipeline) commitLoop() {
	e := p.e
	defer close(p.committed)
	dc, deferred := e.store.(deferredCommitter)
	var merged podium.Batch
	var buf []*Group // the groups of one transaction, reused
	for g := range p.pipe {
		if g.barrier != nil {
			close(g.barrier)
			continue
		}
		if g.housekeeping {
			p.housekeeping()
			continue
		}
		groups := append(buf[:0], g)
		var after *Group // a barrier or housekeeping item met while merging
	more:
		for len(groups) < 16 {
			select {
			case n, ok := <-p.pipe:
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
		err := p.storeGroup(dc, deferred, b)
		for _, x := range groups {
			x.err = err
			p.finishGroup(x)
		}
		clear(groups) // let them go
		buf = groups[:0]
		if len(p.cp.dirty) >= checkpointMax {
			p.checkpoint(checkpointMax)
		}
		if after != nil {
			if after.barrier != nil {
				close(after.barrier)
			} else {
				p.housekeeping()
			}
		}
	}
}

// storeGroup commits one transaction and waits until it is durable.
func (p *pipeline) storeGroup(dc deferredCommitter, deferred bool, b *podium.Batch) error {
	e := p.e
	p.mu.Lock()
	broken := p.pend.broken
	p.mu.Unlock()
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
		p.mu.Lock()
		p.pend.broken = true
		p.mu.Unlock()
		if errors.Is(err, podium.ErrOutcomeUnknown) {
			// What is on disk may differ from memory from now on: stop
			// writing and let an operator restart, which loads what
			// survived (PostgreSQL's "fsyncgate" lesson).
			e.log.Error("commit outcome unknown: storage is unreliable; podium stops accepting writes, restart it", "err", err, "rows", b.Len())
		} else {
			e.log.Error("group commit failed; nothing of it was stored", "err", err, "rows", b.Len())
		}
		e.health.commitFailed(err, errors.Is(err, podium.ErrOutcomeUnknown))
		return err
	}
	e.health.commitWorked()
	return nil
}

// finishGroup applies a stored group and answers its requests, or answers
// them with the failure.
func (p *pipeline) finishGroup(g *Group) {
	e := p.e
	defer e.old.release(g) // oldperiods.go
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
	p.mu.Lock()
	for k := range g.overlay {
		if v, ok := p.pend.entries[k]; ok && v.gen == g.gen {
			delete(p.pend.entries, k)
		}
	}
	for bs := range g.seqs {
		if v, ok := p.pend.seqs[bs]; ok && v.gen == g.gen {
			delete(p.pend.seqs, bs)
		}
	}
	p.mu.Unlock()
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

// housekeeping runs once a second on the committer: checkpoint entries,
// persist idempotency answers that no commit carried yet, and forget
// expired ones.
func (p *pipeline) housekeeping() {
	p.checkpoint(checkpointMax)
	p.e.flushIdempotency()
	p.e.idem.prune()
}

var errBroken = podium.Errorf(podium.ECodeUnavailable, "an earlier write failed to be stored, so nothing of this one was applied; retry")

// localCommitter is the committer on a store of its own (loop.go): the
// writer computes each group and hands it to the committer goroutine
// (commitLoop), which stores, applies and answers it.
type localCommitter struct{ e *Engine }

func (c localCommitter) load(context.Context) error { return nil }

func (c localCommitter) start() { go c.e.pl.commitLoop() }

func (c localCommitter) started() {}

func (c localCommitter) group(ops []*op) { c.e.computeGroup(ops) }

func (c localCommitter) quiesce() { c.e.pl.barrier() }

func (c localCommitter) putBoard(o *putBoardOp) error {
	return c.e.applyPutBoard(o, func(b *podium.Board, parts func() []podium.Part) error {
		return c.e.store.PutBoard(context.Background(), b, parts()...)
	})
}

func (c localCommitter) deleteBoard(id string) error {
	return c.e.applyDeleteBoard(id, func(id string, parts []podium.Part) error {
		return c.e.store.DeleteBoard(context.Background(), id, parts...)
	})
}

// tick queues the housekeeping for the committer goroutine, behind the
// groups it holds.
func (c localCommitter) tick() { c.e.pl.pipe <- &Group{housekeeping: true} }

func (c localCommitter) drained() {}

// stop lets the committer finish what it holds, then stores what is left:
// idempotency answers and a last checkpoint.
func (c localCommitter) stop() {
	close(c.e.pl.pipe)
	<-c.e.pl.committed
	c.e.flushIdempotency()
	c.e.pl.checkpoint(0)
}
