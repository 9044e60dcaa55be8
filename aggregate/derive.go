package aggregate

import (
	"slices"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/rank"
)

// key is one player's entry in one period of one board.
type key struct {
	bs     *engine.BoardState
	period string
	pid    uint32
}

// Derive computes the aggregate rows that follow from a change of one
// player's entry on a board (to src.Next), against the state so far,
// without changing the group: an error (a sum leaving the int64 range)
// leaves the source change to be refused as a whole.
func (m *Module) Derive(g *engine.Group, src *engine.Source) ([]engine.Write, error) {
	return m.plan(g, key{src.Board, src.Period, src.PID}, src.Player, src.Next, false)
}

// plan computes the rows that follow from next on src. With reached, an
// aggregate entry is timed by when its sources reached what it counts
// (podium.Board.AggregateReached) rather than now: for a recompute over
// entries that already exist.
func (m *Module) plan(g *engine.Group, src key, player string, next engine.Value, reached bool) ([]engine.Write, error) {
	deps := m.graph().deps[src.bs.Def().ID]
	if len(deps) == 0 {
		return nil, nil
	}
	shadow := map[key]engine.Value{src: next}
	var rows []engine.Write
	for _, id := range deps {
		abs := g.Board(id)
		if abs == nil {
			continue
		}
		row, changed, err := m.recompute(g, shadow, abs, src.period, src.pid, player, reached)
		if err != nil {
			return nil, err
		}
		if changed {
			shadow[key{row.Board, row.Period, row.PID}] = row.Value
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// recompute computes a player's entry on aggregate abs in one period from
// the state so far (shadow first), and reports whether it differs from the
// aggregate's current entry.
func (m *Module) recompute(g *engine.Group, shadow map[key]engine.Value, abs *engine.BoardState, period string, pid uint32, player string, reached bool) (engine.Write, bool, error) {
	def := abs.Def()
	n := len(def.Keys)
	look := func(k key) engine.Value {
		if v, ok := shadow[k]; ok {
			return v
		}
		return g.Current(k.bs, k.period, k.pid)
	}
	if err := g.Hold(abs, period); err != nil {
		return engine.Write{}, false, err
	}
	src := make([]*podium.Entry, len(def.Aggregate.Sources))
	for i, s := range def.Aggregate.Sources {
		sbs := g.Board(s.Board)
		if sbs == nil {
			continue // refused by validation; counts as no entry
		}
		if err := g.Hold(sbs, period); err != nil {
			return engine.Write{}, false, err
		}
		if v := look(key{sbs, period, pid}); v.Exists {
			src[i] = &podium.Entry{Keys: v.Entry.Keys[:n], At: podium.FromMillis(v.Entry.At), Results: v.Results}
		}
	}
	keys, ok, err := def.ComputeAggregate(src)
	if err != nil {
		return engine.Write{}, false, err
	}
	cur := look(key{abs, period, pid})
	row := engine.Write{Board: abs, Period: period, Player: player, PID: pid}
	if !ok {
		return row, cur.Exists, nil
	}
	if cur.Exists && slices.Equal(cur.Entry.Keys[:n], keys) {
		return row, false, nil
	}
	at := g.Now()
	if reached {
		if t := def.AggregateReached(src); !t.IsZero() && t.Before(at) {
			at = t
		}
	}
	row.Value = engine.Value{Entry: rank.Entry{Player: pid, At: at.UnixMilli(), Hidden: g.Hidden(pid)}, Exists: true}
	copy(row.Value.Entry.Keys[:], keys)
	return row, true, nil
}
