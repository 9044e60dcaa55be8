package feed

import (
	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/rank"
)

// Tracking #1 through the pipeline (docs/ARCHITECTURE.md, "Activity
// feed"): a new #1 needs the top of a period as of the state a score is
// computed against, which may include groups handed to the committer and
// not yet applied to the index. A group keeps the #1 of every period it
// touches in its rows; when it is handed off the module keeps them aside
// (pend) under the group's generation, and drops each once that group is
// applied, unless a later group replaced it (engine/hooks_feed.go).

// key names one period of one board.
type key struct {
	bs     *engine.BoardState
	period string
}

// leader is the #1 (among visible entries) of a period as of the state a
// group is computed against. known is false when a change made it
// uncertain (the #1 got worse or was deleted); it is then worked out
// again when next needed.
type leader struct {
	known  bool
	exists bool
	player uint32
	entry  rank.Entry
}

// pending is a #1 as of the group gen, handed off and not yet applied.
type pending struct {
	v   leader
	gen uint64
}

func rankCompare(orders []podium.Order, n int, a, b *rank.Entry) int {
	return podium.CompareRank(orders, a.Keys[:n], a.At, a.Seq, b.Keys[:n], b.At, b.Seq)
}

// HandedOff implements engine.HandOffer: the #1s g worked out hold for
// the groups after it until g is applied.
func (m *Module) HandedOff(g *engine.Group) {
	r := m.rowsOf(g, false)
	if r == nil || len(r.leaders) == 0 {
		return
	}
	m.pmu.Lock()
	for k, v := range r.leaders {
		m.pend[k] = pending{v, g.Gen()}
	}
	m.pmu.Unlock()
}

// applied drops the #1s g handed on: the index holds them now.
func (m *Module) applied(g *engine.Group, r *rows) {
	if len(r.leaders) == 0 {
		return
	}
	m.pmu.Lock()
	for k := range r.leaders {
		if p, ok := m.pend[k]; ok && p.gen == g.Gen() {
			delete(m.pend, k)
		}
	}
	m.pmu.Unlock()
}

// Forget implements engine.Forgetter: after a failed commit nothing is
// pending.
func (m *Module) Forget() {
	m.pmu.Lock()
	clear(m.pend)
	m.pmu.Unlock()
}

// leader returns the #1 of k as of everything computed so far: this
// group, the groups handed to the committer but not applied, the index.
func (m *Module) leader(g *engine.Group, r *rows, k key) leader {
	v, inGroup := r.leaders[k]
	if inGroup && v.known {
		return v
	}
	if !inGroup {
		m.pmu.Lock()
		p, ok := m.pend[k]
		m.pmu.Unlock()
		if ok && p.v.known {
			return p.v
		}
	}
	// Work it out from the index, which must then hold everything before
	// this group: let the committer apply what it holds (single node; in
	// shared mode nothing is pending).
	m.pmu.Lock()
	_, pend := m.pend[k]
	m.pmu.Unlock()
	if pend {
		g.WaitApplied()
	}
	return scanLeader(g, k)
}

// scanLeader finds the #1 of k from the index and this group's changes.
// It costs the group's changes; it runs only when the #1 is not tracked.
func scanLeader(g *engine.Group, k key) leader {
	def := k.bs.Def()
	orders, n := def.Orders(), len(def.Keys)
	var best leader
	k.bs.Ranked(k.period, func(en rank.Entry) bool {
		if g.Changed(k.bs, k.period, en.Player) {
			return true // its entry in this group counts instead
		}
		best = leader{exists: true, player: en.Player, entry: en}
		return false
	})
	g.EachChanged(k.bs, k.period, func(pid uint32, v engine.Value) {
		if !v.Exists || v.Entry.Hidden {
			return
		}
		if !best.exists || rankCompare(orders, n, &v.Entry, &best.entry) < 0 {
			best = leader{exists: true, player: pid, entry: v.Entry}
		}
	})
	best.known = true
	return best
}

// Scored implements engine.Scorer: the feed events of one logged score,
// against the entry before it, emitted in the group (Group.Emit), which
// hands them to every EventSink: this module's own Event queues them in
// the group's rows, and other modules (webhooks) hear them too.
func (m *Module) Scored(g *engine.Group, s *engine.Scored) {
	if m.store == nil || !s.Changed || s.New.Hidden {
		return
	}
	def := s.Def
	n := len(def.Keys)
	keys := append([]int64(nil), s.New.Keys[:n]...)
	r := m.rowsOf(g, true)
	// Events are news, dated when they happen: the writer's clock, which
	// is a score's own date except for a settlement's credit (dated at
	// its tournament's end, possibly in the past or the future).
	if def.Mode == podium.Best {
		ev := podium.FeedEvent{Board: def.ID, Seq: s.Seq, Kind: podium.FeedPersonalBest, At: g.Now(), Period: s.Period,
			Player: s.Player, Keys: keys}
		if s.Old.Exists {
			ev.Old = append([]int64(nil), s.Old.Entry.Keys[:n]...)
		}
		g.Emit(ev) // to every EventSink: this module's Event queues it in r

	}
	if r.leaders == nil {
		r.leaders = map[key]leader{}
	}
	k := key{s.Board, s.Period}
	l := m.leader(g, r, k)
	orders := def.Orders()
	switch {
	case l.exists && l.player == s.PID:
		if rankCompare(orders, n, &s.New, &l.entry) <= 0 {
			r.leaders[k] = leader{known: true, exists: true, player: s.PID, entry: s.New}
		} else {
			r.leaders[k] = leader{} // the #1 got worse: someone else may be ahead now
		}
	case !l.exists || rankCompare(orders, n, &s.New, &l.entry) < 0:
		ev := podium.FeedEvent{Board: def.ID, Seq: s.Seq, Kind: podium.FeedNewLeader, At: g.Now(), Period: s.Period,
			Player: s.Player, Keys: keys}
		if l.exists {
			ev.Old = append([]int64(nil), l.entry.Keys[:n]...)
			ev.Other = g.PlayerID(l.player)
		}
		g.Emit(ev)
		r.leaders[k] = leader{known: true, exists: true, player: s.PID, entry: s.New}
	default:
		r.leaders[k] = l
	}
}

// EntryReset implements engine.EntryResetter: an entry of the period was
// deleted or restored; if it was the #1, the #1 is worked out again when
// next needed.
func (m *Module) EntryReset(g *engine.Group, bs *engine.BoardState, period string) {
	if m.store == nil {
		return
	}
	r := m.rowsOf(g, true)
	if r.leaders == nil {
		r.leaders = map[key]leader{}
	}
	r.leaders[key{bs, period}] = leader{}
}
