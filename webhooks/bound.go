package webhooks

import (
	"cmp"
	"context"
	"time"
)

// The outbox's bounds (docs/ARCHITECTURE.md, "Webhooks: the outbox's
// budget"). The delivering node enforces them off the write path, in its
// rounds, one bounded statement at a time:
//   - the budget: past Config.Budget pending deliveries in all, the
//     oldest pending deliveries of disabled endpoints are dropped first
//     (they are tried by no one until the endpoint is enabled again);
//     if the enabled endpoints alone pass it, the oldest of the endpoint
//     with the most pending are dropped, one endpoint at a time. A
//     dropped delivery keeps its row, with status "dropped", in the
//     delivery log until the retention prunes it, and can be redelivered.
//   - the retention: once a minute, deliveries that ended (delivered,
//     failed, dropped) more than Config.Retention ago, and events older
//     than it that no delivery refers to, are deleted.

const (
	// DefaultBudget is Config.Budget's default: pending deliveries in
	// all, every endpoint together.
	DefaultBudget = 100_000
	// DefaultRetention is Config.Retention's default.
	DefaultRetention = 7 * 24 * time.Hour

	dropBite   = 1000        // deliveries one statement drops
	dropBites  = 100         // drop statements per round; more wait for the next round, which comes at once
	pruneBite  = 1000        // rows of each table one prune deletes
	pruneBites = 20          // prunes per tidy; more wait for the next tidy
	tidyEvery  = time.Minute // how often the retention is applied
)

// Drop reasons (podium_webhook_dropped_total's reason label).
const (
	dropDisabled   = "disabled"    // a disabled endpoint's
	dropOverBudget = "over_budget" // an enabled endpoint's: the enabled ones alone passed the budget
)

// bound keeps the pending deliveries within the budget, and sets the
// depth gauge; it returns whether it stopped with more to drop.
func (m *Module) bound(ctx context.Context) (more bool) {
	backlog, err := m.store.WebhookBacklog(ctx)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Warn("webhooks: read the backlog", "err", err)
		}
		return false
	}
	total := 0
	for _, n := range backlog {
		total += n
	}
	defer func() {
		m.m.depth.Set(float64(total))
		if m.cfg.Bounded != nil {
			m.cfg.Bounded(total)
		}
	}()
	// The endpoints as of after the count: one disabled before it is
	// known as such.
	disabled := map[string]bool{}
	for _, ep := range m.eps.Load().all {
		if ep.Disabled {
			disabled[ep.ID] = true
		}
	}
	for range dropBites {
		if total <= m.cfg.Budget || ctx.Err() != nil {
			return false
		}
		ep, reason := victim(backlog, disabled)
		if ep == "" {
			return false
		}
		msg := "dropped: the outbox was over its budget of pending deliveries"
		if reason == dropDisabled {
			msg += " (endpoint disabled)"
		}
		n, err := m.store.DropWebhooks(ctx, ep, min(total-m.cfg.Budget, dropBite), msg, m.host.Now())
		if err != nil {
			if ctx.Err() == nil {
				m.log.Warn("webhooks: drop over the budget", "endpoint", ep, "err", err)
			}
			return false
		}
		if n == 0 {
			delete(backlog, ep) // it changed since the count (drained, deleted): counted again next round
			continue
		}
		backlog[ep] -= n
		total -= n
		m.m.dropped.WithLabelValues(reason).Add(float64(n))
		m.log.Warn("webhooks: outbox over budget, deliveries dropped", "endpoint", ep, "reason", reason, "dropped", n)
	}
	return total > m.cfg.Budget
}

// victim is the endpoint whose oldest pending deliveries go first: the
// disabled one with the most pending, else the endpoint with the most (an
// endpoint this node does not know yet counts as enabled); ties go to the
// smaller id.
func victim(backlog map[string]int, disabled map[string]bool) (string, string) {
	type cand struct {
		id       string
		n        int
		disabled bool
	}
	var best cand
	for id, n := range backlog {
		c := cand{id, n, disabled[id]}
		if n <= 0 {
			continue
		}
		if best.id == "" || cmp.Or(-cmpBool(c.disabled, best.disabled), -cmp.Compare(c.n, best.n), cmp.Compare(c.id, best.id)) < 0 {
			best = c
		}
	}
	if best.disabled {
		return best.id, dropDisabled
	}
	return best.id, dropOverBudget
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// prune applies the retention, a bounded number of batches at a time.
func (m *Module) prune(ctx context.Context) {
	before := m.host.Now().Add(-m.cfg.Retention)
	for range pruneBites {
		dn, en, err := m.store.PruneWebhooks(ctx, before, pruneBite)
		if err != nil {
			if ctx.Err() == nil {
				m.log.Warn("webhooks: prune", "err", err)
			}
			return
		}
		m.m.pruned.WithLabelValues("deliveries").Add(float64(dn))
		m.m.pruned.WithLabelValues("events").Add(float64(en))
		if dn < pruneBite && en < pruneBite {
			return
		}
	}
}
