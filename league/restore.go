package league

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Restore writes a league's tiers and settled periods as another
// deployment had them (podium import; docs/API.md, "Restore a league").
// It is a settlement's twin: one Work that runs alone on the writer, under
// the board's lock in shared mode, whose rows go in one transaction (all
// or nothing) and whose commit drops the board's state on this node, so
// the next first score of a period reads the restored tiers. Other nodes
// keep a state only for a period that has placements, or none at all
// (CatchUp drops one without): a restore that changes a tier is refused
// while the league has placements in a period it has not settled, so no
// node can hold a stale tier for a player it has yet to place.

// MaxLeagueRestore is the most rows (tiers, periods and results) one
// Restore takes.
const MaxLeagueRestore = 1000

// RestoredHolder is the node a restored settlement names: no node of this
// deployment settled it. A restore may overwrite such a period (the same
// import run again, or a period sent in several calls), never one this
// deployment settled itself.
const RestoredHolder = "(restored)"

// RestoreRequest is what POST /v1/leagues/{board}/restore asks: tiers by
// name, as the league's reads show them.
type RestoreRequest struct {
	Tiers   []RestoreTier
	Periods []RestorePeriod
}

// RestoreTier is a player's tier as a settlement left it.
type RestoreTier struct {
	Player string
	Tier   string
}

// RestorePeriod is a settled period with its counts and (some of) its
// results; a period's results may come in several requests, each with
// the period.
type RestorePeriod struct {
	Period    string
	Start     time.Time
	SettledAt time.Time
	Players   int64
	Promoted  int64
	Relegated int64
	Results   []RestoreResult
}

// RestoreResult is a player's settled outcome in a period; Cohort and Rank
// are null for an absent player.
type RestoreResult struct {
	Player  string
	Tier    string
	Cohort  *int
	Rank    *int
	Outcome string
	NewTier string
}

// Restored counts the rows a Restore wrote.
type Restored struct {
	Tiers, Periods, Results int
}

// Rows is the number of rows r asks to write.
func (r *RestoreRequest) Rows() int {
	n := len(r.Tiers) + len(r.Periods)
	for i := range r.Periods {
		n += len(r.Periods[i].Results)
	}
	return n
}

// Restore writes r into league board in one commit. Errors:
// ECodeBoardNotFound, ECodeNotFound (not a league), ECodeTooLarge,
// ECodeInvalid (a row that does not fit the league), ECodeConflict (a
// period this deployment placed players in or settled itself; a changed
// tier while the league has placements in an unsettled period),
// ECodeUnavailable.
func (m *Module) Restore(ctx context.Context, board string, r *RestoreRequest) (Restored, error) {
	if n := r.Rows(); n > MaxLeagueRestore {
		return Restored{}, podium.Errorf(podium.ECodeTooLarge, "at most %d rows (tiers, periods and results) per league restore; %d given", MaxLeagueRestore, n)
	}
	if _, err := m.league(board); err != nil {
		return Restored{}, err
	}
	var out Restored
	w := &engine.Work{Boards: []string{board}, Alone: true, Compute: func(g *engine.Group) error {
		var err error
		out, err = m.computeRestore(ctx, g, board, r)
		return err
	}}
	if err := m.eng.Do(ctx, w); err != nil {
		return Restored{}, err
	}
	return out, nil
}

