package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
)

// Aggregate boards (podium.Aggregate) on the write path.
//
// When a group changes a player's entry on a board, the writer recomputes
// that player's entry on every aggregate that depends on the board (also
// through other aggregates, sources first) from the state so far, and when
// the aggregate's keys change it logs a row on the aggregate board with the
// whole new value (an aggregate board replays like a latest board; a
// delete row when the player no longer has an aggregate entry). The rows
// ride in the same group commit as the source change, so the aggregate
// can never be seen out of step with its sources, and they are the
// aggregate's own log: checkpoints, followers, live streams, resume,
// check and rebuild need nothing new. A row is logged only when the value
// changes, so its time is when the aggregate reached its value: the usual
// tie-break.
//
// In shared mode a group locks, with the boards it writes, every aggregate
// depending on them and every source of those aggregates (aggLockSet), so
// two nodes never compute an aggregate from different states.

// aggCache holds the dependency graph of the aggregates, rebuilt after an
// aggregate is made, changed or removed, from the aggregates alone (the
// engine keeps them apart: boardSet.aggs), so that neither making a plain
// board nor the rebuild costs in the number of boards. Lock order:
// docs/LOCKS.md.
type aggCache struct {
	mu sync.Mutex
	g  *aggGraph // nil: to rebuild
}

// aggGraph is which aggregates depend on which boards.
type aggGraph struct {
	// deps lists, per board, the aggregates depending on it directly or
	// through other aggregates, in evaluation order (an aggregate after
	// those of its sources).
	deps map[string][]string
	// sources lists, per aggregate, every board it reads directly or
	// through other aggregates.
	sources map[string][]string
}

// aggInvalidate drops the dependency graph; the next use rebuilds it.
func (e *Engine) aggInvalidate() {
	e.aggs.mu.Lock()
	e.aggs.g = nil
	e.aggs.mu.Unlock()
}

// aggChanged drops the dependency graph when a board change can change it:
// old (nil: none) or next (nil: deleted) is an aggregate. Which plain
// boards exist does not change it.
func (e *Engine) aggChanged(old, next *podium.Board) {
	if old != nil && old.Aggregate != nil || next != nil && next.Aggregate != nil {
		e.aggInvalidate()
	}
}

func (e *Engine) aggGraph() *aggGraph {
	e.aggs.mu.Lock()
	defer e.aggs.mu.Unlock()
	if e.aggs.g == nil {
		e.aggs.g = buildAggGraph(e.aggDefs())
	}
	return e.aggs.g
}

// buildAggGraph builds the graph of the aggregates among defs (which may
// hold other boards too: only aggregates matter).
func buildAggGraph(defs map[string]*podium.Board) *aggGraph {
	g := &aggGraph{deps: map[string][]string{}, sources: map[string][]string{}}
	depth := map[string]int{}
	for id, def := range defs {
		if def.Aggregate == nil {
			continue
		}
		seen := map[string]bool{id: true}
		var walk func(a *podium.Board)
		walk = func(a *podium.Board) {
			for _, s := range a.Aggregate.Sources {
				if seen[s.Board] {
					continue
				}
				seen[s.Board] = true
				g.sources[id] = append(g.sources[id], s.Board)
				g.deps[s.Board] = append(g.deps[s.Board], id)
				if sd := defs[s.Board]; sd != nil && sd.Aggregate != nil {
					walk(sd)
				}
			}
		}
		walk(def)
		slices.Sort(g.sources[id])
		depth[id] = aggDepth(defs, id, map[string]bool{})
	}
	for b, list := range g.deps {
		slices.SortFunc(list, func(x, y string) int { return cmp.Or(cmp.Compare(depth[x], depth[y]), cmp.Compare(x, y)) })
		g.deps[b] = list
	}
	return g
}

