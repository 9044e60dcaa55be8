package tournament

import (
	"context"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/internal/lease"
)

// When settlements run: the scheduler, the lease that makes one node in the
// cluster settle a tournament, and what is settled already (settle.go).

// leaseName is the lease the settlers of a cluster share.
const leaseName = "settlement"

// leaseTTL is how long a settler's lease lasts unless released.
const leaseTTL = 30 * time.Second

// settleRetry is how long the scheduler waits before it tries again a
// tournament whose settlement failed (an admin's settle is not held back).
const settleRetry = time.Minute

// Load reads the settlement status of every tournament (engine.Loader).
func (m *Module) Load(ctx context.Context) error { return m.loadSettlements(ctx) }

// loadSettlements reads the settlement status of every tournament.
func (m *Module) loadSettlements(ctx context.Context) error {
	ts, ok := m.store.(podium.TourneyStore)
	if !ok {
		return nil
	}
	sts, err := ts.Settlements(ctx)
	if err != nil {
		return err
	}
	s := make(map[string]podium.Settlement, len(sts))
	for _, st := range sts {
		s[st.Board] = st
	}
	m.smu.Lock()
	m.settled = s // whole: a deleted board's settlement is gone
	m.smu.Unlock()
	return nil
}

// settledSince returns the settlement of board def that counts: one made
// since the board was created (a board deleted and made again under the
// same id starts unsettled). The caller holds smu.
func (m *Module) settledSince(def *podium.Board) (podium.Settlement, bool) {
	st, ok := m.settled[def.ID]
	if !ok || st.SettledAt.Before(def.CreatedAt) {
		return podium.Settlement{}, false
	}
	return st, true
}

// due lists the tournaments whose end has passed and that have no
// settlement since, by what this node knows.
func (m *Module) due(now time.Time) []string {
	var ids []string
	m.smu.Lock()
	defer m.smu.Unlock()
	for _, bs := range m.eng.BoardsOf(engine.TournamentBoards) {
		def := bs.Def()
		t := def.Tournament
		if t == nil || now.Before(t.End) {
			continue
		}
		if st, ok := m.settledSince(def); ok && !st.SettledAt.Before(t.End) {
			continue
		}
		if at, ok := m.failed[def.ID]; ok && now.Sub(at) < settleRetry {
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
func (m *Module) SettleDue(ctx context.Context) ([]SettleReport, error) {
	if len(m.due(m.host.Now())) == 0 {
		return nil, nil
	}
	ts, err := m.tourneyStore()
	if err != nil {
		return nil, err
	}
	m.settleMu.Lock()
	defer m.settleMu.Unlock()
	l, ok, err := ts.AcquireLease(ctx, leaseName, m.host.Node(), m.host.Now(), leaseTTL)
	if err != nil || !ok {
		return nil, err // another node settles
	}
	defer lease.Hold(ts, l, leaseTTL, m.host.Now, m.log, "settlement")() // renewed while it runs, given up after
	// Under the lease: what other nodes settled before is in the store.
	if err := m.loadSettlements(ctx); err != nil {
		return nil, err
	}
	var out []SettleReport
	for _, id := range m.due(m.host.Now()) {
		r, err := m.settleUnder(ctx, id, l)
		if err != nil {
			m.log.Error("settlement failed; retrying later", "board", id, "err", err, "retry_in", settleRetry)
			m.smu.Lock()
			m.failed[id] = m.host.Now()
			m.smu.Unlock()
			continue
		}
		m.log.Info("tournament settled", "board", id, "players", r.Players, "paid", r.Paid, "changed", r.Changed, "runs", r.Runs, "epoch", r.Epoch)
		out = append(out, r)
	}
	return out, nil
}

// Start starts the settlement scheduler (engine.Starter), unless
// Config.SettleEvery is negative.
func (m *Module) Start() {
	if m.every < 0 {
		return
	}
	m.host.Go(m.scheduler)
}

// scheduler runs SettleDue every m.every until ctx ends (the engine
// stops).
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
				m.log.Warn("settlement scheduler", "err", err)
			}
			cancel()
			m.passes.Add(1)
		}
	}
}