// computeRestore checks r against the league as the writer has it and
// sets the rows in g's slot (last: nothing fails after).
func (m *Module) computeRestore(ctx context.Context, g *engine.Group, board string, r *RestoreRequest) (Restored, error) {
	bs := g.Board(board)
	if bs == nil {
		return Restored{}, podium.BoardNotFound(board)
	}
	def := bs.Def()
	if def.League == nil {
		return Restored{}, notLeague(board)
	}
	lb, err := restoreRows(def, r, g.Now())
	if err != nil {
		return Restored{}, err
	}
	ls, err := m.leagueStore()
	if err != nil {
		return Restored{}, err
	}
	ps, err := ls.LeaguePeriods(ctx, def.ID)
	if err != nil {
		return Restored{}, m.restoreUnavailable(def.ID, "periods", err)
	}
	open := ""
	have := make(map[string]*podium.LeaguePeriod, len(ps))
	for i := range ps {
		have[ps[i].Period] = &ps[i]
		if !ps[i].Settled() {
			open = ps[i].Period
		}
	}
	for _, p := range lb.Periods {
		cur := have[p.Period]
		switch {
		case cur == nil || cur.Settled() && cur.Holder == RestoredHolder:
		case !cur.Settled():
			return Restored{}, podium.Errorf(podium.ECodeConflict, "league %q placed players in period %s itself: it settles that period, a restore does not overwrite it", def.ID, p.Period)
		default:
			return Restored{}, podium.Errorf(podium.ECodeConflict, "league %q settled period %s itself (node %s): a restore does not overwrite it", def.ID, p.Period, cur.Holder)
		}
	}
	if open != "" {
		// A tier that changes now would reach some of the period's
		// players and not others (and nodes that loaded the period).
		for _, t := range lb.Tiers {
			tier, _, err := ls.LeaguePlayerTier(ctx, def.ID, t.Player)
			if err != nil {
				return Restored{}, m.restoreUnavailable(def.ID, "tiers", err)
			}
			if tier != t.Tier {
				return Restored{}, podium.Errorf(podium.ECodeConflict, "league %q has placed players in period %s, which is not settled: tiers are restored before a league takes scores (player %q is in tier %s, not %s)",
					def.ID, open, t.Player, def.League.Tiers[min(max(tier, 0), len(def.League.Tiers)-1)].Name, def.League.Tiers[t.Tier].Name)
			}
		}
	}
	rs := m.rows(g)
	rs.settle, rs.settled = lb, def.ID
	return Restored{Tiers: len(lb.Tiers), Periods: len(lb.Periods), Results: len(lb.Results)}, nil
}

func (m *Module) restoreUnavailable(board, what string, err error) error {
	m.log.Error("read "+what, "board", board, "err", err)
	return podium.Errorf(podium.ECodeUnavailable, "could not read the league's %s; nothing was restored, retry shortly", what)
}

// restoreRows checks r against league def at now and returns its rows.
func restoreRows(def *podium.Board, r *RestoreRequest, now time.Time) (*podium.LeagueBatch, error) {
	l := def.League
	tier := func(what, name string) (int, error) {
		for i, t := range l.Tiers {
			if t.Name == name {
				return i, nil
			}
		}
		return 0, podium.Errorf(podium.ECodeInvalid, "%s: league %q has no tier %q", what, def.ID, name)
	}
	lb := &podium.LeagueBatch{Board: def.ID}
	seen := make(map[string]bool, len(r.Tiers))
	for i, t := range r.Tiers {
		what := "tiers[" + strconv.Itoa(i) + "]"
		if err := podium.ValidPlayerID(t.Player); err != nil {
			return nil, podium.Errorf(podium.ECodeInvalid, "%s: %s", what, message(err))
		}
		if seen[t.Player] {
			return nil, podium.Errorf(podium.ECodeInvalid, "%s: player %q is listed twice", what, t.Player)
		}
		seen[t.Player] = true
		n, err := tier(what, t.Tier)
		if err != nil {
			return nil, err
		}
		lb.Tiers = append(lb.Tiers, podium.LeagueTierOf{Player: t.Player, Tier: n})
	}
	cur := podium.PeriodAt(def.Reset, now)
	periods := map[string]bool{}
	for i := range r.Periods {
		p := &r.Periods[i]
		what := "periods[" + strconv.Itoa(i) + "]"
		if !podium.ValidPeriodID(def.Reset, p.Period) {
			return nil, podium.Errorf(podium.ECodeInvalid, "%s: %q is not a period id of board %q (like %s)", what, p.Period, def.ID, cur.ID)
		}
		if periods[p.Period] {
			return nil, podium.Errorf(podium.ECodeInvalid, "%s: period %s is listed twice", what, p.Period)
		}
		periods[p.Period] = true
		at := podium.PeriodAt(def.Reset, p.Start)
		if at.ID != p.Period || !at.Start.Equal(p.Start) {
			return nil, podium.Errorf(podium.ECodeInvalid, "%s: start %s is not the start of period %s", what, p.Start.UTC().Format(time.RFC3339), p.Period)
		}
		if !at.Start.Before(cur.Start) {
			return nil, podium.Errorf(podium.ECodeInvalid, "%s: period %s has not ended: only settled periods are restored", what, p.Period)
		}
		if p.SettledAt.Before(at.End) || p.SettledAt.After(now) {
			return nil, podium.Errorf(podium.ECodeInvalid, "%s: settled_at must be from the period's end (%s) to now", what, at.End.UTC().Format(time.RFC3339))
		}
		if p.Players < 0 || p.Promoted < 0 || p.Relegated < 0 {
			return nil, podium.Errorf(podium.ECodeInvalid, "%s: players, promoted and relegated must be 0 or more", what)
		}
		lb.Periods = append(lb.Periods, podium.LeaguePeriod{Board: def.ID, Period: p.Period, Start: at.Start,
			SettledAt: p.SettledAt.Truncate(time.Millisecond), Players: p.Players, Promoted: p.Promoted, Relegated: p.Relegated,
			Holder: RestoredHolder})
		players := make(map[string]bool, len(p.Results))
		for j := range p.Results {
			res, err := restoreResult(def, p.Period, &p.Results[j], what+".results["+strconv.Itoa(j)+"]", tier)
			if err != nil {
				return nil, err
			}
			if players[res.Player] {
				return nil, podium.Errorf(podium.ECodeInvalid, "%s.results[%d]: player %q is listed twice", what, j, res.Player)
			}
			players[res.Player] = true
			lb.Results = append(lb.Results, res)
		}
	}
	return lb, nil
}

