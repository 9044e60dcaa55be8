// Package groups is the module of groups and group boards (issue 21,
// part 2): clans, teams or guilds of players, and boards that rank the
// groups by their members' entries on a source board.
//
// A group set is a board (podium.GroupSet) whose entries are its groups,
// ranked by their number of members; its definition holds the caps. The
// memberships are the set's log of joins and leaves (podium.GroupChange,
// numbered densely per set), stored as a part of the group commit that
// makes them, and kept in memory per set (a roster), loaded on first use.
//
// A group board (podium.GroupBoard) ranks the groups of a set by the sum or
// the average of their best k members' entries on a source board, or by
// their best member's. Its entries are written, not computed on read, as
// aggregate boards' are: a member's score moves the group's entry in the
// same group commit (an engine.Effect), and a join or leave moves it in the
// commit of the change (a Work on the writer). A row is logged only when
// the group's value changes, so an entry's time is when the group reached
// its value: ties go to whoever got there first. Everything that works on
// a board then works on a group board: checkpoints, replay, followers, live
// streams, check and rebuild of its entries from its log.
//
// Several nodes (shared mode): a membership change locks its set, every
// group board over the set and their sources; a score on a source locks
// the group boards over it and their sets (LockSet). Under the set's lock
// the module reads the changes other nodes committed (CatchUp), so caps
// hold exactly and a join on one node and a score on another are ordered:
// the second computes from the first's committed state.
package groups

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Module is the groups module.
type Module struct {
	eng    *engine.Engine
	log    *slog.Logger
	store  podium.GroupStore // nil: the store keeps no groups
	shared bool              // several nodes write the store (shared mode)

	// mu guards sets and every roster in it. The writer changes them;
	// readers take mu. Lock order: docs/LOCKS.md.
	mu   sync.Mutex
	sets map[*engine.BoardState]*roster

	// imu guards idx, which group boards read which boards, rebuilt after
	// a group board or set is made, changed or deleted.
	imu sync.Mutex
	idx *index // nil: to rebuild
}

// New returns the module.
func New() *Module { return &Module{sets: map[*engine.BoardState]*roster{}} }

var (
	_ engine.Provisioner    = (*Module)(nil)
	_ engine.Effect         = (*Module)(nil)
	_ engine.ScoreGuard     = (*Module)(nil)
	_ engine.BoardWatcher   = (*Module)(nil)
	_ engine.BoardGuard     = (*Module)(nil)
	_ engine.BoardPutter    = (*Module)(nil)
	_ engine.BoardPartMaker = (*Module)(nil)
	_ engine.Locker         = (*Module)(nil)
	_ engine.RestoreGuard   = (*Module)(nil)
	_ engine.PartMaker      = (*Module)(nil)
	_ engine.Finisher       = (*Module)(nil)
	_ engine.Forgetter      = (*Module)(nil)
	_ engine.CatchUpper     = (*Module)(nil)
	_ engine.IndexChecker   = (*Module)(nil)
)

// Name implements engine.Module.
func (m *Module) Name() string { return "groups" }

// Provision keeps the engine, the store's groups and the logger.
func (m *Module) Provision(h engine.Host) {
	m.eng, m.log = h.Engine(), h.Logger()
	m.store, _ = h.Store().(podium.GroupStore)
	m.shared = h.Node() != "local"
}

// member is one player's membership of a group.
type member struct {
	n  int64 // the change that made it
	at int64 // joined at, ms
}

// roster is the memberships of one set.
type roster struct {
	groups  map[string]map[string]member // group -> player -> membership
	players map[string][]string          // player -> groups, sorted
	n       int64                        // the highest change number, pending included
	durable int64                        // the highest committed
}

func newRoster() *roster {
	return &roster{groups: map[string]map[string]member{}, players: map[string][]string{}}
}

// apply applies one change; the caller holds m.mu.
func (r *roster) apply(c podium.GroupChange) {
	r.n = max(r.n, c.N)
	if c.Join {
		ms := r.groups[c.Group]
		if ms == nil {
			ms = map[string]member{}
			r.groups[c.Group] = ms
		}
		if _, ok := ms[c.Player]; ok {
			return
		}
		ms[c.Player] = member{n: c.N, at: podium.Millis(c.At)}
		gs := r.players[c.Player]
		i, _ := slices.BinarySearch(gs, c.Group)
		r.players[c.Player] = slices.Insert(gs, i, c.Group)
		return
	}
	ms := r.groups[c.Group]
	if _, ok := ms[c.Player]; !ok {
		return
	}
	delete(ms, c.Player)
	if len(ms) == 0 {
		delete(r.groups, c.Group)
	}
	gs := r.players[c.Player]
	if i, ok := slices.BinarySearch(gs, c.Group); ok {
		gs = slices.Delete(gs, i, i+1)
	}
	if len(gs) == 0 {
		delete(r.players, c.Player)
	} else {
		r.players[c.Player] = gs
	}
}

