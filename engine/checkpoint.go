package engine

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
)

// Entries are written behind the log.
//
// A group commit stores only the submissions: one sequential append per
// score, which is what makes a commit cheap. The entries table, which makes
// start-up fast, is a checkpoint of the log that the writer brings up to
// date about once a second, writing each changed entry once however often
// it changed. Each board's watermark says how far back the log must be
// replayed at start; replay skips a submission whose seq is not above the
// stored entry's seq, so an entry written ahead of its board's watermark is
// never applied twice.

// checkpointMax caps the entries written by one checkpoint, so that the
// writer never stalls for long behind a big one.
const checkpointMax = 50_000

type checkpointer struct {
	dirty    map[ovKey]uint64 // entries changed since their last checkpoint -> seq of the first change
	seqMoved map[*BoardState]bool
	// off: the store is written through (a SharedStore: each commit
	// stores its entries), so nothing is tracked.
	off bool
}

func newCheckpointer() checkpointer {
	return checkpointer{dirty: map[ovKey]uint64{}, seqMoved: map[*BoardState]bool{}}
}

// mark records a changed entry. The caller holds k.bs.mu for writing (or
// the board is not published yet): the count of the period's dirty entries
// keeps it from eviction until they are written (oldperiods.go).
func (c *checkpointer) mark(k ovKey, seq uint64) {
	if c.off {
		return
	}
	if _, ok := c.dirty[k]; !ok {
		c.dirty[k] = seq
		if k.bs.dirty == nil {
			k.bs.dirty = map[string]int{}
		}
		k.bs.dirty[k.period]++
	}
}

// written forgets dirty entries that the store now holds, taking each
// board's lock once per period.
func (c *checkpointer) written(keys []ovKey) {
	n := map[bpKey]int{}
	for _, k := range keys {
		delete(c.dirty, k)
		n[bpKey{k.bs, k.period}]++
	}
	for k, d := range n {
		k.bs.mu.Lock()
		if k.bs.dirty[k.period] -= d; k.bs.dirty[k.period] <= 0 {
			delete(k.bs.dirty, k.period)
		}
		k.bs.mu.Unlock()
	}
}

// checkpoint writes up to max dirty entries (all when max is 0) and
// advances the watermarks as far as the entries still dirty allow. It runs
// on the writer goroutine.
func (p *pipeline) checkpoint(max int) {
	e, cp := p.e, &p.cp
	if cp.off || len(cp.dirty) == 0 && len(cp.seqMoved) == 0 {
		return
	}
	t0 := time.Now()
	var b podium.Batch
	written := make([]ovKey, 0, min(len(cp.dirty), max))
	ids := make([]uint32, 0, cap(written))
	for k := range cp.dirty {
		if max > 0 && len(written) >= max {
			break
		}
		if e.board(k.bs.def.Load().ID) != k.bs {
			delete(cp.dirty, k) // the board was deleted
			continue
		}
		written = append(written, k)
		ids = append(ids, k.player)
	}
	names := e.players.view(ids, make([]nameView, 0, len(ids)))
	for i, k := range written {
		def := k.bs.def.Load()
		k.bs.mu.RLock()
		ps := k.bs.periods[k.period]
		var en rank.Entry
		ok := false
		var meta json.RawMessage
		var results []podium.Result
		if ps != nil {
			en, ok = ps.idx.Get(k.player)
			meta = ps.meta[k.player]
			results = ps.results[k.player]
		}
		k.bs.mu.RUnlock()
		if !ok {
			b.Deletes = append(b.Deletes, podium.EntryRef{Board: def.ID, Period: k.period, Player: names[i].Player})
			continue
		}
		keys := make([]int64, len(def.Keys))
		copy(keys, en.Keys[:len(keys)])
		b.Upserts = append(b.Upserts, podium.Entry{Board: def.ID, Period: k.period, Player: names[i].Player,
			Keys: keys, At: podium.FromMillis(en.At), Seq: en.Seq, Meta: meta, Results: results})
	}
	// A board's watermark may pass every seq whose change is written: up to
	// just below its oldest change that stays dirty.
	floor := map[*BoardState]uint64{}
	stay := map[ovKey]bool{}
	if len(written) < len(cp.dirty) {
		for _, k := range written {
			stay[k] = false
		}
		for k, seq := range cp.dirty {
			if _, w := stay[k]; w {
				continue
			}
			if f, ok := floor[k.bs]; !ok || seq < f {
				floor[k.bs] = seq
			}
		}
	}
	for bs := range cp.seqMoved {
		if e.board(bs.def.Load().ID) != bs {
			continue
		}
		bs.mu.RLock()
		seq := bs.seq
		bs.mu.RUnlock()
		if f, ok := floor[bs]; ok {
			seq = f - 1
		}
		b.Watermarks = append(b.Watermarks, podium.Watermark{Board: bs.def.Load().ID, Seq: seq})
	}
	if err := e.store.Commit(context.Background(), &b); err != nil {
		e.log.Error("checkpoint of entries failed; will retry", "err", err, "entries", len(written))
		e.health.commitFailed(err, errors.Is(err, podium.ErrOutcomeUnknown))
		return
	}
	cp.written(written)
	for bs := range cp.seqMoved {
		if _, partial := floor[bs]; !partial {
			delete(cp.seqMoved, bs)
		}
	}
	e.metrics.checkpoint(len(written), time.Since(t0))
}
