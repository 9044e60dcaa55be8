package engine

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
	"github.com/podiumhq/podium/scoring"
)

// Settlement turns a tournament's final ranks into points on its ladder's
// points boards.
//
// Exactly once. A settlement is one group (op opSettle) that the writer
// computes and commits alone: the credits to the points boards (sum
// submissions, logged like any score), the payouts (what each player now
// holds from this tournament) and the settlement status go in one
// transaction. A run pays each player the difference between the points
// their final rank earns and the payout stored, so a second run pays
// nothing, a run after a crash either finds the first one committed whole
// or not at all, and a rank that changed since (an admin removed an
// entry) is corrected by its difference.
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

// leaseName is the lease the settlers of a cluster share.
const leaseName = "settlement"

// leaseTTL is how long a settler's lease lasts unless released.
const leaseTTL = 30 * time.Second

// settleRetry is how long the scheduler waits before it tries again a
// tournament whose settlement failed (an admin's settle is not held back).
const settleRetry = time.Minute

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

// settleOp is the settlement part of an op.
type settleOp struct {
	board   string // the tournament
	fence   podium.Fence
	boards  []string // the tournament and its targets (shared mode locks them)
	report  SettleReport
	targets []*BoardState
}

func (e *Engine) nodeName() string {
	if e.sh != nil {
		return e.sh.node
	}
	return "local"
}

// Settle settles a tournament now (admin), whether or not it has ended:
// a tournament settled before its end is settled again by the scheduler
// once it ends, paying only differences. Errors: ECodeBoardNotFound,
// ECodeNotFound (not a tournament), ECodeConflict (another node holds the
// settlement lease), ECodeUnprocessable (a points board's keys do not fit).
func (e *Engine) Settle(ctx context.Context, board string) (SettleReport, error) {
	bs := e.board(board)
	if bs == nil {
		return SettleReport{}, errBoardNotFound(board)
	}
	if bs.def.Load().Tournament == nil {
		return SettleReport{}, podium.Errorf(podium.ECodeNotFound, "board %q is not a tournament", board)
	}
	ts, err := e.tourneyStore()
	if err != nil {
		return SettleReport{}, err
	}
	e.tn.settleMu.Lock()
	defer e.tn.settleMu.Unlock()
	l, ok, err := ts.AcquireLease(ctx, leaseName, e.nodeName(), e.now(), leaseTTL)
	if err != nil {
		e.log.Error("settlement lease", "err", err)
		return SettleReport{}, podium.Errorf(podium.ECodeUnavailable, "could not take the settlement lease; retry shortly")
	}
	if !ok {
		return SettleReport{}, podium.Errorf(podium.ECodeConflict, "node %q is settling tournaments until %s at the latest; retry then",
			l.Holder, l.Expires.UTC().Format(time.RFC3339))
	}
	stop := e.keepLease(ts, l)
	defer e.releaseLease(ts, l)
	defer stop()
	return e.settleUnder(ctx, board, l)
}

func (e *Engine) releaseLease(ts podium.TourneyStore, l podium.Lease) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ts.ReleaseLease(ctx, l.Name, l.Holder, l.Epoch); err != nil {
		e.log.Warn("release the settlement lease", "err", err)
	}
}