// restoreResult checks one result: its tiers are the league's, and its
// outcome agrees with them (promoted: one up; relegated: one down; stayed:
// the same; absent: the same or one down, with no cohort and no rank).
func restoreResult(def *podium.Board, period string, x *RestoreResult, what string, tier func(what, name string) (int, error)) (podium.LeagueResult, error) {
	if err := podium.ValidPlayerID(x.Player); err != nil {
		return podium.LeagueResult{}, podium.Errorf(podium.ECodeInvalid, "%s: %s", what, message(err))
	}
	from, err := tier(what, x.Tier)
	if err != nil {
		return podium.LeagueResult{}, err
	}
	to, err := tier(what+".new_tier", x.NewTier)
	if err != nil {
		return podium.LeagueResult{}, err
	}
	res := podium.LeagueResult{Board: def.ID, Period: period, Player: x.Player, Tier: from, Cohort: -1, Outcome: x.Outcome, NewTier: to}
	ok := false
	switch x.Outcome {
	case podium.OutcomePromoted:
		ok = to == from+1
	case podium.OutcomeRelegated:
		ok = to == from-1
	case podium.OutcomeStayed:
		ok = to == from
	case podium.OutcomeAbsent:
		if x.Cohort != nil || x.Rank != nil {
			return podium.LeagueResult{}, podium.Errorf(podium.ECodeInvalid, "%s: an absent player has no cohort and no rank (null)", what)
		}
		return res, checkMove(what, x, to == from || to == from-1)
	default:
		return podium.LeagueResult{}, podium.Errorf(podium.ECodeInvalid, "%s: outcome must be promoted, stayed, relegated or absent; got %q", what, x.Outcome)
	}
	if x.Cohort == nil || *x.Cohort < 0 || *x.Cohort > podium.MaxCohortIndex || x.Rank == nil || *x.Rank < 1 || *x.Rank > def.League.CohortSize {
		return podium.LeagueResult{}, podium.Errorf(podium.ECodeInvalid, "%s: a player who played has a cohort from 0 to %d and a rank from 1 to the cohort size (%d)",
			what, podium.MaxCohortIndex, def.League.CohortSize)
	}
	res.Cohort, res.Rank = *x.Cohort, *x.Rank
	return res, checkMove(what, x, ok)
}

func checkMove(what string, x *RestoreResult, ok bool) error {
	if ok {
		return nil
	}
	return podium.Errorf(podium.ECodeInvalid, "%s: outcome %s does not move tier %s to %s", what, x.Outcome, x.Tier, x.NewTier)
}

// message is the message of a podium error, without its code.
func message(err error) string {
	var e *podium.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}
