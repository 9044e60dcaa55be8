package league

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/rank"
)

// A settlement's rows: computed off the writer from the ranked period
// (prepareSettle), checked and committed on it (commitSettle).

// errMoved: the period changed between a settlement's preparation and
// its commit.
var errMoved = errors.New("league period moved since it was ranked")

// prepared is a settlement computed off the writer, with what it was
// computed from: the visible entries of the period in board order and
// the last placement's seq.
type prepared struct {
	pids     []uint32
	lastSeq  int64
	outcomes counts
	lb       *podium.LeagueBatch
	start    time.Time
}

// settleUnavailable is the error of a settlement's failed read.
func (m *Module) settleUnavailable(board, what string, err error) error {
	m.log.Error("read "+what, "board", board, "err", err)
	return podium.Errorf(podium.ECodeUnavailable, "could not read the league's %s; nothing was settled, retry shortly", what)
}

// period returns the status of one period of a league (nil: no one was
// placed in it).
func (m *Module) period(ctx context.Context, ls podium.LeagueStore, board, period string) (*podium.LeaguePeriod, error) {
	ps, err := ls.LeaguePeriods(ctx, board)
	if err != nil {
		return nil, m.settleUnavailable(board, "periods", err)
	}
	for i := range ps {
		if ps[i].Period == period {
			return &ps[i], nil
		}
	}
	return nil, nil
}

// alreadySettled fills so's report from a settled period.
func alreadySettled(so *settleRun, lp *podium.LeaguePeriod) {
	so.report = SettleReport{Board: so.board, Period: so.period, Already: true, Players: lp.Players,
		Promoted: lp.Promoted, Relegated: lp.Relegated, SettledAt: lp.SettledAt}
}

// prepareSettle computes a settlement off the writer: the ended period
// takes no new scores, so its ranking is read from the index under the
// board's read lock (copied, then released) and the rows are computed
// from it and the store's placements and tiers. It returns nil if the
// period is settled already (so's report then says so).
func (m *Module) prepareSettle(ctx context.Context, so *settleRun) (*prepared, error) {
	bs := m.eng.Lookup(so.board)
	if bs == nil {
		return nil, podium.BoardNotFound(so.board)
	}
	def := bs.Def()
	if def.League == nil {
		return nil, notLeague(def.ID)
	}
	ls, err := m.leagueStore()
	if err != nil {
		return nil, err
	}
	lp, err := m.period(ctx, ls, def.ID, so.period)
	if err != nil {
		return nil, err
	}
	if lp == nil {
		return nil, podium.Errorf(podium.ECodeNotFound, "league %q placed no one in period %s", def.ID, so.period)
	}
	if lp.Settled() {
		alreadySettled(so, lp)
		return nil, nil
	}
	// The placements before the entries: a placement made in between is
	// after the last seq read, which the commit's check looks for.
	members, err := ls.LeagueMembers(ctx, def.ID, so.period, 0)
	if err != nil {
		return nil, m.settleUnavailable(def.ID, "placements", err)
	}
	pids, err := m.eng.RankedPIDs(ctx, def.ID, so.period)
	if err != nil {
		return nil, err
	}
	tiers, err := m.tierMap(ctx, ls, def.ID)
	if err != nil {
		return nil, err
	}
	pre := &prepared{pids: pids, start: lp.Start}
	if n := len(members); n > 0 {
		pre.lastSeq = members[n-1].Seq
	}
	pre.outcomes, pre.lb = settleRows(def, so.period, members, tiers, pids, m.eng.PlayerIDs)
	return pre, nil
}

func (m *Module) tierMap(ctx context.Context, ls podium.LeagueStore, board string) (map[string]int, error) {
	tierList, err := ls.LeagueTiers(ctx, board)
	if err != nil {
		return nil, m.settleUnavailable(board, "tiers", err)
	}
	tiers := make(map[string]int, len(tierList))
	for _, t := range tierList {
		tiers[t.Player] = t.Tier
	}
	return tiers, nil
}