// keepLease renews lease l every third of its life while a settlement
// runs (a large one, which moves a decaying board to a new era, may take
// longer than the lease), until stop is called. A renewal that finds the
// lease taken changes nothing: the fence then fails the commit.
func (e *Engine) keepLease(ts podium.TourneyStore, l podium.Lease) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(leaseTTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				ctx, cancel := context.WithTimeout(context.Background(), leaseTTL/3)
				r, ok, err := ts.AcquireLease(ctx, l.Name, l.Holder, e.now(), leaseTTL)
				cancel()
				if err != nil || !ok || r.Epoch != l.Epoch {
					e.log.Warn("settlement lease not renewed", "err", err, "holder", r.Holder, "epoch", r.Epoch)
					return
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// settleUnder runs one settlement under lease l.
func (e *Engine) settleUnder(ctx context.Context, board string, l podium.Lease) (SettleReport, error) {
	so := &settleOp{fence: podium.Fence{Name: l.Name, Holder: l.Holder, Epoch: l.Epoch}, boards: []string{board}}
	if bs := e.board(board); bs != nil {
		so.boards = append(so.boards, e.settleTargetIDs(bs.def.Load().Tournament)...)
	}
	so.board = board
	o := &op{kind: opSettle, p: so}
	if err := e.send(ctx, o); err != nil {
		return SettleReport{}, err
	}
	return so.report, nil
}

// settleTargetIDs lists the points boards a settlement of t credits.
func (e *Engine) settleTargetIDs(t *podium.Tournament) []string {
	if t == nil {
		return nil
	}
	var ids []string
	for _, bs := range e.kind(pointsBoards) {
		if p := bs.def.Load().Points; p != nil && p.Credits(t) {
			ids = append(ids, bs.def.Load().ID)
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
// else. On any error the group is left empty, so nothing of it commits.
func (e *Engine) computeSettle(g *group, o *op) {
	so := o.settle()
	if err := e.buildSettle(g, o); err != nil {
		o.err = err
		g.batch = podium.Batch{}
		g.changes = nil
		clear(g.overlay)
		clear(g.seqs)
		o.results = nil
		return
	}
	so.report.Epoch = so.fence.Epoch
}

func (e *Engine) buildSettle(g *group, o *op) error {
	ctx := context.Background()
	so := o.settle()
	bs := e.board(so.board)
	if bs == nil {
		return errBoardNotFound(so.board)
	}
	def := bs.def.Load()
	t := def.Tournament
	if t == nil {
		return podium.Errorf(podium.ECodeNotFound, "board %q is not a tournament", def.ID)
	}
	ts, err := e.tourneyStore()
	if err != nil {
		return err
	}
	period := podium.PeriodAt(def.Reset, g.now).ID
	if err := e.holdPeriod(g, bs, period); err != nil {
		return err
	}
	// The final ranking as players see it: hidden players are not ranked
	// and earn nothing.
	var final []ranked
	bs.mu.RLock()
	if ps := bs.periods[period]; ps != nil {
		ps.idx.Range(1, ps.idx.Len(), false, func(r int, en rank.Entry) bool {
			final = append(final, ranked{rank: int64(r), keys: append([]int64(nil), en.Keys[:len(def.Keys)]...), player: e.players.name(en.Player).Player})
			return true
		})
	}
	bs.mu.RUnlock()

	old, err := ts.Payouts(ctx, def.ID)
	if err != nil {
		e.log.Error("read payouts", "board", def.ID, "err", err)
		return podium.Errorf(podium.ECodeUnavailable, "could not read the tournament's payouts; nothing was settled, retry shortly")
	}
	sts, err := ts.Settlements(ctx)
	if err != nil {
		e.log.Error("read settlements", "err", err)
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
		tb := e.board(id)
		if tb == nil {
			continue // deleted since: nothing to credit
		}
		td := tb.def.Load()
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
		changes = append(changes, change{now: podium.Payout{Board: def.ID, Player: r.player, Rank: r.rank, Points: pts, At: g.now},
			delta: pts - was.Points})
	}
	for _, p := range old {
		if seen[p.Player] || (p.Rank == 0 && p.Points == 0) {
			continue
		}
		// No longer ranked (removed or hidden): the points go back.
		changes = append(changes, change{now: podium.Payout{Board: def.ID, Player: p.Player, At: g.now}, delta: -p.Points})
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
	var scores []Score
	for _, tb := range so.targets {
		td := tb.def.Load()
		p := td.Points
		switch p.Kind {
		case podium.PointsTotal, podium.PointsCategory:
			for _, c := range changes {
				if c.delta != 0 {
					scores = append(scores, Score{Board: td.ID, Player: c.now.Player, Keys: []int64{c.delta}})
				}
			}
		case podium.PointsCurrent:
			cs, rebased, err := e.currentCredits(tb, td, g, date, changes2deltas(changes, func(c change) (string, int64) { return c.now.Player, c.delta }))
			if err != nil {
				return err
			}
			scores = append(scores, cs...)
			so.report.Rebased += rebased
		case podium.PointsBest:
			cs, err := e.bestCredits(tb, td, g, final)
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
	for i := range scores {
		scores[i].at = date
	}
	o.scores = scores
	o.results = make([]Result, len(scores))
	g.internal = true
	defer func() { g.internal = false }()
	for i := range scores {
		if err := e.computeScore(g, &o.scores[i], &o.results[i]); err != nil {
			return err
		}
	}
	tb := &podium.TourneyBatch{Fence: &so.fence}
	for _, c := range changes {
		tb.Payouts = append(tb.Payouts, c.now)
	}
	st := podium.Settlement{Board: def.ID, SettledAt: g.now, Runs: prev.Runs + 1, Players: players, Paid: total,
		Epoch: so.fence.Epoch, Holder: so.fence.Holder}
	tb.Settlements = []podium.Settlement{st}
	g.batch.Tourney = tb
	if len(changes) > 0 && e.feed != nil {
		// A run that changed payouts is news: the event commits with the
		// credits. Its id is the tournament's seq, so a run repeated after
		// a crash stores it once, and a re-settlement after the ranking
		// moved (a later seq) is an event of its own.
		g.batch.Feed = append(g.batch.Feed, settledEvent(def, period, g.nextSeq(bs)-1, g.now, final, st))
	}
	so.report = SettleReport{Board: def.ID, Players: players, Paid: total, Changed: len(changes), Credits: len(scores),
		Rebased: so.report.Rebased, Runs: st.Runs, SettledAt: g.now, Targets: so.report.Targets}
	return nil
}

func changes2deltas[C any](cs []C, f func(C) (string, int64)) []delta {
	out := make([]delta, 0, len(cs))
	for _, c := range cs {
		p, d := f(c)
		if d != 0 {
			out = append(out, delta{p, d})
		}
	}
	return out
}

type delta struct {
	player string
	points int64
}

func sameKeys(a, b *podium.Board) bool {
	if len(a.Keys) != len(b.Keys) {
		return false
	}
	for i := range a.Keys {
		if a.Keys[i].Order != b.Keys[i].Order {
			return false
		}
	}
	return true
}

// bestCredits returns the submissions that bring a best board up to date
// with a tournament's final ranking: for each ranked player, their rank
// (by "rank") or their entry's keys (by "score"), when that is better
// than what the board holds for them, or they have no entry. It compares
// with the board rather than with the payouts: a better time at the same
// rank changes no payout but is a better entry on a by-score board, and a
// board created after an earlier run still hears of every result. A run
// that finds nothing better credits nothing, so runs stay idempotent.
func (e *Engine) bestCredits(tb *BoardState, td *podium.Board, g *group, final []ranked) ([]Score, error) {
	period := podium.PeriodAt(td.Reset, g.now).ID
	if err := e.holdPeriod(g, tb, period); err != nil {
		return nil, err
	}
	orders := td.Orders()
	var out []Score
	for _, r := range final {
		keys := []int64{r.rank}
		if td.Points.By == "score" {
			keys = r.keys
		}
		if pid, known := e.players.lookup(r.player); known {
			cur := g.current(ovKey{tb, period, pid})
			if cur.exists && !podium.Better(orders, keys, cur.entry.Keys[:len(orders)]) {
				continue
			}
		}
		out = append(out, Score{Board: td.ID, Player: r.player, Keys: keys})
	}
	return out, nil
}

// currentCredits returns the submissions that credit deltas, dated date,
// to a decaying board (scoring/decay.go): first, if date falls in a later
// era than the board's, the move of every entry to that era, written in
// the board's current order so ties keep their order; then each credit in
// fixed point.
func (e *Engine) currentCredits(tb *BoardState, td *podium.Board, g *group, date time.Time, ds []delta) ([]Score, int, error) {
	h := int64(td.Points.HalfLifeDays) * 24 * 3600 * 1000
	period := podium.PeriodAt(td.Reset, g.now).ID
	if err := e.holdPeriod(g, tb, period); err != nil {
		return nil, 0, err
	}
	target := scoring.Era(podium.Millis(date), h)
	var out []Score
	era := target
	rebased := 0
	tb.mu.RLock()
	if ps := tb.periods[period]; ps != nil && ps.idx.Len() > 0 {
		first, _ := ps.idx.At(1, true)
		era = first.Keys[0]
		if era < target {
			j := target - era
			ps.idx.Range(1, ps.idx.Len(), true, func(_ int, en rank.Entry) bool {
				k := en.Keys[1]
				out = append(out, Score{Board: td.ID, Player: e.players.name(en.Player).Player, Keys: []int64{j, scoring.Rebase(k, j) - k}})
				return true
			})
			rebased = len(out)
			era = target
		}
	}
	tb.mu.RUnlock()
	for _, d := range ds {
		sc := scoring.Scaled(d.points, podium.Millis(date), era, h)
		if sc == 0 {
			continue
		}
		keys := []int64{0, sc}
		pid, known := e.players.lookup(d.player)
		if !known || !g.current(ovKey{tb, period, pid}).exists {
			keys[0] = era
		}
		out = append(out, Score{Board: td.ID, Player: d.player, Keys: keys})
	}
	return out, rebased, nil
}

// tourneyCommitted updates what the engine knows after a group commits.
func (e *Engine) tourneyCommitted(g *group) {
	if g.batch.Tourney == nil {
		return
	}
	e.joinsCommitted(g)
	e.tn.mu.Lock()
	for _, st := range g.batch.Tourney.Settlements {
		e.tn.settled[st.Board] = st
	}
	e.tn.mu.Unlock()
}

// loadSettlements reads the settlement status of every tournament.
func (e *Engine) loadSettlements(ctx context.Context) error {
	ts, ok := e.store.(podium.TourneyStore)
	if !ok {
		return nil
	}
	sts, err := ts.Settlements(ctx)
	if err != nil {
		return err
	}
	m := make(map[string]podium.Settlement, len(sts))
	for _, st := range sts {
		m[st.Board] = st
	}
	e.tn.mu.Lock()
	e.tn.settled = m // whole: a deleted board's settlement is gone
	e.tn.mu.Unlock()
	return nil
}

// settledSince returns the settlement of board def that counts: one made
// since the board was created (a board deleted and made again under the
// same id starts unsettled). The caller holds tn.mu.
func (e *Engine) settledSince(def *podium.Board) (podium.Settlement, bool) {
	st, ok := e.tn.settled[def.ID]
	if !ok || st.SettledAt.Before(def.CreatedAt) {
		return podium.Settlement{}, false
	}
	return st, true
}

// due lists the tournaments whose end has passed and that have no
// settlement since, by what this node knows.
func (e *Engine) due(now time.Time) []string {
	var ids []string
	e.tn.mu.Lock()
	defer e.tn.mu.Unlock()
	for _, bs := range e.kind(tourneyBoards) {
		def := bs.def.Load()
		t := def.Tournament
		if t == nil || now.Before(t.End) {
			continue
		}
		if st, ok := e.settledSince(def); ok && !st.SettledAt.Before(t.End) {
			continue
		}
		if at, ok := e.tn.failed[def.ID]; ok && now.Sub(at) < settleRetry {
			continue
		}
		ids = append(ids, def.ID)
	}
	return ids
}

// SettleDue settles every tournament that has ended and has not been
// settled since, if this node gets the settlement lease; it returns the
// reports of the settlements it ran. The scheduler calls it every
// Config.SettleEvery; tests call it with a fake clock.
func (e *Engine) SettleDue(ctx context.Context) ([]SettleReport, error) {
	if len(e.due(e.now())) == 0 {
		return nil, nil
	}
	ts, err := e.tourneyStore()
	if err != nil {
		return nil, err
	}
	e.tn.settleMu.Lock()
	defer e.tn.settleMu.Unlock()
	l, ok, err := ts.AcquireLease(ctx, leaseName, e.nodeName(), e.now(), leaseTTL)
	if err != nil || !ok {
		return nil, err // another node settles
	}
	stop := e.keepLease(ts, l)
	defer e.releaseLease(ts, l)
	defer stop()
	// Under the lease: what other nodes settled before is in the store.
	if err := e.loadSettlements(ctx); err != nil {
		return nil, err
	}
	var out []SettleReport
	for _, id := range e.due(e.now()) {
		r, err := e.settleUnder(ctx, id, l)
		if err != nil {
			e.log.Error("settlement failed; retrying later", "board", id, "err", err, "retry_in", settleRetry)
			e.tn.mu.Lock()
			e.tn.failed[id] = e.now()
			e.tn.mu.Unlock()
			continue
		}
		e.log.Info("tournament settled", "board", id, "players", r.Players, "paid", r.Paid, "changed", r.Changed, "runs", r.Runs, "epoch", r.Epoch)
		out = append(out, r)
	}
	return out, nil
}

// scheduler runs SettleDue every tn.every until the engine stops.
func (e *Engine) scheduler() {
	if e.tn.every < 0 {
		return
	}
	tick := time.NewTicker(e.tn.every)
	defer tick.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(e.stopCtx, leaseTTL)
			if _, err := e.SettleDue(ctx); err != nil {
				e.log.Warn("settlement scheduler", "err", err)
			}
			cancel()
			e.tn.passes.Add(1)
		}
	}
}

// TournamentStatus is a tournament's settings with where it stands.
type TournamentStatus struct {
	Board        string
	Tournament   podium.Tournament
	State        string // "upcoming", "open", "ended" (not settled since), "settled"
	Participants int64  // joins (tournaments that keep them)
	Entries      int    // players ranked now (hidden players left out)
	Settlement   *podium.Settlement
	Targets      []string // points boards a settlement credits
}

// Tournament returns a tournament's status; the settlement is read from
// the store, so every node answers the same. Errors: ECodeBoardNotFound,
// ECodeNotFound (not a tournament).
func (e *Engine) Tournament(ctx context.Context, board string) (TournamentStatus, error) {
	bs := e.board(board)
	if bs == nil {
		return TournamentStatus{}, errBoardNotFound(board)
	}
	def := bs.def.Load()
	if def.Tournament == nil {
		return TournamentStatus{}, podium.Errorf(podium.ECodeNotFound, "board %q is not a tournament", board)
	}
	st := TournamentStatus{Board: def.ID, Tournament: *def.Tournament, Targets: e.settleTargetIDs(def.Tournament)}
	if err := e.loadSettlements(ctx); err != nil {
		e.log.Error("read settlements", "err", err)
		return TournamentStatus{}, podium.Errorf(podium.ECodeUnavailable, "could not read the settlements; retry shortly")
	}
	if tracksJoins(def.Tournament) {
		n, err := e.joinCount(ctx, bs)
		if err != nil {
			return TournamentStatus{}, err
		}
		st.Participants = n
	}
	page, err := e.Top(ctx, Query{Board: def.ID}, 0, 0)
	if err != nil {
		return TournamentStatus{}, err
	}
	st.Entries = page.Total
	now := e.now()
	e.tn.mu.Lock()
	if s, ok := e.settledSince(def); ok {
		st.Settlement = &s
	}
	e.tn.mu.Unlock()
	switch t := def.Tournament; {
	case now.Before(t.Start):
		st.State = "upcoming"
	case now.Before(t.End):
		st.State = "open"
	case st.Settlement != nil && !st.Settlement.SettledAt.Before(t.End):
		st.State = "settled"
	default:
		st.State = "ended"
	}
	return st, nil
}

// Payouts returns what a tournament's settlements paid, best rank first
// (players no longer ranked last). Errors: ECodeBoardNotFound,
// ECodeNotFound (not a tournament).
func (e *Engine) Payouts(ctx context.Context, board string) ([]podium.Payout, error) {
	bs := e.board(board)
	if bs == nil {
		return nil, errBoardNotFound(board)
	}
	if bs.def.Load().Tournament == nil {
		return nil, podium.Errorf(podium.ECodeNotFound, "board %q is not a tournament", board)
	}
	ts, err := e.tourneyStore()
	if err != nil {
		return nil, err
	}
	ps, err := ts.Payouts(ctx, board)
	if err != nil {
		e.log.Error("read payouts", "err", err)
		return nil, podium.Errorf(podium.ECodeUnavailable, "could not read the payouts; retry shortly")
	}
	slices.SortStableFunc(ps, func(a, b podium.Payout) int {
		ar, br := a.Rank, b.Rank
		if ar == 0 {
			ar = 1 << 62
		}
		if br == 0 {
			br = 1 << 62
		}
		switch {
		case ar < br:
			return -1
		case ar > br:
			return 1
		}
		return 0
	})
	return ps, nil
}

// decayed returns the points of a current board's entry (keys: era, K)
// at the engine's clock, for display (scoring.Value); ok is false on any
// other board.
func (e *Engine) decayed(def *podium.Board, keys []int64) (v float64, ok bool) {
	p := def.Points
	if p == nil || p.Kind != podium.PointsCurrent || len(keys) < 2 {
		return 0, false
	}
	h := int64(p.HalfLifeDays) * 24 * 3600 * 1000
	return scoring.Value(keys[0], keys[1], podium.Millis(e.now()), h), true
}

// settledFeedTop is how many of the final ranking a "tournament settled"
// feed event lists (it stays well under podium.MaxFeedData).
const settledFeedTop = 10

// settledEvent is the "tournament settled" feed event of a run: the winner
// with their keys, and the first settledFeedTop places with their points.
func settledEvent(def *podium.Board, period string, seq uint64, now time.Time, final []ranked, st podium.Settlement) podium.FeedEvent {
	type place struct {
		Player string `json:"player"`
		Rank   int64  `json:"rank"`
		Points int64  `json:"points"`
	}
	data := struct {
		Tournament string  `json:"tournament"`
		Run        int64   `json:"run"`
		Players    int64   `json:"players"`
		Paid       int64   `json:"paid"`
		Top        []place `json:"top"`
	}{Tournament: def.ID, Run: st.Runs, Players: st.Players, Paid: st.Paid, Top: []place{}}
	for _, r := range final[:min(len(final), settledFeedTop)] {
		data.Top = append(data.Top, place{Player: r.player, Rank: r.rank, Points: scoring.RankPoints(def.Tournament.Weight, r.rank)})
	}
	raw, _ := json.Marshal(data) // plain types: cannot fail
	ev := podium.FeedEvent{Board: def.ID, Seq: seq, Kind: podium.FeedTournamentSettled, At: now, Period: period, Data: raw}
	if len(final) > 0 {
		ev.Player, ev.Keys = final[0].player, final[0].keys
	}
	return ev
}
