package tournament

import (
	"context"
	"slices"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/internal/lease"
	"github.com/podiumhq/podium/rank"
	"github.com/podiumhq/podium/scoring"
)

// Settlement turns a tournament's final ranks into points on its ladder's
// points boards.
//
// Exactly once. A settlement is one engine.Work that runs alone: the
// writer computes it against everything committed before it and commits
// it before it computes anything after it. The credits to the points
// boards (sum submissions, logged like any score, submitted as internal
// scores: only they may write a points board), the payouts (what each
// player now holds from this tournament) and the settlement status go in
// one transaction, the latter two as the module's part. A run pays each
// player the difference between the points their final rank earns and the
// payout stored, so a second run pays nothing, a run after a crash either
// finds the first one committed whole or not at all, and a rank that
// changed since (an admin removed an entry) is corrected by its
// difference.
//
// Once in the cluster. The scheduler of every node looks for tournaments
// whose end has passed and that have no settlement since; before it
// settles it takes the lease "settlement" in the database, re-reads the
// settlements (another node may have just settled), and commits each
// settlement with a fence on the lease's epoch: the store checks, in the
// settling transaction, that the lease is still held at that epoch, so a
// node that paused past its lease and lost it to another cannot commit
// what it computed under it. On SQLite the lease is trivially the one
// process's, but the same code runs.

// SettleReport is what one settlement run did.
type SettleReport struct {
	Board     string
	Players   int64 // ranked players holding a payout
	Paid      int64 // points the tournament has paid in all
	Changed   int   // payouts this run changed
	Credits   int   // submissions this run made to points boards
	Rebased   int   // entries a current board moved to a new era
	Runs      int64 // runs committed, this one included
	SettledAt time.Time
	Epoch     int64
	Targets   []string // the points boards credited
}

// settleRun is one settlement being computed.
type settleRun struct {
	board   string // the tournament
	fence   podium.Fence
	boards  []string // the tournament and its targets (shared mode locks them)
	report  SettleReport
	targets []*engine.BoardState
}

// Settle settles a tournament now (admin), whether or not it has ended:
// a tournament settled before its end is settled again by the scheduler
// once it ends, paying only differences. Errors: ECodeBoardNotFound,
// ECodeNotFound (not a tournament), ECodeConflict (another node holds the
// settlement lease), ECodeUnprocessable (a points board's keys do not fit).
func (m *Module) Settle(ctx context.Context, board string) (SettleReport, error) {
	bs := m.eng.Lookup(board)
	if bs == nil {
		return SettleReport{}, podium.BoardNotFound(board)
	}
	if bs.Def().Tournament == nil {
		return SettleReport{}, podium.Errorf(podium.ECodeNotFound, "board %q is not a tournament", board)
	}
	ts, err := m.tourneyStore()
	if err != nil {
		return SettleReport{}, err
	}
	m.settleMu.Lock()
	defer m.settleMu.Unlock()
	l, ok, err := ts.AcquireLease(ctx, leaseName, m.host.Node(), m.host.Now(), leaseTTL)
	if err != nil {
		m.log.Error("settlement lease", "err", err)
		return SettleReport{}, podium.Errorf(podium.ECodeUnavailable, "could not take the settlement lease; retry shortly")
	}
	if !ok {
		return SettleReport{}, podium.Errorf(podium.ECodeConflict, "node %q is settling tournaments until %s at the latest; retry then",
			l.Holder, l.Expires.UTC().Format(time.RFC3339))
	}
	defer lease.Hold(ts, l, leaseTTL, m.host.Now, m.log, "settlement")() // renewed while it runs, given up after
	return m.settleUnder(ctx, board, l)
}

// settleUnder runs one settlement under lease l.
func (m *Module) settleUnder(ctx context.Context, board string, l podium.Lease) (SettleReport, error) {
	so := &settleRun{board: board, fence: podium.Fence{Name: l.Name, Holder: l.Holder, Epoch: l.Epoch}, boards: []string{board}}
	if bs := m.eng.Lookup(board); bs != nil {
		so.boards = append(so.boards, m.targetIDs(bs.Def().Tournament)...)
	}
	w := &engine.Work{Boards: so.boards, Alone: true, Compute: func(g *engine.Group) error { return m.computeSettle(g, so) }}
	if err := m.eng.Do(ctx, w); err != nil {
		return SettleReport{}, err
	}
	so.report.Epoch = so.fence.Epoch
	return so.report, nil
}

