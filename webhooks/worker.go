package webhooks

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium"
)

// The delivery worker. One goroutine (Host.Go) runs rounds: when woken
// (Poke: a commit stored events, an admin changed an endpoint or asked for
// a redelivery) or every Poll (retries come due). A round takes or renews
// the lease, so that one node at a time delivers, and starts a drain for
// each enabled endpoint that has none running, at most Concurrency at
// once: an endpoint's drain delivers its pending deliveries one at a time
// in event seq order, and stops at the first that is not due or that
// failed (it is retried in order later), so a slow or dead endpoint holds
// only its own drain. Delivery is at least once: an attempt whose outcome
// was not stored (the node died) is made again by the next holder.

// leaseName is the worker's lease; leaseTTL how long a round's lease
// lasts unless renewed.
const (
	leaseName = "webhooks"
	leaseTTL  = 30 * time.Second
	queueBite = 16 // deliveries read per query
)

// worker is the state of the delivery worker.
type worker struct {
	// mu guards busy, the endpoints whose drain runs, again, those of
	// them that a round found busy (their drain may have read the queue
	// before new deliveries were stored: it runs once more), and lease,
	// the lease held (Epoch 0: none). Lock order: docs/LOCKS.md.
	mu    sync.Mutex
	busy  map[string]bool
	again map[string]bool
	lease podium.Lease

	sem     chan struct{} // a token per running drain
	starved atomic.Bool   // a round found every slot taken: a drain that ends wakes the worker
	drains  sync.WaitGroup
}

// Poke wakes the worker for a round soon.
func (m *Module) Poke() {
	select {
	case m.poke <- struct{}{}:
	default:
	}
}

// Start implements engine.Starter: the worker and the endpoints' reload.
func (m *Module) Start() {
	if m.store == nil {
		return
	}
	m.w.busy, m.w.again = map[string]bool{}, map[string]bool{}
	m.w.sem = make(chan struct{}, m.cfg.Concurrency)
	m.host.Go(m.run)
}

// run is the worker's loop.
func (m *Module) run(ctx context.Context) {
	t := time.NewTicker(m.cfg.Poll)
	defer t.Stop()
	defer m.release()
	defer m.w.drains.Wait()
	for {
		m.round(ctx)
		if _, err := m.EmitDue(ctx); err != nil && ctx.Err() == nil { // timed_emit.go
			m.log.Warn("webhooks: timed events", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-m.poke:
		case <-t.C:
			// Another node may have changed the endpoints.
			if err := m.reload(ctx); err != nil && ctx.Err() == nil {
				m.log.Warn("webhooks: reload endpoints", "err", err)
			}
		}
	}
}

// round starts the drains of the endpoints with nothing running, if
// this node holds the lease.
func (m *Module) round(ctx context.Context) {
	eps := m.eps.Load().all
	if !slices.ContainsFunc(eps, func(ep podium.WebhookEndpoint) bool { return !ep.Disabled }) {
		return // nothing to deliver to: no lease taken, nothing read or written
	}
	if !m.holdLease(ctx) {
		return
	}
	if n, err := m.store.WebhookDepth(ctx); err == nil {
		m.m.depth.Set(float64(n))
	}
	for _, ep := range eps {
		if ep.Disabled {
			continue
		}
		m.w.mu.Lock()
		busy := m.w.busy[ep.ID]
		if busy {
			m.w.again[ep.ID] = true
		}
		m.w.mu.Unlock()
		if busy {
			continue
		}
		select {
		case m.w.sem <- struct{}{}:
		default:
			m.w.starved.Store(true) // every slot is taken: the first drain to end wakes the worker
			return
		}
		m.w.mu.Lock()
		m.w.busy[ep.ID] = true
		m.w.mu.Unlock()
		m.w.drains.Add(1)
		go func() {
			defer m.w.drains.Done()
			for {
				m.drain(ctx, ep)
				m.w.mu.Lock()
				again := m.w.again[ep.ID] && ctx.Err() == nil
				delete(m.w.again, ep.ID)
				if !again {
					delete(m.w.busy, ep.ID)
				}
				m.w.mu.Unlock()
				if !again {
					break
				}
			}
			<-m.w.sem
			if m.w.starved.Swap(false) {
				m.Poke()
			}
		}()
	}
}

// holdLease takes or renews the worker's lease; without a lease store
// (one node) it always holds.
func (m *Module) holdLease(ctx context.Context) bool {
	if m.lease == nil {
		return true
	}
	l, ok, err := m.lease.AcquireLease(ctx, leaseName, m.holder, m.host.Now(), leaseTTL)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Warn("webhooks: lease", "err", err)
		}
		return false
	}
	m.w.mu.Lock()
	if ok {
		m.w.lease = l
	} else {
		m.w.lease = podium.Lease{}
	}
	m.w.mu.Unlock()
	return ok
}

