package groups

import (
	"context"
	"slices"

	"github.com/podiumhq/podium"
)

// index is which group boards read which boards.
type index struct {
	defs     map[string]*podium.GroupBoard // group board -> its definition
	bySource map[string][]string           // source -> group boards, sorted
	bySet    map[string][]string           // set -> group boards, sorted
}

func (m *Module) index() *index {
	m.imu.Lock()
	defer m.imu.Unlock()
	if m.idx == nil {
		x := &index{defs: map[string]*podium.GroupBoard{}, bySource: map[string][]string{}, bySet: map[string][]string{}}
		for _, bs := range m.eng.BoardStates() {
			def := bs.Def()
			if gb := def.GroupBoard; gb != nil {
				x.defs[def.ID] = gb
				x.bySource[gb.Source] = append(x.bySource[gb.Source], def.ID)
				x.bySet[gb.Set] = append(x.bySet[gb.Set], def.ID)
			}
		}
		for _, l := range x.bySource {
			slices.Sort(l)
		}
		for _, l := range x.bySet {
			slices.Sort(l)
		}
		m.idx = x
	}
	return m.idx
}

// BoardChanged drops the index when a group board or set changes, and a
// deleted set's roster.
func (m *Module) BoardChanged(old, next *podium.Board) {
	if old != nil && (old.GroupBoard != nil || old.GroupSet != nil) || next != nil && (next.GroupBoard != nil || next.GroupSet != nil) {
		m.imu.Lock()
		m.idx = nil
		m.imu.Unlock()
	}
	if old != nil && old.GroupSet != nil && next == nil {
		m.mu.Lock()
		for bs := range m.sets {
			if bs.Def().ID == old.ID && m.eng.Lookup(old.ID) != bs {
				delete(m.sets, bs)
			}
		}
		m.mu.Unlock()
	}
}

