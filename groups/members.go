package groups

import (
	"context"
	"slices"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// ChangeResult is the answer to a join or a leave.
type ChangeResult struct {
	Set     string
	Group   string
	Player  string
	Already bool  // a join of a member, nothing changed
	N       int64 // the change's number (0: nothing changed)
	Members int   // the group's members after it
}

// Join adds player to group grp of set, making the group if it has no
// members yet. Errors: ECodeBoardNotFound, ECodeNotFound (not a group
// set), ECodeInvalid (bad ids), ECodeConflict (a cap: the group's
// members, the player's groups, the set's groups), ECodeUnavailable.
func (m *Module) Join(ctx context.Context, set, grp, player string) (ChangeResult, error) {
	return m.change(ctx, set, grp, player, true)
}

// Leave takes player out of group grp of set; a group left with no
// members is gone. Errors: ECodeBoardNotFound, ECodeNotFound (not a
// group set, or not a member), ECodeInvalid, ECodeUnavailable.
func (m *Module) Leave(ctx context.Context, set, grp, player string) (ChangeResult, error) {
	return m.change(ctx, set, grp, player, false)
}

func (m *Module) change(ctx context.Context, set, grp, player string, join bool) (ChangeResult, error) {
	if err := podium.ValidGroupID(grp); err != nil {
		return ChangeResult{}, err
	}
	if err := podium.ValidPlayerID(player); err != nil {
		return ChangeResult{}, err
	}
	res := ChangeResult{Set: set, Group: grp, Player: player}
	w := &engine.Work{Boards: []string{set}, Compute: func(g *engine.Group) error {
		return m.compute(g, &res, join)
	}}
	if err := m.eng.Do(ctx, w); err != nil {
		return ChangeResult{}, err
	}
	return res, nil
}

// setOf returns a set board's state and roster in a group.
func (m *Module) setOf(g *engine.Group, set string) (*engine.BoardState, *roster, error) {
	bs := g.Board(set)
	if bs == nil {
		return nil, nil, podium.BoardNotFound(set)
	}
	if bs.Def().GroupSet == nil {
		return nil, nil, podium.Errorf(podium.ECodeNotFound, "board %q is not a group set", set)
	}
	r, err := m.rosterOf(bs)
	return bs, r, err
}

// compute computes a join or a leave in g: every row is computed before
// any is added, so a refusal leaves the group as it was.
func (m *Module) compute(g *engine.Group, res *ChangeResult, join bool) error {
	bs, r, err := m.setOf(g, res.Set)
	if err != nil {
		return err
	}
	caps := bs.Def().GroupSet
	m.mu.Lock()
	ms := r.groups[res.Group]
	_, in := ms[res.Player]
	count, mine, groups := len(ms), len(r.players[res.Player]), len(r.groups)
	m.mu.Unlock()
	plus, minus, next := "", "", count
	switch {
	case join && in:
		res.Already, res.Members = true, count
		return nil
	case join && count >= caps.MaxMembers:
		return podium.Errorf(podium.ECodeConflict, "group %q of set %q is full (%d members)", res.Group, res.Set, caps.MaxMembers)
	case join && mine >= caps.MaxPerPlayer:
		return podium.Errorf(podium.ECodeConflict, "player %q is already in %d groups of set %q, the most a player may be in", res.Player, caps.MaxPerPlayer, res.Set)
	case join && count == 0 && groups >= caps.MaxGroups:
		return podium.Errorf(podium.ECodeConflict, "set %q has %d groups, the most it may have", res.Set, caps.MaxGroups)
	case join:
		plus, next = res.Player, count+1
	case !in:
		return podium.Errorf(podium.ECodeNotFound, "player %q is not a member of group %q of set %q", res.Player, res.Group, res.Set)
	default:
		minus, next = res.Player, count-1
	}
	// The set's entry: the group's number of members (none: no entry).
	if err := g.Hold(bs, podium.PeriodAll); err != nil {
		return err
	}
	gpid := g.Intern(res.Group)
	writes := []engine.Write{{Board: bs, Period: podium.PeriodAll, Player: res.Group, PID: gpid}}
	if next > 0 {
		writes[0].Value = engine.Value{Exists: true}
		writes[0].Value.Entry.Player, writes[0].Value.Entry.At = gpid, g.Now().UnixMilli()
		writes[0].Value.Entry.Hidden = g.Hidden(gpid)
		writes[0].Value.Entry.Keys[0] = int64(next)
	}
	// The group's entry on every group board of the set, in its period
	// now.
	members := m.memberIDs(r, res.Group, plus, minus)
	x := m.index()
	for _, id := range x.bySet[res.Set] {
		gb, src := g.Board(id), g.Board(x.defs[id].Source)
		if gb == nil || src == nil {
			continue
		}
		period := podium.PeriodAt(gb.Def().Reset, g.Now()).ID
		w, changed, err := m.recompute(g, gb, src, period, res.Group, members, 0, nil)
		if err != nil {
			return err
		}
		if changed {
			writes = append(writes, w)
		}
	}
	// Nothing can fail from here.
	m.mu.Lock()
	c := podium.GroupChange{Set: res.Set, N: r.n + 1, Group: res.Group, Player: res.Player, Join: join, At: g.Now()}
	r.apply(c)
	m.mu.Unlock()
	rw := m.rows(g)
	rw.changes = append(rw.changes, c)
	for _, w := range writes {
		g.Write(w)
	}
	res.N, res.Members = c.N, next
	return nil
}

// Member is one member of a group.
type Member struct {
	Player   string
	N        int64 // the join's number in the set
	JoinedAt time.Time
}

// Members lists the members of group grp of set in the order they joined,
// from offset, at most limit, and their number. Read on the writer (in
// shared mode under the set's lock, caught up), so every node answers the
// same. Errors: ECodeBoardNotFound, ECodeNotFound (not a group set),
// ECodeInvalid, ECodeUnavailable.
func (m *Module) Members(ctx context.Context, set, grp string, offset, limit int) ([]Member, int, error) {
	if err := podium.ValidGroupID(grp); err != nil {
		return nil, 0, err
	}
	var all []Member
	err := m.read(ctx, set, func(r *roster) {
		for p, mb := range r.groups[grp] {
			all = append(all, Member{Player: p, N: mb.n, JoinedAt: podium.FromMillis(mb.at)})
		}
	})
	if err != nil {
		return nil, 0, err
	}
	slices.SortFunc(all, func(a, b Member) int { return int(a.N - b.N) })
	total := len(all)
	if offset > total {
		offset = total
	}
	all = all[offset:]
	if len(all) > limit {
		all = all[:limit]
	}
	return all, total, nil
}

// GroupsOf lists the groups of set that player is in, sorted. Errors: as
// Members.
func (m *Module) GroupsOf(ctx context.Context, set, player string) ([]string, error) {
	if err := podium.ValidPlayerRef(player); err != nil {
		return nil, err
	}
	var out []string
	err := m.read(ctx, set, func(r *roster) { out = slices.Clone(r.players[player]) })
	return out, err
}

// MemberList returns every member of group grp of set, for the members
// view of a board (GET /v1/boards/{board}/entries?group=set/grp): at most
// the set's max_members, so at most podium.MaxGroupMembers.
func (m *Module) MemberList(ctx context.Context, set, grp string) ([]string, error) {
	ms, _, err := m.Members(ctx, set, grp, 0, podium.MaxGroupMembers)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ms))
	for i, mb := range ms {
		out[i] = mb.Player
	}
	return out, nil
}

// read runs fn over the roster of a set on the writer, in a group of its
// own commit (nothing is written): in shared mode under the set's lock,
// caught up with the other nodes' changes; its answer is given once the
// groups before it are committed, so it never shows a change that is not
// durable.
func (m *Module) read(ctx context.Context, set string, fn func(r *roster)) error {
	return m.eng.Do(ctx, &engine.Work{Boards: []string{set}, Compute: func(g *engine.Group) error {
		_, r, err := m.setOf(g, set)
		if err != nil {
			return err
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		fn(r)
		return nil
	}})
}
