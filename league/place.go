package league

import (
	"context"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Placement. A player's first accepted score of a period places them:
// their tier is the one the last settlement left them in (the lowest for a
// new player), and their cohort is the number of players placed in that
// tier so far this period divided by the cohort size. So a tier's cohorts
// fill one after the other, each to exactly the size before the next
// opens (only the last is ever short), and no cohort can exceed the size:
// the count is the writer's, under the board's lock in shared mode,
// caught up with every other node's placements first. The same sequence
// of first scores gives the same cohorts on every node and after a
// restart (the count is the store's). docs/ARCHITECTURE.md, "Leagues",
// says why this rule rather than another.

// state is what the module keeps of a league's current period.
type state struct {
	period podium.Period
	// ready: every earlier period with placements is settled, and tiers
	// holds what the settlements left. When false, checked says when the
	// store was last asked (a first score of the period is refused until
	// the previous period is settled).
	ready   bool
	checked time.Time
	tiers   map[string]int    // player -> tier at the period's start (absent: 0)
	members map[string]placed // this period's placements, pending included
	counts  []int64           // placements per tier, pending included
	seq     int64             // highest seq assigned, pending included
	durable int64             // highest seq committed
}

type placed struct {
	tier, cohort int
}

// add records a placement read from the store (or made here).
func (st *state) add(mb podium.LeagueMember) {
	if _, ok := st.members[mb.Player]; ok {
		return
	}
	st.members[mb.Player] = placed{mb.Tier, mb.Cohort}
	for len(st.counts) <= mb.Tier {
		st.counts = append(st.counts, 0)
	}
	st.counts[mb.Tier]++
	st.seq = max(st.seq, mb.Seq)
}

// recheck is how long a league whose previous period is not settled yet
// waits before it asks the store again (another node may settle it).
const recheck = 200 * time.Millisecond

// stateOf returns the state of a league's period at now, loading it if
// needed; on the writer only. A league whose earlier period is not
// settled yet is ECodeLeagueSettling.
func (m *Module) stateOf(bs *engine.BoardState, def *podium.Board, now time.Time) (*state, error) {
	p := podium.PeriodAt(def.Reset, now)
	m.mu.Lock()
	st := m.states[bs]
	m.mu.Unlock()
	if st != nil && st.period.ID == p.ID {
		if st.ready {
			return st, nil
		}
		if time.Since(st.checked) < recheck {
			return nil, settlingError(def.ID)
		}
	}
	ls, err := m.leagueStore()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	unavailable := func(what string, err error) error {
		m.log.Error("read "+what, "board", def.ID, "err", err)
		return podium.Errorf(podium.ECodeUnavailable, "could not read the league's %s; nothing was applied, retry shortly", what)
	}
	ps, err := ls.LeaguePeriods(ctx, def.ID)
	if err != nil {
		return nil, unavailable("periods", err)
	}
	for _, lp := range ps {
		if lp.Start.Before(p.Start) && !lp.Settled() {
			m.mu.Lock()
			m.states[bs] = &state{period: p, checked: time.Now()}
			m.mu.Unlock()
			return nil, settlingError(def.ID)
		}
	}
	tiers, err := ls.LeagueTiers(ctx, def.ID)
	if err != nil {
		return nil, unavailable("tiers", err)
	}
	members, err := ls.LeagueMembers(ctx, def.ID, p.ID, 0)
	if err != nil {
		return nil, unavailable("placements", err)
	}
	st = &state{period: p, ready: true, tiers: make(map[string]int, len(tiers)), members: make(map[string]placed, len(members)),
		counts: make([]int64, len(def.League.Tiers))}
	for _, t := range tiers {
		st.tiers[t.Player] = t.Tier
	}
	for _, mb := range members {
		st.add(mb)
	}
	st.durable = st.seq
	m.mu.Lock()
	m.states[bs] = st
	m.mu.Unlock()
	return st, nil
}

func settlingError(id string) error {
	return podium.Errorf(podium.ECodeLeagueSettling, "league %q is settling its previous period: a player's tier for this one is not known yet; retry in a second", id)
}

// CheckScore admits a score on a league board once the league's earlier
// periods are settled (engine.ScoreGuard): a player's first score of a
// period needs the tier the last settlement left them in.
func (m *Module) CheckScore(g *engine.Group, c *engine.Candidate) error {
	if c.Def.League == nil {
		return nil
	}
	if c.Period != podium.PeriodAt(c.Def.Reset, g.Now()).ID {
		return podium.Errorf(podium.ECodeConflict, "league %q takes scores in its current period only", c.Def.ID)
	}
	_, err := m.stateOf(c.Board, c.Def, g.Now())
	return err
}

// ScoreLogged places the player of a logged score if it is their first of
// the period (engine.ScoreGuard).
func (m *Module) ScoreLogged(g *engine.Group, c *engine.Candidate) {
	l := c.Def.League
	if l == nil {
		return
	}
	st, err := m.stateOf(c.Board, c.Def, g.Now()) // loaded by CheckScore
	if err != nil {
		return
	}
	m.mu.Lock()
	if _, ok := st.members[c.Player]; ok {
		m.mu.Unlock()
		return
	}
	tier := min(max(st.tiers[c.Player], 0), len(l.Tiers)-1)
	for len(st.counts) <= tier {
		st.counts = append(st.counts, 0)
	}
	cohort := int(st.counts[tier] / int64(l.CohortSize))
	st.counts[tier]++
	st.seq++
	seq := st.seq
	st.members[c.Player] = placed{tier, cohort}
	m.mu.Unlock()
	r := m.rows(g)
	r.boards = append(r.boards, c.Board)
	if seq == 1 {
		r.batch.Periods = append(r.batch.Periods, podium.LeaguePeriod{Board: c.Def.ID, Period: st.period.ID, Start: st.period.Start})
	}
	r.batch.Members = append(r.batch.Members, podium.LeagueMember{Board: c.Def.ID, Period: st.period.ID, Player: c.Player,
		Tier: tier, Cohort: cohort, Seq: seq, At: g.Now()})
}