// targetIDs lists the points boards a settlement of t credits.
func (m *Module) targetIDs(t *podium.Tournament) []string {
	if t == nil {
		return nil
	}
	var ids []string
	for _, bs := range m.eng.BoardsOf(engine.PointsBoards) {
		if p := bs.Def().Points; p != nil && p.Credits(t) {
			ids = append(ids, bs.Def().ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// ranked is one player's final standing in a tournament.
type ranked struct {
	player string
	rank   int64
	keys   []int64
}

// computeSettle computes a settlement in group g, which holds nothing
// else (the Work runs alone). On an error the engine empties the group,
// and the module's rows are set in its slot only once nothing can fail.
func (m *Module) computeSettle(g *engine.Group, so *settleRun) error {
	ctx := context.Background()
	bs := g.Board(so.board)
	if bs == nil {
		return podium.BoardNotFound(so.board)
	}
	def := bs.Def()
	t := def.Tournament
	if t == nil {
		return podium.Errorf(podium.ECodeNotFound, "board %q is not a tournament", def.ID)
	}
	ts, err := m.tourneyStore()
	if err != nil {
		return err
	}
	period := podium.PeriodAt(def.Reset, g.Now()).ID
	if err := g.Hold(bs, period); err != nil {
		return err
	}
	// The final ranking as players see it: hidden players are not ranked
	// and earn nothing.
	var final []ranked
	var pids []uint32
	bs.Ranked(period, func(en rank.Entry) bool {
		final = append(final, ranked{rank: int64(len(final) + 1), keys: append([]int64(nil), en.Keys[:len(def.Keys)]...)})
		pids = append(pids, en.Player)
		return true
	})
	for i, pid := range pids {
		final[i].player = g.PlayerID(pid)
	}

	old, err := ts.Payouts(ctx, def.ID)
	if err != nil {
		m.log.Error("read payouts", "board", def.ID, "err", err)
		return podium.Errorf(podium.ECodeUnavailable, "could not read the tournament's payouts; nothing was settled, retry shortly")
	}
	sts, err := ts.Settlements(ctx)
	if err != nil {
		m.log.Error("read settlements", "err", err)
		return podium.Errorf(podium.ECodeUnavailable, "could not read the settlements; nothing was settled, retry shortly")
	}
	var prev podium.Settlement
	for _, st := range sts {
		if st.Board == def.ID {
			prev = st
		}
	}
	paid := make(map[string]podium.Payout, len(old))
	for _, p := range old {
		paid[p.Player] = p
	}

	// Targets, checked before anything is computed.
	so.targets = so.targets[:0]
	for _, id := range so.boards[1:] {
		tb := g.Board(id)
		if tb == nil {
			continue // deleted since: nothing to credit
		}
		td := tb.Def()
		if td.Points == nil || !td.Points.Credits(t) {
			continue
		}
		if td.Points.Kind == podium.PointsBest && td.Points.By == "score" && !sameKeys(td, def) {
			return podium.Errorf(podium.ECodeUnprocessable, "best board %q has keys that differ from tournament %q's: it cannot hold its entries", td.ID, def.ID)
		}
		so.targets = append(so.targets, tb)
		so.report.Targets = append(so.report.Targets, td.ID)
	}

	// New payouts and their differences.
	// Credits are dated at the end, whenever the run: a late run, or a
	// second one, decays exactly as one on time, and check can recompute
	// the current boards from the payouts alone.
	date := t.End
	type change struct {
		now   podium.Payout
		delta int64
	}
	var changes []change
	seen := make(map[string]bool, len(final))
	var players, total int64
	for _, r := range final {
		seen[r.player] = true
		pts := scoring.RankPoints(t.Weight, r.rank)
		players++
		total += pts
		was := paid[r.player]
		if was.Rank == r.rank && was.Points == pts {
			continue
		}
		changes = append(changes, change{now: podium.Payout{Board: def.ID, Player: r.player, Rank: r.rank, Points: pts, At: g.Now()},
			delta: pts - was.Points})
	}
	for _, p := range old {
		if seen[p.Player] || (p.Rank == 0 && p.Points == 0) {
			continue
		}
		// No longer ranked (removed or hidden): the points go back.
		changes = append(changes, change{now: podium.Payout{Board: def.ID, Player: p.Player, At: g.Now()}, delta: -p.Points})
	}
	slices.SortFunc(changes, func(a, b change) int {
		switch {
		case a.now.Rank == 0 && b.now.Rank != 0:
			return 1
		case a.now.Rank != 0 && b.now.Rank == 0:
			return -1
		case a.now.Rank != b.now.Rank:
			return int(a.now.Rank - b.now.Rank)
		}
		return 0
	})

	// The credits, board by board, in rank order.
	var scores []engine.Score
	for _, tb := range so.targets {
		td := tb.Def()
		p := td.Points
		switch p.Kind {
		case podium.PointsTotal, podium.PointsCategory:
			for _, c := range changes {
				if c.delta != 0 {
					scores = append(scores, engine.Score{Board: td.ID, Player: c.now.Player, Keys: []int64{c.delta}})
				}
			}
		case podium.PointsCurrent:
			cs, rebased, err := currentCredits(tb, td, g, date, changes2deltas(changes, func(c change) (string, int64) { return c.now.Player, c.delta }))
			if err != nil {
				return err
			}
			scores = append(scores, cs...)
			so.report.Rebased += rebased
		case podium.PointsBest:
			cs, err := bestCredits(tb, td, g, final)
			if err != nil {
				return err
			}
			scores = append(scores, cs...)
		}
	}

	// Every credit, rebases included, is dated at the end: "at" is the
	// tie-break of equal points, so two players level on a ladder rank by
	// who reached the total first in tournament time, not by when a run
	// happened to commit (and a late or repeated run dates the same).
	if err := g.SubmitInternal(scores, date); err != nil {
		return err
	}
	tb := &podium.TourneyBatch{Fence: &so.fence}
	for _, c := range changes {
		tb.Payouts = append(tb.Payouts, c.now)
	}
	st := podium.Settlement{Board: def.ID, SettledAt: g.Now(), Runs: prev.Runs + 1, Players: players, Paid: total,
		Epoch: so.fence.Epoch, Holder: so.fence.Holder}
	tb.Settlements = []podium.Settlement{st}
	m.rows(g).settle = tb
	if len(changes) > 0 {
		// A run that changed payouts is news: the event commits with the
		// credits. Its id is the tournament's seq, so a run repeated after
		// a crash stores it once, and a re-settlement after the ranking
		// moved (a later seq) is an event of its own.
		g.Emit(settledEvent(def, period, g.LastSeq(bs), g.Now(), final, st)) // the feed's EventSink
	}
	so.report = SettleReport{Board: def.ID, Players: players, Paid: total, Changed: len(changes), Credits: len(scores),
		Rebased: so.report.Rebased, Runs: st.Runs, SettledAt: g.Now(), Targets: so.report.Targets}
	return nil
}
