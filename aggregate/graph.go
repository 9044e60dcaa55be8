package aggregate

import (
	"cmp"
	"slices"

	"github.com/podiumhq/podium"
)

// graph is which aggregates depend on which boards.
type graph struct {
	// deps lists, per board, the aggregates depending on it directly or
	// through other aggregates, in evaluation order (an aggregate after
	// those of its sources).
	deps map[string][]string
	// sources lists, per aggregate, every board it reads directly or
	// through other aggregates.
	sources map[string][]string
}

// buildGraph builds the graph of the aggregates among defs (which may hold
// other boards too: only aggregates matter).
func buildGraph(defs map[string]*podium.Board) *graph {
	g := &graph{deps: map[string][]string{}, sources: map[string][]string{}}
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
		depth[id] = podium.AggregateDepth(defs, id)
	}
	for b, list := range g.deps {
		slices.SortFunc(list, func(x, y string) int { return cmp.Or(cmp.Compare(depth[x], depth[y]), cmp.Compare(x, y)) })
		g.deps[b] = list
	}
	return g
}

// LockSet adds to the sorted board ids a group writes every aggregate
// depending on them and every source of those aggregates.
func (m *Module) LockSet(ids []string) []string {
	g := m.graph()
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

// PutLocks lists the boards a PUT of board u.ID must lock besides it in
// shared mode: the sources of the aggregate it defines, so that none is
// deleted or changed while the definition is checked against it.
func (m *Module) PutLocks(u *podium.BoardUpdate, cur *podium.Board) []string {
	a := u.Aggregate
	if a == nil && cur != nil && u.Mode == nil {
		a = cur.Aggregate
	}
	if a == nil {
		return nil
	}
	var ids []string
	for _, s := range a.Sources {
		if podium.ValidBoardID(s.Board) && s.Board != u.ID {
			ids = append(ids, s.Board)
		}
	}
	return ids
}