// commitSettle commits a settlement in group g, which holds nothing else
// (the Work runs alone). With pre (prepared off the writer) it checks, on
// the writer, that the period is as pre ranked it: no placement after
// pre's last, and the same visible entries in the same order (one walk of
// the index comparing ids: a delete, restore, hide or approval into the
// period changes it). Without pre it computes the settlement here. The
// module's rows are set in its slot only once nothing can fail.
func (m *Module) commitSettle(g *engine.Group, so *settleRun, pre *prepared) error {
	ctx := context.Background()
	bs := g.Board(so.board)
	if bs == nil {
		return podium.BoardNotFound(so.board)
	}
	def := bs.Def()
	if def.League == nil {
		return notLeague(def.ID)
	}
	ls, err := m.leagueStore()
	if err != nil {
		return err
	}
	so.report = SettleReport{Board: def.ID, Period: so.period}
	// Under the writer (and the board's lock in shared mode): a run that
	// finds the period settled (by another node, or an earlier run that
	// committed before a crash) writes nothing.
	lp, err := m.period(ctx, ls, def.ID, so.period)
	if err != nil {
		return err
	}
	if lp == nil {
		return podium.Errorf(podium.ECodeNotFound, "league %q placed no one in period %s", def.ID, so.period)
	}
	if lp.Settled() {
		alreadySettled(so, lp)
		return nil
	}
	if err := g.Hold(bs, so.period); err != nil {
		return err
	}
	var outcomes counts
	var lb *podium.LeagueBatch
	if pre != nil {
		later, err := ls.LeagueMembers(ctx, def.ID, so.period, pre.lastSeq)
		if err != nil {
			return m.settleUnavailable(def.ID, "placements", err)
		}
		same, i := len(later) == 0, 0
		bs.Ranked(so.period, func(en rank.Entry) bool {
			same = same && i < len(pre.pids) && pre.pids[i] == en.Player
			i++
			return same
		})
		if !same || i != len(pre.pids) {
			return errMoved
		}
		outcomes, lb = pre.outcomes, pre.lb
	} else {
		members, err := ls.LeagueMembers(ctx, def.ID, so.period, 0)
		if err != nil {
			return m.settleUnavailable(def.ID, "placements", err)
		}
		tiers, err := m.tierMap(ctx, ls, def.ID)
		if err != nil {
			return err
		}
		var pids []uint32
		bs.Ranked(so.period, func(en rank.Entry) bool { pids = append(pids, en.Player); return true })
		outcomes, lb = settleRows(def, so.period, members, tiers, pids, func(pids []uint32) []string {
			out := make([]string, len(pids))
			for i, pid := range pids {
				out[i] = g.PlayerID(pid)
			}
			return out
		})
	}
	lb.Fence = &so.fence
	st := podium.LeaguePeriod{Board: def.ID, Period: so.period, Start: lp.Start, SettledAt: g.Now(),
		Players: int64(len(lb.Results)), Promoted: outcomes.promoted, Relegated: outcomes.relegated,
		Epoch: so.fence.Epoch, Holder: so.fence.Holder}
	lb.Periods = []podium.LeaguePeriod{st}
	r := m.rows(g)
	r.settle, r.settled = lb, def.ID
	g.Emit(settledEvent(def, so.period, g.LastSeq(bs), g.Now(), lb.Results, st)) // the feed's EventSink
	so.report = SettleReport{Board: def.ID, Period: so.period, Players: st.Players, Promoted: st.Promoted,
		Relegated: st.Relegated, Dropped: outcomes.dropped, SettledAt: g.Now()}
	return nil
}

type counts struct{ promoted, relegated, dropped int64 }

// settleRows computes a period's results and the tiers that change.
// pids are the period's visible entries, best first; names turns pids
// into player ids. Members without a visible
// entry (hidden, or deleted) rank after those with one, in placement
// order.
func settleRows(def *podium.Board, period string, members []podium.LeagueMember, tiers map[string]int,
	pids []uint32, names func(pids []uint32) []string) (counts, *podium.LeagueBatch) {
	l := def.League
	idx := make(map[string]int32, len(members))
	for i := range members {
		idx[members[i].Player] = int32(i)
	}
	// The visible entries in board order; then each member's place.
	order := make([]int32, 0, len(members))
	seen := make([]bool, len(members))
	for _, p := range names(pids) {
		if i, ok := idx[p]; ok && !seen[i] {
			seen[i] = true
			order = append(order, i)
		}
	}
	for i := range members { // by seq: the store's order
		if !seen[i] {
			order = append(order, int32(i))
		}
	}
	// Cohort sizes, then ranks in each cohort in board order.
	type ck struct{ tier, cohort int }
	size := make(map[ck]int, len(members)/max(l.CohortSize, 1)+1)
	for i := range members {
		size[ck{members[i].Tier, members[i].Cohort}]++
	}
	next := make(map[ck]int, len(size))
	var c counts
	lb := &podium.LeagueBatch{Board: def.ID, Results: make([]podium.LeagueResult, 0, len(members))}
	top := len(l.Tiers) - 1
	for _, i := range order {
		mb := &members[i]
		k := ck{mb.Tier, mb.Cohort}
		next[k]++
		r := next[k]
		tier := min(max(mb.Tier, 0), top)
		res := podium.LeagueResult{Board: def.ID, Period: period, Player: mb.Player, Tier: mb.Tier, Cohort: mb.Cohort, Rank: r,
			Outcome: podium.OutcomeStayed, NewTier: tier}
		switch l.Zone(tier, r, size[k]) {
		case podium.ZonePromotion:
			res.Outcome, res.NewTier = podium.OutcomePromoted, tier+1
			c.promoted++
		case podium.ZoneRelegation:
			res.Outcome, res.NewTier = podium.OutcomeRelegated, tier-1
			c.relegated++
		}
		lb.Results = append(lb.Results, res)
		if res.NewTier != tiers[mb.Player] {
			lb.Tiers = append(lb.Tiers, podium.LeagueTierOf{Player: mb.Player, Tier: res.NewTier})
		}
	}
	if l.Absent == podium.LeagueAbsentDrop {
		var absent []string
		for p, t := range tiers {
			if _, ok := idx[p]; !ok && t > 0 {
				absent = append(absent, p)
			}
		}
		slices.Sort(absent)
		for _, p := range absent {
			t := min(tiers[p], top)
			lb.Results = append(lb.Results, podium.LeagueResult{Board: def.ID, Period: period, Player: p, Tier: t, Cohort: -1,
				Outcome: podium.OutcomeAbsent, NewTier: t - 1})
			lb.Tiers = append(lb.Tiers, podium.LeagueTierOf{Player: p, Tier: t - 1})
			c.dropped++
		}
	}
	return c, lb
}
