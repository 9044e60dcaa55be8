package engine

import (
	"context"
	"time"

	"github.com/podiumhq/podium"
)

// The write pipeline has two stages. The writer goroutine (run) drains
// requests and computes each group against memory; the committer goroutine
// (commitLoop) commits a group, applies it to the indexes and answers. While
// one group is being committed (SQLite's work and the fsync), the next is
// computed on the other core. A group computed before the previous one is
// applied sees it through the pending overlay below.
//
// If a commit fails, every group computed on top of it is failed too: the
// committer marks the pipeline broken and fails what it receives until the
// writer, seeing the mark, has drained the pipe with a barrier and cleared
// the overlay.

// pending is what groups handed to the committer will change, until they
// are applied. Guarded by Engine.pmu.
type pending struct {
	entries map[ovKey]pendingVal
	seqs    map[*boardState]pendingSeq
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
	return pending{entries: map[ovKey]pendingVal{}, seqs: map[*boardState]pendingSeq{}}
}

func (e *Engine) pendingEntry(k ovKey) (ovVal, bool) {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	p, ok := e.pend.entries[k]
	return p.v, ok
}

func (e *Engine) pendingSeq(bs *boardState) (uint64, bool) {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	p, ok := e.pend.seqs[bs]
	return p.seq, ok
}

// handOff publishes a computed group's changes in the overlay and queues it
// for the committer.
func (e *Engine) handOff(g *group) {
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
	e.pipe <- g
}

// barrier waits until the committer has dealt with every group handed to it.
func (e *Engine) barrier() {
	b := &group{barrier: make(chan struct{})}
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
}

// commitLoop is the committer goroutine.
func (e *Engine) commitLoop() {
	defer close(e.committed)
	for g := range e.pipe {
		switch {
		case g.barrier != nil:
			close(g.barrier)
		case g.housekeeping:
			e.housekeeping()
		default:
			e.commitGroup(g)
			if len(e.cp.dirty) >= checkpointMax {
				e.checkpoint(checkpointMax)
			}
		}
	}
}

// commitGroup stores a group, applies it and answers its requests.
func (e *Engine) commitGroup(g *group) {
	e.pmu.Lock()
	broken := e.pend.broken
	e.pmu.Unlock()
	var err error
	if broken {
		err = errBroken
	} else if g.batch.Len() > 0 {
		t0 := time.Now()
		err = e.store.Commit(context.Background(), &g.batch)
		e.metrics.commit(len(g.batch.Submissions), time.Since(t0))
		if err != nil {
			e.log.Error("group commit failed", "err", err, "rows", g.batch.Len())
			e.pmu.Lock()
			e.pend.broken = true
			e.pmu.Unlock()
		}
	}
	if err != nil {
		e.idem.requeue(g.bodies)
		for _, o := range g.ops {
			if o.err == nil {
				o.err = podium.Errorf(podium.ECodeUnavailable, "the write could not be stored; nothing was applied, retry later")
			}
			o.results = nil
			close(o.done)
		}
		return
	}
	e.applyChanges(g)
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
	for _, o := range g.ops {
		if o.kind == opScores {
			for i := range o.results {
				e.metrics.submitted(o.results[i].Err)
			}
		}
		close(o.done)
	}
}

var errBroken = podium.Errorf(podium.ECodeUnavailable, "an earlier write failed to be stored; retry")
