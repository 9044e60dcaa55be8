// Package league is the module of leagues (issue 21; the definition,
// podium.League, is a part of a board at the root): placement of a
// player's first score of a period in a cohort of their tier (place.go),
// the settlement that promotes and relegates at each period end, its lease
// and scheduler (settle.go), and the reads of cohorts, tiers and histories
// (read.go). The design is in docs/ARCHITECTURE.md, "Leagues".
//
// A league is one board: players submit to it as to any board, and the
// entries rank on it as on any board. What the module adds is, per period,
// each player's (tier, cohort), a row written in the transaction of the
// player's first accepted score of the period, and a cohort's standings are
// its members' entries on the board in the board's order. So a submission
// costs what it costs on a plain board, plus one row the first time a
// player plays in a period.
//
// The module keeps, per league board, the placements of the current
// period (state): the members, the count per tier, and the tiers players
// start the period with, loaded from the store on first use and holding
// placements computed but not yet committed, as the pending overlay does
// for entries. A failed commit drops the state of its boards (Finisher;
// Forgetter after a pipeline failure) and the next use reloads it. In
// shared mode the writer holds the board's lock when it computes and every
// placement is written under it, so reading the placements numbered after
// the state's last (CatchUpper) brings the state up to date before the
// group places anyone: cohort = placements so far in the tier / size is the
// same on every node.
package league

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Config configures the module; the zero value means the defaults.
type Config struct {
	// SettleEvery is how often the settlement scheduler looks for ended
	// periods to settle (default 1s; negative: no scheduler, for tests
	// and tools that call SettleDue themselves).
	SettleEvery time.Duration
}

// Module is the leagues module. Lock order: docs/LOCKS.md.
type Module struct {
	host  engine.Host
	eng   *engine.Engine
	store podium.Store
	log   *slog.Logger

	every  time.Duration // scheduler period; < 0: no scheduler
	passes atomic.Uint64 // the scheduler's completed looks

	// settleMu makes this node's settlers (the scheduler, admins) take
	// turns under the node's one lease.
	settleMu sync.Mutex

	mu sync.Mutex
	// states holds, per league board, the placements of its current
	// period (pending ones included).
	states map[*engine.BoardState]*state
	// failed holds when the scheduler last failed to settle a board: it
	// waits settleRetry before trying that one again.
	failed map[string]time.Time

	// prepared, if set (tests), is called after each settlement's
	// preparation off the writer, before its commit.
	prepared func(try int)
}

// New returns the module configured by c; it takes the engine and its
// store at Provision.
func New(c Config) *Module {
	if c.SettleEvery == 0 {
		c.SettleEvery = time.Second
	}
	return &Module{every: c.SettleEvery, states: map[*engine.BoardState]*state{}, failed: map[string]time.Time{}}
}

var (
	_ engine.Provisioner = (*Module)(nil)
	_ engine.ScoreGuard  = (*Module)(nil)
	_ engine.CatchUpper  = (*Module)(nil)
	_ engine.PartMaker   = (*Module)(nil)
	_ engine.Finisher    = (*Module)(nil)
	_ engine.Forgetter   = (*Module)(nil)
	_ engine.BoardGuard  = (*Module)(nil)
	_ engine.Starter     = (*Module)(nil)
)

// Name implements engine.Module.
func (m *Module) Name() string { return "league" }

// Provision takes the engine and its store, and registers the
// scheduler's metric.
func (m *Module) Provision(h engine.Host) {
	m.host, m.eng, m.store, m.log = h, h.Engine(), h.Store(), h.Logger()
	if reg := h.Registerer(); reg != nil {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "podium_league_settle_passes_total",
			Help: "Looks the league settlement scheduler took for ended periods (one every --settle-every).",
		}, func() float64 { return float64(m.passes.Load()) }))
	}
}

// Passes is the number of looks the scheduler completed (tests wait on it).
func (m *Module) Passes() uint64 { return m.passes.Load() }

func (m *Module) leagueStore() (podium.LeagueStore, error) {
	ls, ok := m.store.(podium.LeagueStore)
	if !ok {
		return nil, podium.Errorf(podium.ECodeUnavailable, "this store does not keep leagues")
	}
	return ls, nil
}

// rows is what the module keeps with a group: its placements, or a
// settlement's rows (a group of its own).
type rows struct {
	boards  []*engine.BoardState // boards placed on (to drop on failure)
	batch   podium.LeagueBatch
	settle  *podium.LeagueBatch
	settled string // the board a settlement settled
}

func (m *Module) rows(g *engine.Group) *rows {
	r, _ := g.Slot(m).(*rows)
	if r == nil {
		r = &rows{}
		g.SetSlot(m, r)
	}
	return r
}