// aggDepth is 0 for a plain board, else 1 + the deepest source; a cycle
// (which validation refuses) counts as deeper than any limit.
func aggDepth(defs map[string]*podium.Board, id string, path map[string]bool) int {
	def := defs[id]
	if def == nil || def.Aggregate == nil {
		return 0
	}
	if path[id] {
		return podium.MaxAggregateDepth + 1
	}
	path[id] = true
	defer delete(path, id)
	d := 0
	for _, s := range def.Aggregate.Sources {
		d = max(d, aggDepth(defs, s.Board, path))
	}
	return d + 1
}

// aggLockSet adds to the sorted board ids a group writes every aggregate
// depending on them and every source of those aggregates.
func (e *Engine) aggLockSet(ids []string) []string {
	g := e.aggGraph()
	if len(g.deps) == 0 {
		return ids
	}
	out := slices.Clone(ids)
	for _, id := range ids {
		for _, a := range g.deps[id] {
			out = append(out, a)
			out = append(out, g.sources[a]...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func errAggregateWrite(id string) error {
	return podium.Errorf(podium.ECodeConflict, "board %q is an aggregate: its entries are computed from its source boards; write to those instead", id)
}

// aggRow is one aggregate change planned by a group: the player's new
// value on an aggregate board (val.exists false: no entry any more).
type aggRow struct {
	key    ovKey
	player string
	val    ovVal
}

// aggPlan computes the aggregate rows that follow from a change of one
// player's entry on a board (to next), against the state so far, without
// changing the group: an error (a sum leaving the int64 range) leaves the
// source change to be refused as a whole.
//
// With reached, an aggregate entry is timed by when its sources reached
// what it counts (podium.Board.AggregateReached) rather than now: for a
// recompute over entries that already exist.
func (e *Engine) aggPlan(g *Group, src ovKey, player string, next ovVal, reached bool) ([]aggRow, error) {
	deps := e.aggGraph().deps[src.bs.def.Load().ID]
	if len(deps) == 0 {
		return nil, nil
	}
	shadow := map[ovKey]ovVal{src: next}
	var rows []aggRow
	for _, id := range deps {
		abs := e.board(id)
		if abs == nil {
			continue
		}
		row, changed, err := e.aggRecompute(g, shadow, abs, src.period, src.player, player, reached)
		if err != nil {
			return nil, err
		}
		if changed {
			shadow[row.key] = row.val
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// aggRecompute computes a player's entry on aggregate abs in one period
// from the state so far (shadow first), and reports whether it differs
// from the aggregate's current entry.
func (e *Engine) aggRecompute(g *Group, shadow map[ovKey]ovVal, abs *BoardState, period string, pid uint32, player string, reached bool) (aggRow, bool, error) {
	def := abs.def.Load()
	n := len(def.Keys)
	look := func(k ovKey) ovVal {
		if v, ok := shadow[k]; ok {
			return v
		}
		return g.current(k)
	}
	if err := e.holdPeriod(g, abs, period); err != nil {
		return aggRow{}, false, err
	}
	src := make([]*podium.Entry, len(def.Aggregate.Sources))
	for i, s := range def.Aggregate.Sources {
		sbs := e.board(s.Board)
		if sbs == nil {
			continue // refused by validation; counts as no entry
		}
		if err := e.holdPeriod(g, sbs, period); err != nil {
			return aggRow{}, false, err
		}
		if v := look(ovKey{sbs, period, pid}); v.exists {
			src[i] = &podium.Entry{Keys: v.entry.Keys[:n], At: podium.FromMillis(v.entry.At), Results: v.results}
		}
	}
	keys, ok, err := def.ComputeAggregate(src)
	if err != nil {
		return aggRow{}, false, err
	}
	k := ovKey{abs, period, pid}
	cur := look(k)
	row := aggRow{key: k, player: player}
	if !ok {
		return row, cur.exists, nil
	}
	if cur.exists && slices.Equal(cur.entry.Keys[:n], keys) {
		return row, false, nil
	}
	at := g.now
	if reached {
		if t := def.AggregateReached(src); !t.IsZero() && t.Before(at) {
			at = t
		}
	}
	row.val = ovVal{entry: rank.Entry{Player: pid, At: at.UnixMilli(), Hidden: e.players.hidden(pid)}, exists: true}
	copy(row.val.entry.Keys[:], keys)
	return row, true, nil
}

// aggApply adds planned aggregate rows to the group (Group.Write): log
// rows, overlay and changes, as a score or delete on the aggregate board
// would.
func (e *Engine) aggApply(g *Group, rows []aggRow) {
	for _, r := range rows {
		g.Write(Write{Board: r.key.bs, Period: r.key.period, Player: r.player, PID: r.key.player, Value: r.val.value()})
	}
}

// aggPeriods lists the periods any of the boards has entries in (loaded
// or known).
func aggPeriods(boards []*BoardState) []string {
	set := map[string]bool{}
	for _, bs := range boards {
		bs.mu.RLock()
		for p, ps := range bs.periods {
			if ps.idx.Len() > 0 {
				set[p] = true
			}
		}
		for p, n := range bs.known {
			if n > 0 {
				set[p] = true
			}
		}
		bs.mu.RUnlock()
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// aggChunkPlayers is how many players one step of a recompute visits: the
// writer takes other groups between steps, so that defining an aggregate
// over big boards does not hold writes back for long.
var aggChunkPlayers = 2000

// aggWork is a recompute in progress: the players to visit, per period, as
// they were when it started. A player who appears later got their
// aggregate from the write that made them appear (the definition is in
// place before the first step), and a player visited twice is recomputed
// from the state of the moment, so stepping is exact.
type aggWork struct {
	bs      *BoardState
	def     *podium.Aggregate
	periods []string
	players [][]uint32
	p, i    int // the next period, the next player in it
}

// aggNewWork lists the periods and players of an aggregate and its direct
// sources.
func (e *Engine) aggNewWork(abs *BoardState) (*aggWork, error) {
	def := abs.def.Load()
	w := &aggWork{bs: abs, def: def.Aggregate}
	boards := []*BoardState{abs}
	for _, s := range def.Aggregate.Sources {
		if sbs := e.board(s.Board); sbs != nil {
			boards = append(boards, sbs)
		}
	}
	for _, period := range aggPeriods(boards) {
		players := map[uint32]bool{}
		for _, bs := range boards {
			loaded, err := e.loadLazy(context.Background(), bs, period)
			if err != nil {
				return nil, err
			}
			bs.mu.RLock()
			if loaded != nil {
				loaded.readers.Add(-1) // the read lock keeps it now
			}
			if ps := bs.periods[period]; ps != nil {
				ps.idx.Range(1, ps.idx.Len(), true, func(_ int, en rank.Entry) bool {
					players[en.Player] = true
					return true
				})
			}
			bs.mu.RUnlock()
		}
		ids := make([]uint32, 0, len(players))
		for p := range players {
			ids = append(ids, p)
		}
		slices.Sort(ids)
		w.periods = append(w.periods, period)
		w.players = append(w.players, ids)
	}
	return w, nil
}

// aggStep plans, for the next players of w (at most limit), the rows that
// bring the aggregate to what its sources say (and, through aggPlan, the
// aggregates depending on it). done reports that every player is visited.
func (e *Engine) aggStep(g *Group, w *aggWork, limit int) (done bool, err error) {
	n := 0
	for ; w.p < len(w.periods); w.p, w.i = w.p+1, 0 {
		period := w.periods[w.p]
		for ; w.i < len(w.players[w.p]); w.i++ {
			if n == limit {
				return false, nil
			}
			n++
			pid := w.players[w.p][w.i]
			name := e.players.name(pid).Player
			row, changed, err := e.aggRecompute(g, map[ovKey]ovVal{}, w.bs, period, pid, name, true)
			if err != nil {
				return false, fmt.Errorf("player %q in period %s: %w", name, period, err)
			}
			if !changed {
				continue
			}
			more, err := e.aggPlan(g, row.key, name, row.val, true)
			if err != nil {
				return false, fmt.Errorf("player %q in period %s: %w", name, period, err)
			}
			e.aggApply(g, append([]aggRow{row}, more...))
		}
	}
	return true, nil
}

// aggRecomputeStep runs one step of the recompute of aggregate id, on the
// writer, as a group of its own (in shared mode a transaction holding the
// aggregate and its sources, caught up with them). *w is nil before the
// first step. done reports that every player was visited, or that the
// board is no longer this aggregate (deleted, or redefined: the newer PUT
// recomputes it).
func (e *Engine) aggRecomputeStep(ctx context.Context, id string, w **aggWork) (done bool, err error) {
	var tx podium.WriteTx
	if e.sh == nil {
		e.recover()
	} else {
		if e.sh.DBError() != nil {
			return false, errDatabaseDown()
		}
		var ids []string
		tx, ids, err = e.aggBegin(ctx, []string{id})
		if err != nil {
			return false, e.beginFailed(err)
		}
		defer tx.Rollback()
		for _, b := range ids {
			if err := e.syncLocked(ctx, tx, b); err != nil {
				return false, e.storeFailed("catch up", err)
			}
		}
	}
	bs := e.board(id)
	var def *podium.Board
	if bs != nil {
		def = bs.def.Load()
	}
	switch {
	case *w == nil && bs == nil:
		return false, errBoardNotFound(id)
	case *w == nil && def.Aggregate == nil:
		return false, podium.Errorf(podium.ECodeInvalid, "board %q is not an aggregate", id)
	case *w == nil:
		if *w, err = e.aggNewWork(bs); err != nil {
			return false, err
		}
	case bs != (*w).bs || !def.Aggregate.Equal((*w).def):
		return true, nil
	}
	g := e.newGroup(nil)
	if done, err = e.aggStep(g, *w, aggChunkPlayers); err != nil {
		e.releaseHolds(g)
		return false, err
	}
	if len(g.batch.Submissions) == 0 {
		e.releaseHolds(g)
		return done, nil
	}
	if e.sh == nil {
		e.handOff(g)
		e.barrier()
	} else {
		e.writeThrough(g)
		if g.err = tx.Commit(ctx, &g.batch); g.err != nil {
			e.commitFailed(g.err, false)
		}
		e.finishGroup(g)
		if g.err == nil {
			e.publishRows(g)
		}
	}
	if g.err != nil {
		return false, podium.Errorf(podium.ECodeUnavailable, "the aggregate's entries could not be stored (%s)", storageCause(g.err))
	}
	return done, nil
}

// aggRecomputeAll brings every entry of an aggregate board, in every
// period, to what its sources say now, logging a row for each entry that
// differs (none when it is right), step by step on the writer with other
// writes in between. A PUT of an aggregate board runs it before its
// answer, so a new aggregate starts with the entries its sources already
// imply, and re-PUTting one repairs it. Once started it runs to the end
// even if the caller goes away.
func (e *Engine) aggRecomputeAll(id string) error {
	var w *aggWork
	for {
		var (
			done bool
			err  error
		)
		o := &op{kind: opFunc, p: func() { done, err = e.aggRecomputeStep(context.Background(), id, &w) }}
		if serr := e.send(context.Background(), o); serr != nil {
			return serr
		}
		if err != nil || done {
			return err
		}
	}
}

// newGroup returns an empty group computed at the engine's now.
func (e *Engine) newGroup(ops []*op) *Group {
	return &Group{e: e, ops: ops, now: e.now(), overlay: map[ovKey]ovVal{}, seqs: map[*BoardState]uint64{}, periods: map[*BoardState]string{}}
}
