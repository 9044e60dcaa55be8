package league

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/internal/lease"
)

// Settlement turns a period's cohort ranks into the tiers of the next.
//
// Exactly once. A settlement of (league, period) is one engine.Work that
// runs alone: the writer computes it against everything committed before
// it and commits it before it computes anything after it. Its rows (each
// member's result, the tiers that changed and the period's settled
// status) go in one transaction, so a run after a crash finds the first
// one committed whole or not at all; a run that finds the period settled
// writes nothing.
//
// Once in the cluster. The scheduler of every node looks for ended
// periods that are not settled; before it settles it takes the lease
// "league-settlement" in the database and commits each settlement with a
// fence on the lease's epoch: the store checks in the settling
// transaction that the lease is still held at that epoch, so a node that
// paused past its lease and lost it cannot commit what it computed under
// it. On SQLite the lease is trivially the one process's; the same code
// runs.

// leaseName is the lease the league settlers of a cluster share (in the
// tournaments' leases table, under a name of its own).
const leaseName = "league-settlement"

// leaseTTL is how long a settler's lease lasts unless renewed.
const leaseTTL = 30 * time.Second

// settleRetry is how long the scheduler waits before it tries again a
// league whose settlement failed.
const settleRetry = time.Minute

// SettleReport is what one settlement run did.
type SettleReport struct {
	Board     string
	Period    string
	Already   bool  // the period was settled before: nothing was written
	Players   int64 // results written (members, and absent players dropped)
	Promoted  int64
	Relegated int64
	Dropped   int64 // absent players who dropped a tier
	SettledAt time.Time
	Epoch     int64
	// Writer is how long the commit held the writer (the check that the
	// period did not move, and the commit of the rows); Tries how many
	// preparations it took (1 unless the period moved meanwhile).
	Writer time.Duration
	Tries  int
}

// settleRun is one settlement being computed.
type settleRun struct {
	board, period string
	fence         podium.Fence
	report        SettleReport
}

func (m *Module) tourneyStore() (podium.TourneyStore, error) {
	ts, ok := m.store.(podium.TourneyStore)
	if !ok {
		return nil, podium.Errorf(podium.ECodeUnavailable, "this store keeps no leases")
	}
	return ts, nil
}

// duePeriod is an ended period with placements and no settlement.
type duePeriod struct{ board, period string }

// due lists the ended, unsettled periods of the leagues (of board only,
// if not ""), oldest first per league, as the store has them.
func (m *Module) due(ctx context.Context, board string, now time.Time, retry bool) ([]duePeriod, error) {
	ls, err := m.leagueStore()
	if err != nil {
		return nil, err
	}
	var out []duePeriod
	for _, bs := range m.eng.BoardsOf(engine.LeagueBoards) {
		def := bs.Def()
		if def.League == nil || board != "" && def.ID != board {
			continue
		}
		if !retry {
			m.mu.Lock()
			at, failed := m.failed[def.ID]
			m.mu.Unlock()
			if failed && now.Sub(at) < settleRetry {
				continue
			}
		}
		cur := podium.PeriodAt(def.Reset, now)
		ps, err := ls.LeaguePeriods(ctx, def.ID)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if !p.Settled() && p.Start.Before(cur.Start) {
				out = append(out, duePeriod{def.ID, p.Period})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b duePeriod) int {
		if a.board < b.board {
			return -1
		}
		if a.board > b.board {
			return 1
		}
		return 0
	})
	return out, nil
}

// SettleDue settles every ended period that is not settled, if this node
// gets the lease; it returns the reports of the settlements it ran. The
// scheduler calls it every Config.SettleEvery; tests call it with a fake
// clock.
func (m *Module) SettleDue(ctx context.Context) ([]SettleReport, error) {
	return m.settleDue(ctx, "", false)
}

// Settle settles the ended periods of one league now (admin). Errors:
// ECodeBoardNotFound, ECodeNotFound (not a league), ECodeConflict (another
// node holds the lease).
func (m *Module) Settle(ctx context.Context, board string) ([]SettleReport, error) {
	bs := m.eng.Lookup(board)
	if bs == nil {
		return nil, podium.BoardNotFound(board)
	}
	if bs.Def().League == nil {
		return nil, notLeague(board)
	}
	return m.settleDue(ctx, board, true)
}

func notLeague(board string) error {
	return podium.Errorf(podium.ECodeNotFound, "board %q is not a league", board)
}

