package engine

import (
	"slices"

	"github.com/podiumhq/podium"
)

// Applying a committed group to the indexes: each board's changes under one
// hold of its lock, with the answers' ranks (writer.go).

// seqOf is the seq of the submission behind a change.
func seqOf(c *change) uint64 {
	if c.del {
		return c.delSeq
	}
	return c.entry.Seq
}

// applyChanges applies committed changes to the indexes, filling in ranks,
// then tells the listener.
//
// Each board's changes are applied under one hold of its lock, in their
// order in the group: the board's seq moves to the group's last seq on it,
// so a reader (a page, its ETag, the page cache, a 304, an export's
// consistency check) must never see the board with only part of them. A
// group holding changes on boards a, b, a used to unlock a between its
// changes, and a page read then carried the final seq with one change
// missing. Changes on different boards are independent, so applying them a
// board at a time gives every answer the same ranks.
func (e *Engine) applyChanges(g *Group) {
	type touched struct {
		board, period string
	}
	notify := map[touched][]uint32{}
	order := byBoard(g.changes)
	var locked *BoardState
	for j := range g.changes {
		i := j
		if order != nil {
			i = order[j]
		}
		c := &g.changes[i]
		if c.bs != locked {
			if locked != nil {
				locked.mu.Unlock()
				if testHookApplied != nil {
					testHookApplied(locked)
				}
			}
			locked = c.bs
			locked.mu.Lock()
		}
		ps := c.bs.periods[c.period]
		if ps == nil {
			ps = newPeriodState(c.bs.desc)
			c.bs.setPeriod(c.period, ps)
		}
		def := c.bs.def.Load()
		n := len(def.Keys)
		if c.del {
			ps.idx.Delete(c.player)
			delete(ps.meta, c.player)
			delete(ps.results, c.player)
		} else {
			var prev *EntryView
			cur, had := ps.idx.Get(c.player)
			var r int
			if had {
				r, _ = ps.idx.Rank(c.player, false)
				prev = &EntryView{Rank: r, Keys: append([]int64(nil), cur.Keys[:n]...), At: podium.FromMillis(cur.At), Seq: cur.Seq}
				rankExtras(prev, def, ps.idx, &cur)
			}
			// An unchanged entry (a best board's worse score) answers
			// with what was just read: two index lookups fewer.
			if c.changed {
				ps.idx.Put(c.entry)
				if c.meta != nil {
					ps.meta[c.player] = c.meta
				} else {
					delete(ps.meta, c.player)
				}
				if c.results != nil {
					ps.results[c.player] = c.results
				}
				cur, _ = ps.idx.Get(c.player)
				r, _ = ps.idx.Rank(c.player, false)
			}
			meta := ps.meta[c.player]
			if meta == nil {
				meta = emptyMeta
			}
			c.res.Entry = EntryView{Rank: r, Keys: append([]int64(nil), cur.Keys[:n]...), At: podium.FromMillis(cur.At), Seq: cur.Seq, Meta: meta, Results: ps.results[c.player]}
			if prev != nil && !c.changed {
				c.res.Entry.Of, c.res.Entry.Shared = prev.Of, prev.Shared // nothing moved
			} else {
				rankExtras(&c.res.Entry, def, ps.idx, &cur)
			}
			c.res.Previous = prev
		}
		if seq := g.seqs[c.bs]; seq > c.bs.seq {
			c.bs.seq = seq
		}
		if !e.pl.cp.off {
			e.pl.cp.seqMoved[c.bs] = true
		}
		if c.changed || c.del {
			t := touched{def.ID, c.period}
			notify[t] = append(notify[t], c.player)
			e.pl.cp.mark(ovKey{c.bs, c.period, c.player}, seqOf(c))
		}
	}
	if locked != nil {
		locked.mu.Unlock()
		if testHookApplied != nil {
			testHookApplied(locked)
		}
	}
	if e.listener != nil {
		for t, ps := range notify {
			bs := e.board(t.board)
			if bs == nil {
				continue
			}
			bs.mu.RLock()
			seq := bs.seq
			bs.mu.RUnlock()
			e.listener.Applied(t.board, t.period, seq, ps)
		}
	}
}

// testHookApplied, when set by a test, runs in applyChanges each time it
// releases a board's lock: where a reader can see the board mid-group.
var testHookApplied func(*BoardState)

// byBoard returns the order in which to apply changes so that each board's
// come together, in their order in the group (a stable sort by each
// board's first change), or nil when they already do.
func byBoard(cs []change) []int {
	runs := 0
	for i := 1; i < len(cs); i++ {
		if cs[i].bs != cs[i-1].bs {
			runs++
		}
	}
	if runs == 0 {
		return nil
	}
	first := make(map[*BoardState]int, runs+1)
	again := false
	for i := range cs {
		if _, ok := first[cs[i].bs]; !ok {
			first[cs[i].bs] = i
		} else if cs[i].bs != cs[i-1].bs {
			again = true
		}
	}
	if !again {
		return nil
	}
	order := make([]int, len(cs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return first[cs[a].bs] - first[cs[b].bs] })
	return order
}