// groupStore returns the store's groups, or why there are none.
func (m *Module) groupStore() (podium.GroupStore, error) {
	if m.store == nil {
		return nil, podium.Errorf(podium.ECodeUnavailable, "this store keeps no groups")
	}
	return m.store, nil
}

// rosterOf returns the roster of a set board, loading it if needed; on
// the writer only.
func (m *Module) rosterOf(bs *engine.BoardState) (*roster, error) {
	m.mu.Lock()
	r := m.sets[bs]
	m.mu.Unlock()
	if r != nil {
		return r, nil
	}
	st, err := m.groupStore()
	if err != nil {
		return nil, err
	}
	list, err := st.GroupChanges(context.Background(), bs.Def().ID, 0)
	if err != nil {
		m.log.Error("read group memberships", "set", bs.Def().ID, "err", err)
		return nil, podium.Errorf(podium.ECodeUnavailable, "could not read the group memberships; nothing was applied, retry shortly")
	}
	r = newRoster()
	for _, c := range list {
		r.apply(c)
	}
	r.durable = r.n
	m.mu.Lock()
	m.sets[bs] = r
	m.mu.Unlock()
	return r, nil
}

// CatchUp brings a loaded roster up to the store (shared mode, with the
// set's lock held: the changes numbered after the roster's last).
func (m *Module) CatchUp(ctx context.Context, id string) error {
	bs := m.eng.Lookup(id)
	if bs == nil || bs.Def().GroupSet == nil {
		return nil
	}
	m.mu.Lock()
	r := m.sets[bs]
	m.mu.Unlock()
	if r == nil {
		return nil // loaded on first use
	}
	st, err := m.groupStore()
	if err != nil {
		return err
	}
	list, err := st.GroupChanges(ctx, id, r.durable)
	if err != nil {
		return err
	}
	m.mu.Lock()
	for _, c := range list {
		r.apply(c)
		r.durable = max(r.durable, c.N)
	}
	m.mu.Unlock()
	return nil
}

// rows is what a group commit holds of the module: its membership
// changes.
type rows struct {
	changes []podium.GroupChange
}

func (m *Module) rows(g *engine.Group) *rows {
	r, _ := g.Slot(m).(*rows)
	if r == nil {
		r = &rows{}
		g.SetSlot(m, r)
	}
	return r
}

// Parts gives the store the membership changes of the groups sharing a
// transaction, as one part.
func (m *Module) Parts(store podium.Store, gs []*engine.Group) []podium.Part {
	var b *podium.GroupBatch
	for _, g := range gs {
		r, _ := g.Slot(m).(*rows)
		if r == nil || len(r.changes) == 0 {
			continue
		}
		if b == nil {
			b = &podium.GroupBatch{}
		}
		b.Changes = append(b.Changes, r.changes...)
	}
	if b == nil {
		return nil
	}
	st, ok := store.(podium.GroupStore)
	if !ok {
		return nil // cannot arise: a change needs the store's groups
	}
	return []podium.Part{st.GroupPart(b)}
}

// Finished marks a committed group's changes durable, or drops the
// rosters they touched (reloaded on next use) when it failed.
func (m *Module) Finished(g *engine.Group, err error) {
	r, _ := g.Slot(m).(*rows)
	if r == nil || len(r.changes) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range r.changes {
		bs := m.eng.Lookup(c.Set)
		if bs == nil {
			continue
		}
		if err != nil {
			delete(m.sets, bs)
			continue
		}
		if ro := m.sets[bs]; ro != nil {
			ro.durable = max(ro.durable, c.N)
		}
	}
}

// Forget drops every roster after a failed commit: each is reloaded from
// the store on next use.
func (m *Module) Forget() {
	m.mu.Lock()
	clear(m.sets)
	m.mu.Unlock()
}

// CheckScore refuses scores on group sets and group boards: podium writes
// their entries.
func (m *Module) CheckScore(g *engine.Group, c *engine.Candidate) error {
	switch {
	case c.Def.GroupSet != nil:
		return podium.Errorf(podium.ECodeConflict, "board %q is a group set: its entries are its groups, written by joins and leaves", c.Def.ID)
	case c.Def.GroupBoard != nil:
		return podium.Errorf(podium.ECodeConflict, "board %q is a group board: its entries are computed from its members' entries on %q", c.Def.ID, c.Def.GroupBoard.Source)
	}
	return nil
}

// ScoreLogged implements engine.ScoreGuard; nothing to do.
func (m *Module) ScoreLogged(*engine.Group, *engine.Candidate) {}

// RestoreRefusal refuses restores into group sets and group boards.
func (m *Module) RestoreRefusal(def *podium.Board) string {
	switch {
	case def.GroupSet != nil:
		return "is a group set: its entries are written by joins and leaves"
	case def.GroupBoard != nil:
		return "is a group board: its entries are computed from its members' entries"
	case len(m.index().bySource[def.ID]) > 0:
		return "is the source of a group board, which a restore would not recompute"
	}
	return ""
}
