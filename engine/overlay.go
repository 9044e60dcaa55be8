package engine

import (
	"encoding/json"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
)

// The overlay of a group: what the writer sees while it computes a group,
// in three layers, newest first: the group's own changes (Group.overlay,
// Group.seqs), the changes of groups handed to the committer and not yet
// applied (pending, the pipeline's), and the boards' indexes. Everything
// a score reads of the state so far comes through here (current,
// nextSeq), so that the score path visits one file for it.

// ovKey names one player's entry in one period of one board.
type ovKey struct {
	bs     *BoardState
	period string
	player uint32
}

// current returns the entry of a player as of everything computed so far:
// this group, then groups handed to the committer but not applied yet,
// then the index.
func (g *Group) current(k ovKey) ovVal {
	if v, ok := g.overlay[k]; ok {
		return v
	}
	if v, ok := g.e.pl.pendingEntry(k); ok {
		return v
	}
	k.bs.mu.RLock()
	defer k.bs.mu.RUnlock()
	ps := k.bs.periods[k.period]
	if ps == nil {
		return ovVal{}
	}
	en, ok := ps.idx.Get(k.player)
	if !ok {
		return ovVal{}
	}
	return ovVal{entry: en, meta: ps.meta[k.player], exists: true, results: ps.results[k.player]}
}

// nextSeq returns the seq the next row logged on bs takes in this group.
func (g *Group) nextSeq(bs *BoardState) uint64 {
	s, ok := g.seqs[bs]
	if !ok {
		if s, ok = g.e.pl.pendingSeq(bs); !ok {
			bs.mu.RLock()
			s = bs.seq
			bs.mu.RUnlock()
		}
	}
	return s + 1
}

// ovVal is an entry as of the overlay; exists false: no entry.
type ovVal struct {
	entry   rank.Entry
	meta    json.RawMessage
	exists  bool
	results []podium.Result // best_k
}

func (v ovVal) value() Value { return Value{Entry: v.entry, Exists: v.exists, Results: v.results} }

// pending is what groups handed to the committer will change, until they
// are applied. Guarded by pipeline.mu.
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

// pendingEntry returns a handed-off group's entry for k, if one changed it.
func (p *pipeline) pendingEntry(k ovKey) (ovVal, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.pend.entries[k]
	return v.v, ok
}

// pendingSeq returns the last seq handed-off groups logged on bs, if any.
func (p *pipeline) pendingSeq(bs *BoardState) (uint64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.pend.seqs[bs]
	return s.seq, ok
}