// LockSet adds to the boards a write locks (shared mode) the group boards
// that read them and what those read: a score on a source locks the group
// boards over it and their sets; a membership change on a set locks the
// group boards over the set and their sources; a write of a group board
// (its recompute) locks its set and source.
func (m *Module) LockSet(ids []string) []string {
	x := m.index()
	if len(x.defs) == 0 {
		return ids
	}
	out := slices.Clone(ids)
	for _, id := range ids {
		if d := x.defs[id]; d != nil {
			out = append(out, d.Set, d.Source)
		}
		for _, gb := range x.bySource[id] {
			out = append(out, gb, x.defs[gb].Set)
		}
		for _, gb := range x.bySet[id] {
			out = append(out, gb, x.defs[gb].Source)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// PutLocks locks, with a PUT of a group board, its set and its source, so
// that neither is deleted or changed while it is checked against them.
func (m *Module) PutLocks(u *podium.BoardUpdate, cur *podium.Board) []string {
	gb := u.GroupBoard
	if gb == nil && cur != nil {
		gb = cur.GroupBoard
	}
	if gb == nil {
		return nil
	}
	var ids []string
	for _, id := range []string{gb.Set, gb.Source} {
		if podium.ValidBoardID(id) && id != u.ID {
			ids = append(ids, id)
		}
	}
	return ids
}

// CheckPut checks a board about to be stored against the groups: a group
// board's set and source; a board's role, fixed when it is made; a
// source's keys and cadence, which a group board relies on; an aggregate,
// which may not read a group set or board (its rows would not follow the
// groups' writes).
func (m *Module) CheckPut(b *podium.Board) error {
	var cur *podium.Board
	if bs := m.eng.Lookup(b.ID); bs != nil {
		cur = bs.Def()
	}
	if cur != nil && ((cur.GroupSet != nil) != (b.GroupSet != nil) || (cur.GroupBoard != nil) != (b.GroupBoard != nil)) {
		return podium.Errorf(podium.ECodeConflict, "board %q: whether a board is a group set or a group board is fixed when it is made; delete it and make a new one", b.ID)
	}
	if a := b.Aggregate; a != nil {
		for _, s := range a.Sources {
			if bs := m.eng.Lookup(s.Board); bs != nil && (bs.Def().GroupSet != nil || bs.Def().GroupBoard != nil) {
				return podium.Errorf(podium.ECodeInvalid, "aggregate %q: board %q is a group set or group board, which an aggregate cannot read", b.ID, s.Board)
			}
		}
	}
	if gb := b.GroupBoard; gb != nil {
		set := m.eng.Lookup(gb.Set)
		if set == nil || set.Def().GroupSet == nil {
			return podium.Errorf(podium.ECodeInvalid, "group_board.set: board %q is not a group set", gb.Set)
		}
		src := m.eng.Lookup(gb.Source)
		if src == nil {
			return podium.Errorf(podium.ECodeInvalid, "group_board.source: board %q does not exist", gb.Source)
		}
		if err := compatible(b, src.Def()); err != nil {
			return err
		}
		if gb.K > set.Def().GroupSet.MaxMembers {
			return podium.Errorf(podium.ECodeInvalid, "group_board.k (%d) is above the set's max_members (%d)", gb.K, set.Def().GroupSet.MaxMembers)
		}
	}
	for _, id := range m.index().bySource[b.ID] {
		gbs := m.eng.Lookup(id)
		if gbs == nil {
			continue
		}
		if err := compatible(gbs.Def(), b); err != nil {
			return podium.Errorf(podium.ECodeConflict, "board %q is the source of group board %q, which this change would break (%s); change or delete the group board first", b.ID, id, podium.ErrorMessage(err))
		}
	}
	return nil
}

// compatible checks that group board gb can read source src.
func compatible(gb, src *podium.Board) error {
	switch {
	case src.GroupSet != nil || src.GroupBoard != nil || src.Aggregate != nil:
		return podium.Errorf(podium.ECodeInvalid, "group_board.source %q must be a board that takes scores (not a group set, group board or aggregate)", src.ID)
	case !slices.Equal(gb.Orders(), src.Orders()):
		return podium.Errorf(podium.ECodeInvalid, "group board %q must have the keys of its source %q: as many, in the same orders", gb.ID, src.ID)
	case !gb.SameCadence(src):
		return podium.Errorf(podium.ECodeInvalid, "group board %q must reset as its source %q does", gb.ID, src.ID)
	}
	return nil
}

// CheckDelete refuses to delete a set or a source that a group board
// reads.
func (m *Module) CheckDelete(id string) error {
	x := m.index()
	if l := x.bySet[id]; len(l) > 0 {
		return podium.Errorf(podium.ECodeConflict, "board %q is the set of group board %q; delete the group board first", id, l[0])
	}
	if l := x.bySource[id]; len(l) > 0 {
		return podium.Errorf(podium.ECodeConflict, "board %q is the source of group board %q; delete the group board first", id, l[0])
	}
	return nil
}

// BoardParts removes a deleted set's memberships in the transaction that
// deletes it.
func (m *Module) BoardParts(store podium.Store, old, next *podium.Board) []podium.Part {
	if next != nil || old == nil || old.GroupSet == nil {
		return nil
	}
	st, ok := store.(podium.GroupStore)
	if !ok {
		return nil
	}
	return []podium.Part{st.GroupPart(&podium.GroupBatch{DeleteSets: []string{old.ID}})}
}

// BoardStored implements engine.BoardPartMaker; nothing to do.
func (m *Module) BoardStored(old, next *podium.Board, err error) {}

// BoardPut recomputes a group board after a PUT stored it, before the PUT
// is answered: a new group board starts with the entries its set and
// source imply, and a changed one drops its old values.
func (m *Module) BoardPut(ctx context.Context, def *podium.Board) error {
	if def.GroupBoard == nil {
		return nil
	}
	err := m.Recompute(def.ID)
	if err == nil {
		return nil
	}
	if podium.ErrorCode(err) == podium.ECodeInternal {
		m.log.Error("recompute group board", "board", def.ID, "err", err)
		return podium.Errorf(podium.ECodeUnavailable, "the board was saved, but its group entries could not be computed; PUT it again to retry")
	}
	return podium.Errorf(podium.ErrorCode(err), "the board was saved, but its group entries could not be computed: %s. PUT it again to retry", podium.ErrorMessage(err))
}