// release gives the lease up when the worker stops, so that another node
// takes over at once rather than after leaseTTL.
func (m *Module) release() {
	if m.lease == nil {
		return
	}
	m.w.mu.Lock()
	l := m.w.lease
	m.w.mu.Unlock()
	if l.Epoch != 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.lease.ReleaseLease(ctx, leaseName, m.holder, l.Epoch)
	}
}

// drain delivers ep's due deliveries in event seq order, and stops at the
// first that is not due, or that failed and waits for its retry.
func (m *Module) drain(ctx context.Context, ep podium.WebhookEndpoint) {
	for ctx.Err() == nil {
		ds, err := m.store.WebhookQueue(ctx, ep.ID, queueBite)
		if err != nil {
			if ctx.Err() == nil {
				m.log.Warn("webhooks: read the queue", "endpoint", ep.ID, "err", err)
			}
			return
		}
		for i := range ds {
			d := &ds[i]
			if d.Next.After(m.host.Now()) {
				return // not due: later ones wait behind it (ordering)
			}
			if !m.attempt(ctx, ep, d) {
				return
			}
		}
		if len(ds) < queueBite {
			return
		}
	}
}

// attempt makes one attempt to deliver d to ep and stores how it went;
// it reports whether the drain may go on to the next delivery (d is
// delivered, or failed for good).
func (m *Module) attempt(ctx context.Context, ep podium.WebhookEndpoint, d *podium.WebhookDelivery) bool {
	now := m.host.Now()
	keys := make([][]byte, 0, 2)
	for _, s := range []string{ep.Secret, ep.PrevSecret} {
		if s == "" || (s == ep.PrevSecret && !ep.PrevUntil.After(now)) {
			continue
		}
		if k, err := ParseSecret(s); err == nil {
			keys = append(keys, k)
		}
	}
	res := m.client.Send(ctx, ep.URL, keys, Message{ID: d.Event.ID, Body: envelope(&d.Event)}, now)
	if ctx.Err() != nil {
		return false // stopping: the attempt is made again by whoever delivers next
	}
	done := m.host.Now()
	d.Attempts++
	d.LastStatus, d.Latency, d.UpdatedAt = res.Status, res.Latency, done
	next := true
	switch {
	case res.Err == nil:
		d.Status, d.LastError = podium.WebhookDelivered, ""
		m.m.attempts.WithLabelValues("ok").Inc()
		m.m.deliveries.WithLabelValues("delivered").Inc()
		m.m.lag.Observe(done.Sub(d.Born).Seconds())
	default:
		d.LastError = res.Err.Error()
		if len(d.LastError) > 500 {
			d.LastError = d.LastError[:500]
		}
		if res.Status != 0 {
			m.m.attempts.WithLabelValues("http_error").Inc()
		} else {
			m.m.attempts.WithLabelValues("network_error").Inc()
		}
		if at, ok := m.cfg.Backoff.Next(d.Attempts, d.Born, done); ok {
			d.Next, next = at, false
		} else {
			d.Status = podium.WebhookFailed
			m.m.deliveries.WithLabelValues("failed").Inc()
		}
	}
	if _, err := m.store.SetWebhookDelivery(ctx, d); err != nil {
		if ctx.Err() == nil {
			m.log.Warn("webhooks: store a delivery's outcome", "endpoint", ep.ID, "event", d.Event.ID, "err", err)
		}
		return false
	}
	if m.cfg.Attempted != nil {
		m.cfg.Attempted(*d)
	}
	return next
}