// Parts gives the store the placements of the groups sharing a
// transaction, and a settlement's rows, as one fencing part (a
// settlement's group commits alone, so its fence is the part's).
func (m *Module) Parts(store podium.Store, gs []*engine.Group) []podium.Part {
	var lb *podium.LeagueBatch
	for _, g := range gs {
		r, _ := g.Slot(m).(*rows)
		if r == nil {
			continue
		}
		if r.settle != nil {
			if lb == nil {
				lb = r.settle
			} else {
				lb = merge(lb, r.settle)
				lb.Fence, lb.Board = r.settle.Fence, r.settle.Board
			}
		}
		if r.batch.Len() > 0 {
			if lb == nil {
				lb = &podium.LeagueBatch{}
			}
			lb = merge(lb, &r.batch)
		}
	}
	if lb.Len() == 0 {
		return nil
	}
	ls, ok := store.(podium.LeagueStore)
	if !ok {
		return nil // cannot arise: a placement needs the store's leagues
	}
	return []podium.Part{ls.LeaguePart(lb)}
}

// merge appends src's periods and members to a copy of dst (a
// settlement's results and tiers stay with the settlement's batch).
func merge(dst, src *podium.LeagueBatch) *podium.LeagueBatch {
	out := *dst
	out.Periods = append(append([]podium.LeaguePeriod(nil), dst.Periods...), src.Periods...)
	out.Members = append(append([]podium.LeagueMember(nil), dst.Members...), src.Members...)
	if src.Results != nil {
		out.Results, out.Tiers = src.Results, src.Tiers
	}
	return &out
}

// Finished marks a committed group's placements durable, or drops the
// states of a failed group's boards (reloaded on next use). A committed
// settlement drops its board's state: the tiers players start the next
// period with changed.
func (m *Module) Finished(g *engine.Group, err error) {
	r, _ := g.Slot(m).(*rows)
	if r == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.settled != "" && err == nil {
		if bs := m.eng.Lookup(r.settled); bs != nil {
			delete(m.states, bs)
		}
		delete(m.failed, r.settled)
	}
	for _, bs := range r.boards {
		if err != nil {
			delete(m.states, bs)
		}
	}
	if err != nil {
		return
	}
	for _, mb := range r.batch.Members {
		bs := m.eng.Lookup(mb.Board)
		if bs == nil {
			continue
		}
		if st := m.states[bs]; st != nil && st.period.ID == mb.Period {
			st.durable = max(st.durable, mb.Seq)
		}
	}
}

// Forget drops every state: pending placements are gone with the groups
// that failed.
func (m *Module) Forget() {
	m.mu.Lock()
	clear(m.states)
	m.mu.Unlock()
}

// CatchUp brings a loaded state up to the store (shared mode, with the
// board's lock held: the placements numbered after the state's last).
func (m *Module) CatchUp(ctx context.Context, id string) error {
	bs := m.eng.Lookup(id)
	if bs == nil || bs.Def().League == nil {
		return nil
	}
	m.mu.Lock()
	st := m.states[bs]
	m.mu.Unlock()
	if st == nil || !st.ready {
		return nil // loaded on first use
	}
	ls, err := m.leagueStore()
	if err != nil {
		return err
	}
	list, err := ls.LeagueMembers(ctx, id, st.period.ID, st.durable)
	if err != nil {
		return err
	}
	m.mu.Lock()
	for _, mb := range list {
		st.add(mb)
		st.durable = max(st.durable, mb.Seq)
	}
	if st.seq == 0 {
		// No one placed yet: the tiers it loaded may predate another
		// node's restore (restore.go), which only changes tiers before
		// a period has placements. Reloaded at its next use, which is
		// at most once per write until the period's first placement.
		delete(m.states, bs)
	}
	m.mu.Unlock()
	return nil
}

// CheckPut refuses a change of a league's tiers or cohort size once it
// has placed players, turning a league back into a plain board, and
// turning a board with entries into a league (engine.BoardGuard).
func (m *Module) CheckPut(next *podium.Board) error {
	cur := m.eng.Lookup(next.ID)
	if next.League == nil {
		if cur != nil && cur.Def().League != nil {
			return podium.Errorf(podium.ECodeConflict, "board %q is a league: it stays one (delete it to start over)", next.ID)
		}
		return nil
	}
	if cur == nil {
		return nil
	}
	old := cur.Def().League
	if old == nil {
		if cur.HasEntries() {
			return podium.Errorf(podium.ECodeConflict, "board %q has entries: a board becomes a league only while it has none", next.ID)
		}
		return nil
	}
	if old.SameShape(next.League) {
		return nil
	}
	ls, err := m.leagueStore()
	if err != nil {
		return err
	}
	ps, err := ls.LeaguePeriods(context.Background(), next.ID)
	if err != nil {
		m.log.Error("read league periods", "board", next.ID, "err", err)
		return podium.Errorf(podium.ECodeUnavailable, "could not read the league's periods; nothing was changed, retry shortly")
	}
	if len(ps) > 0 {
		return podium.Errorf(podium.ECodeConflict, "league %q has placed players: its tiers' names and cohort size cannot change", next.ID)
	}
	return nil
}

// CheckDelete lets a league be deleted (its rows go with it).
func (m *Module) CheckDelete(string) error { return nil }