func (m *Module) settleDue(ctx context.Context, board string, admin bool) ([]SettleReport, error) {
	list, err := m.due(ctx, board, m.host.Now(), admin)
	if err != nil {
		m.log.Error("league periods", "err", err)
		return nil, podium.Errorf(podium.ECodeUnavailable, "could not read the leagues' periods; retry shortly")
	}
	if len(list) == 0 {
		return []SettleReport{}, nil
	}
	ts, err := m.tourneyStore()
	if err != nil {
		return nil, err
	}
	m.settleMu.Lock()
	defer m.settleMu.Unlock()
	l, ok, err := ts.AcquireLease(ctx, leaseName, m.host.Node(), m.host.Now(), leaseTTL)
	if err != nil {
		m.log.Error("league settlement lease", "err", err)
		return nil, podium.Errorf(podium.ECodeUnavailable, "could not take the league settlement lease; retry shortly")
	}
	if !ok {
		if !admin {
			return nil, nil // another node settles
		}
		return nil, podium.Errorf(podium.ECodeConflict, "node %q is settling leagues until %s at the latest; retry then",
			l.Holder, l.Expires.UTC().Format(time.RFC3339))
	}
	defer lease.Hold(ts, l, leaseTTL, m.host.Now, m.log, "league settlement")() // renewed while it runs, given up after
	out := []SettleReport{}
	failed := map[string]bool{}
	for _, d := range list {
		if failed[d.board] {
			continue // its periods settle in order
		}
		r, err := m.settleUnder(ctx, d.board, d.period, l)
		if err != nil {
			failed[d.board] = true
			m.log.Error("league settlement failed; retrying later", "board", d.board, "period", d.period, "err", err, "retry_in", settleRetry)
			m.mu.Lock()
			m.failed[d.board] = m.host.Now()
			m.mu.Unlock()
			if admin {
				return out, err
			}
			continue
		}
		m.log.Info("league settled", "board", r.Board, "period", r.Period, "players", r.Players, "promoted", r.Promoted,
			"relegated", r.Relegated, "already", r.Already, "epoch", r.Epoch)
		out = append(out, r)
	}
	return out, nil
}

// settleUnder runs one settlement under lease l: it is prepared off the
// writer (prepareSettle) and committed by a short Work that checks the
// preparation still holds (commitSettle). A period that moved in between
// (an admin's delete, hide or approval into it) is prepared again; after
// settleTries such attempts the last one computes everything on the
// writer, as a settlement did before, so that a busy period still settles.
func (m *Module) settleUnder(ctx context.Context, board, period string, l podium.Lease) (SettleReport, error) {
	so := &settleRun{board: board, period: period, fence: podium.Fence{Name: l.Name, Holder: l.Holder, Epoch: l.Epoch}}
	for try := 1; ; try++ {
		var pre *prepared
		if try < settleTries {
			var err error
			if pre, err = m.prepareSettle(ctx, so); err != nil {
				return SettleReport{}, err
			}
			if pre == nil { // settled already
				so.report.Epoch, so.report.Tries = so.fence.Epoch, try
				return so.report, nil
			}
		}
		if m.prepared != nil {
			m.prepared(try)
		}
		var began time.Time
		w := &engine.Work{Boards: []string{board}, Alone: true, Compute: func(g *engine.Group) error {
			began = time.Now()
			return m.commitSettle(g, so, pre)
		}}
		err := m.eng.Do(ctx, w)
		if !began.IsZero() {
			so.report.Writer = time.Since(began)
		}
		if errors.Is(err, errMoved) {
			m.log.Info("league period moved while it was ranked; ranking it again", "board", board, "period", period, "try", try)
			continue
		}
		if err != nil {
			return SettleReport{}, err
		}
		so.report.Epoch = so.fence.Epoch
		so.report.Tries = try
		return so.report, nil
	}
}

// settleTries is how many times a settlement is prepared off the writer
// before the last try computes it on the writer.
const settleTries = 3

// Start starts the settlement scheduler (engine.Starter), unless
// Config.SettleEvery is negative.
func (m *Module) Start() {
	if m.every < 0 {
		return
	}
	m.host.Go(m.scheduler)
}

// scheduler runs SettleDue every m.every until ctx ends.
func (m *Module) scheduler(stop context.Context) {
	tick := time.NewTicker(m.every)
	defer tick.Stop()
	for {
		select {
		case <-stop.Done():
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(stop, leaseTTL)
			if _, err := m.SettleDue(ctx); err != nil {
				m.log.Warn("league settlement scheduler", "err", err)
			}
			cancel()
			m.passes.Add(1)
		}
	}
}
