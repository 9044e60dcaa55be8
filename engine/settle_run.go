package engine

import (
	"context"
	"time"

	"github.com/podiumhq/podium"
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
