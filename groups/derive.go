package groups

import (
	"math"
	"slices"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/rank"
)

// Derive computes the group boards' rows that follow from a change of one
// player's entry on a board (to src.Next): for every group board reading
// the board, the player's groups in its set, recomputed against the state
// so far, without changing the group. An error (a sum leaving the int64
// range) refuses the source change as a whole.
func (m *Module) Derive(g *engine.Group, src *engine.Source) ([]engine.Write, error) {
	x := m.index()
	gbs := x.bySource[src.Board.Def().ID]
	if len(gbs) == 0 {
		return nil, nil
	}
	var out []engine.Write
	for _, id := range gbs {
		gb := g.Board(id)
		if gb == nil {
			continue
		}
		set := g.Board(x.defs[id].Set)
		if set == nil {
			continue
		}
		r, err := m.rosterOf(set)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		groups := slices.Clone(r.players[src.Player])
		m.mu.Unlock()
		for _, grp := range groups {
			members := m.memberIDs(r, grp, "", "")
			w, changed, err := m.recompute(g, gb, src.Board, src.Period, grp, members, src.PID, &src.Next)
			if err != nil {
				return nil, err
			}
			if changed {
				out = append(out, w)
			}
		}
	}
	return out, nil
}

// memberIDs lists a group's members, with plus added and minus taken out
// ("": none): a change being computed.
func (m *Module) memberIDs(r *roster, grp, plus, minus string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := r.groups[grp]
	out := make([]string, 0, len(ms)+1)
	for p := range ms {
		if p != minus {
			out = append(out, p)
		}
	}
	if plus != "" {
		if _, ok := ms[plus]; !ok {
			out = append(out, plus)
		}
	}
	slices.Sort(out)
	return out
}

// recompute computes group grp's entry on group board gb in a period
// from its members' entries on src as of the group so far (shadow, if not
// nil, is the entry of player shadowPID after the change being computed),
// and reports whether it differs from the group's current entry.
func (m *Module) recompute(g *engine.Group, gb, src *engine.BoardState, period, grp string, members []string, shadowPID uint32, shadow *engine.Value) (engine.Write, bool, error) {
	def := gb.Def()
	n := len(def.Keys)
	if err := g.Hold(gb, period); err != nil {
		return engine.Write{}, false, err
	}
	if err := g.Hold(src, period); err != nil {
		return engine.Write{}, false, err
	}
	entries := make([][]int64, 0, len(members))
	for _, p := range members {
		pid, ok := g.PID(p)
		if !ok {
			continue // never scored anywhere
		}
		var v engine.Value
		if shadow != nil && pid == shadowPID {
			v = *shadow
		} else {
			v = g.Current(src, period, pid)
		}
		if v.Exists {
			entries = append(entries, v.Entry.Keys[:n])
		}
	}
	keys, ok, err := Value(def, entries)
	if err != nil {
		return engine.Write{}, false, err
	}
	gpid := g.Intern(grp)
	cur := g.Current(gb, period, gpid)
	row := engine.Write{Board: gb, Period: period, Player: grp, PID: gpid}
	if !ok {
		return row, cur.Exists, nil
	}
	if cur.Exists && slices.Equal(cur.Entry.Keys[:n], keys) {
		return row, false, nil
	}
	row.Value = engine.Value{Entry: rank.Entry{Player: gpid, At: g.Now().UnixMilli(), Hidden: g.Hidden(gpid)}, Exists: true}
	copy(row.Value.Entry.Keys[:], keys)
	return row, true, nil
}

// Value computes a group's keys on group board def from its members'
// entries' keys (in any order): ok false when no member has an entry.
// The best k members are those ranked ahead under the board's orders.
// ECodeUnprocessable when a sum would leave the int64 range.
func Value(def *podium.Board, entries [][]int64) (keys []int64, ok bool, err error) {
	if len(entries) == 0 {
		return nil, false, nil
	}
	gb := def.GroupBoard
	orders := def.Orders()
	sorted := slices.Clone(entries)
	slices.SortStableFunc(sorted, func(a, b []int64) int { return podium.CompareKeys(orders, a, b) })
	if gb.Rule == podium.GroupBest {
		return slices.Clone(sorted[0][:len(orders)]), true, nil
	}
	k := len(sorted)
	if gb.K > 0 && gb.K < k {
		k = gb.K
	}
	keys = make([]int64, len(orders))
	for j := range orders {
		var sum int64
		for _, e := range sorted[:k] {
			v := e[j]
			if (v > 0 && sum > math.MaxInt64-v) || (v < 0 && sum < math.MinInt64-v) {
				return nil, false, podium.Errorf(podium.ECodeUnprocessable, "group board %q: the sum of key %q would leave the int64 range", def.ID, def.Keys[j].Name)
			}
			sum += v
		}
		if gb.Rule == podium.GroupAvg {
			sum /= int64(k)
		}
		keys[j] = sum
	}
	return keys, true, nil
}
