package league

import (
	"context"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// The reads: a player's standing (tier and cohort), a cohort with its
// zones, a tier's cohorts, a player's history and a league's status. They
// read the store (placements are written by whichever node placed the
// player) and rank a cohort's members by their entries on the board, in
// the board's order: a cohort holds at most cohort_size players, so this
// is a sort of at most that many entries, exact, with no index of its own.

// Standing is a player's place in a league for one period.
type Standing struct {
	Board    string
	Period   string
	Placed   bool // played this period: Tier and Cohort are their placement
	Tier     int  // else the tier their next first score places them in
	TierName string
	Cohort   int // -1 when not placed
}

// CohortEntry is one member of a cohort, in cohort order.
type CohortEntry struct {
	Rank      int    // in the cohort
	Zone      string // promotion, safe or relegation
	Player    string
	Name      string
	Keys      []int64 // nil: no visible entry (ranks last)
	At        time.Time
	BoardRank int // on the whole board; 0: no visible entry
}

// Cohort is a cohort's standings.
type Cohort struct {
	Board    string
	Period   string
	Tier     int
	TierName string
	Cohort   int
	Size     int // cohort_size
	Entries  []CohortEntry
}

// HistoryItem is a player's tier in one period, and its outcome once the
// period is settled.
type HistoryItem struct {
	Period   string
	Tier     int
	TierName string
	Cohort   int // -1: absent
	Rank     int // 0: absent, or not settled yet
	Outcome  string
	NewTier  int
	NewName  string
	Settled  bool
}

// TierStatus is a tier's members and cohorts in the current period.
type TierStatus struct {
	Name     string
	Promote  int
	Relegate int
	Members  int64
	Cohorts  int64
}

// Status is a league's definition, current period and settlements.
type Status struct {
	Board   string
	League  podium.League
	Period  podium.Period
	Tiers   []TierStatus
	Periods []podium.LeaguePeriod // newest first, at most statusPeriods
}

// statusPeriods is how many periods a status lists.
const statusPeriods = 20

// league returns a league board's definition; errors: ECodeBoardNotFound,
// ECodeNotFound (not a league).
func (m *Module) league(board string) (*podium.Board, error) {
	bs := m.eng.Lookup(board)
	if bs == nil {
		return nil, podium.BoardNotFound(board)
	}
	def := bs.Def()
	if def.League == nil {
		return nil, notLeague(board)
	}
	return def, nil
}

func (m *Module) unavailable(what string, err error) error {
	m.log.Error("read league "+what, "err", err)
	return podium.Errorf(podium.ECodeUnavailable, "could not read the league's %s; retry shortly", what)
}

// Standing returns a player's tier and cohort in a period (selector:
// "", current, previous or an id).
func (m *Module) Standing(ctx context.Context, board, player, period string) (Standing, error) {
	if err := podium.ValidPlayerID(player); err != nil {
		return Standing{}, err
	}
	def, err := m.league(board)
	if err != nil {
		return Standing{}, err
	}
	pid, err := m.eng.ResolvePeriod(def, period)
	if err != nil {
		return Standing{}, err
	}
	ls, err := m.leagueStore()
	if err != nil {
		return Standing{}, err
	}
	s := Standing{Board: def.ID, Period: pid, Cohort: -1}
	mb, ok, err := ls.LeagueMember(ctx, def.ID, pid, player)
	if err != nil {
		return Standing{}, m.unavailable("placements", err)
	}
	if ok {
		s.Placed, s.Tier, s.Cohort = true, mb.Tier, mb.Cohort
	} else {
		t, _, err := ls.LeaguePlayerTier(ctx, def.ID, player)
		if err != nil {
			return Standing{}, m.unavailable("tiers", err)
		}
		s.Tier = t
	}
	s.Tier = min(max(s.Tier, 0), len(def.League.Tiers)-1)
	s.TierName = def.League.Tiers[s.Tier].Name
	return s, nil
}

// TierIndex returns the index of a tier named name (or given as its
// index). Errors: ECodeNotFound.
func TierIndex(l *podium.League, name string) (int, error) {
	for i, t := range l.Tiers {
		if t.Name == name {
			return i, nil
		}
	}
	return 0, podium.Errorf(podium.ECodeNotFound, "the league has no tier %q", name)
}

// Cohort returns a cohort's standings in a period: its members ranked by
// their entries on the board, those without a visible entry last in
// placement order, each with the zone of its rank.
func (m *Module) Cohort(ctx context.Context, board, period string, tier, cohort int) (Cohort, error) {
	def, err := m.league(board)
	if err != nil {
		return Cohort{}, err
	}
	l := def.League
	if tier < 0 || tier >= len(l.Tiers) {
		return Cohort{}, podium.Errorf(podium.ECodeNotFound, "the league has no tier %d", tier)
	}
	if cohort < 0 {
		return Cohort{}, podium.Errorf(podium.ECodeInvalid, "a cohort is a number from 0")
	}
	pid, err := m.eng.ResolvePeriod(def, period)
	if err != nil {
		return Cohort{}, err
	}
	ls, err := m.leagueStore()
	if err != nil {
		return Cohort{}, err
	}
	members, err := ls.LeagueCohort(ctx, def.ID, pid, tier, cohort)
	if err != nil {
		return Cohort{}, m.unavailable("placements", err)
	}
	if len(members) == 0 {
		return Cohort{}, podium.Errorf(podium.ECodeNotFound, "tier %s has no cohort %d in period %s", l.Tiers[tier].Name, cohort, pid)
	}
	names := make([]string, len(members))
	for i, mb := range members {
		names[i] = mb.Player
	}
	page, err := m.eng.Players(ctx, engine.Query{Board: def.ID, Period: pid}, names)
	if err != nil {
		return Cohort{}, err
	}
	c := Cohort{Board: def.ID, Period: pid, Tier: tier, TierName: l.Tiers[tier].Name, Cohort: cohort, Size: l.CohortSize,
		Entries: make([]CohortEntry, 0, len(members))}
	seen := make(map[string]bool, len(page.Entries))
	for _, ev := range page.Entries {
		seen[ev.Player] = true
		c.Entries = append(c.Entries, CohortEntry{Player: ev.Player, Name: ev.Name, Keys: ev.Keys, At: ev.At, BoardRank: ev.Rank})
	}
	for _, mb := range members {
		if !seen[mb.Player] {
			c.Entries = append(c.Entries, CohortEntry{Player: mb.Player})
		}
	}
	for i := range c.Entries {
		c.Entries[i].Rank = i + 1
		c.Entries[i].Zone = l.Zone(tier, i+1, len(c.Entries))
	}
	return c, nil
}

// Cohorts counts the members of a tier's cohorts in a period, from
// offset, at most limit; total is the number of cohorts.
func (m *Module) Cohorts(ctx context.Context, board, period string, tier, offset, limit int) (list []podium.CohortCount, total int64, pid string, err error) {
	def, err := m.league(board)
	if err != nil {
		return nil, 0, "", err
	}
	if tier < 0 || tier >= len(def.League.Tiers) {
		return nil, 0, "", podium.Errorf(podium.ECodeNotFound, "the league has no tier %d", tier)
	}
	pid, err = m.eng.ResolvePeriod(def, period)
	if err != nil {
		return nil, 0, "", err
	}
	ls, err := m.leagueStore()
	if err != nil {
		return nil, 0, "", err
	}
	counts, err := ls.LeagueTierCounts(ctx, def.ID, pid)
	if err != nil {
		return nil, 0, "", m.unavailable("placements", err)
	}
	if tier < len(counts) {
		total = (counts[tier] + int64(def.League.CohortSize) - 1) / int64(def.League.CohortSize)
	}
	list, err = ls.LeagueCohorts(ctx, def.ID, pid, tier, offset, limit)
	if err != nil {
		return nil, 0, "", m.unavailable("placements", err)
	}
	return list, total, pid, nil
}

// History returns a player's tier per period, newest first: the current
// period's placement (not settled yet) and the settled results.
func (m *Module) History(ctx context.Context, board, player string) ([]HistoryItem, error) {
	if err := podium.ValidPlayerID(player); err != nil {
		return nil, err
	}
	def, err := m.league(board)
	if err != nil {
		return nil, err
	}
	l := def.League
	ls, err := m.leagueStore()
	if err != nil {
		return nil, err
	}
	name := func(t int) string { return l.Tiers[min(max(t, 0), len(l.Tiers)-1)].Name }
	var out []HistoryItem
	cur := podium.PeriodAt(def.Reset, m.host.Now()).ID
	mb, ok, err := ls.LeagueMember(ctx, def.ID, cur, player)
	if err != nil {
		return nil, m.unavailable("placements", err)
	}
	if ok {
		out = append(out, HistoryItem{Period: cur, Tier: mb.Tier, TierName: name(mb.Tier), Cohort: mb.Cohort})
	}
	rs, err := ls.LeagueHistory(ctx, def.ID, player, podium.LeagueHistoryLimit)
	if err != nil {
		return nil, m.unavailable("history", err)
	}
	for _, r := range rs {
		if r.Period == cur {
			continue
		}
		out = append(out, HistoryItem{Period: r.Period, Tier: r.Tier, TierName: name(r.Tier), Cohort: r.Cohort, Rank: r.Rank,
			Outcome: r.Outcome, NewTier: r.NewTier, NewName: name(r.NewTier), Settled: true})
	}
	return out[:min(len(out), podium.LeagueHistoryLimit)], nil
}

// Status returns a league's definition, its current period's tiers and
// its latest periods with their settlements.
func (m *Module) Status(ctx context.Context, board string) (Status, error) {
	def, err := m.league(board)
	if err != nil {
		return Status{}, err
	}
	l := def.League
	ls, err := m.leagueStore()
	if err != nil {
		return Status{}, err
	}
	p := podium.PeriodAt(def.Reset, m.host.Now())
	counts, err := ls.LeagueTierCounts(ctx, def.ID, p.ID)
	if err != nil {
		return Status{}, m.unavailable("placements", err)
	}
	ps, err := ls.LeaguePeriods(ctx, def.ID)
	if err != nil {
		return Status{}, m.unavailable("periods", err)
	}
	s := Status{Board: def.ID, League: *l.Clone(), Period: p}
	for i, t := range l.Tiers {
		ts := TierStatus{Name: t.Name, Promote: t.Promote, Relegate: t.Relegate}
		if i < len(counts) {
			ts.Members = counts[i]
			ts.Cohorts = (counts[i] + int64(l.CohortSize) - 1) / int64(l.CohortSize)
		}
		s.Tiers = append(s.Tiers, ts)
	}
	for i := len(ps) - 1; i >= 0 && len(s.Periods) < statusPeriods; i-- {
		s.Periods = append(s.Periods, ps[i])
	}
	return s, nil
}
