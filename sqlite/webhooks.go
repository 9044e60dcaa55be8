package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

var _ podium.WebhookStore = (*Store)(nil)

// webhookRows is the Store's webhooks (podium.WebhookStore).
type webhookRows struct{ *Store }

// The outbox's statements, one per chunk size (writeStmts.prepare, in
// execChunks): an event is kept as first stored; a delivery is made from
// its event's row (its seq and time), unless the endpoint has one of it.
const (
	insertWebhookEvent    = "INSERT INTO webhook_events (id, type, board, at_ms, payload) VALUES "
	webhookEventRow       = "(?,?,?,?,?)"
	insertWebhookEventEnd = " ON CONFLICT (id) DO NOTHING"
	insertWebhookDelivery = `INSERT INTO webhook_deliveries (endpoint, event, seq, status, attempts, born_ms, next_ms,
		last_error, last_status, latency_ms, updated_ms)
		SELECT v.column1, e.id, e.seq, 'pending', 0, e.at_ms, e.at_ms, '', 0, 0, e.at_ms
		FROM (VALUES `
	webhookDeliveryRow = "(?,?)"
	// WHERE true: SQLite reads an ON CONFLICT after a join's ON as the
	// join's otherwise.
	insertWebhookDeliveryEnd = `) AS v JOIN webhook_events e ON e.id = v.column2 WHERE true
		ON CONFLICT (endpoint, event) DO NOTHING`
)

// WebhookPart returns evs as a part of a batch this store commits.
func (s webhookRows) WebhookPart(evs []podium.WebhookEvent) podium.Part {
	return &webhookPart{s.Store, evs}
}

// webhookPart is the outbox events of a commit.
type webhookPart struct {
	s   *Store
	evs []podium.WebhookEvent
}

func (p *webhookPart) Len() int       { return len(p.evs) }
func (p *webhookPart) Check() error   { return podium.CheckWebhookEvents(p.evs) }
func (p *webhookPart) madeBy() *Store { return p.s }

// write stores the events and their deliveries in commit's transaction,
// with the commit path's prepared statements, many rows a statement (a
// statement a row, prepared each time, made an outbox row cost more than
// the score that caused it: BENCHMARKS.md, issue 20).
func (p *webhookPart) write(ctx context.Context, tx *sql.Tx) error {
	evs := p.evs
	err := p.s.execChunks(ctx, tx, p.s.ws.whEvent, len(evs), nil, func(args []any, i int) []any {
		ev := &evs[i]
		return append(args, ev.ID, ev.Type, ev.Board, podium.Millis(ev.At), string(ev.Payload))
	})
	if err != nil {
		return fmt.Errorf("webhook events: %w", err)
	}
	type delivery struct{ endpoint, event string }
	var ds []delivery
	for i := range evs {
		for _, ep := range evs[i].Endpoints {
			ds = append(ds, delivery{ep, evs[i].ID})
		}
	}
	err = p.s.execChunks(ctx, tx, p.s.ws.whDelivery, len(ds), nil, func(args []any, i int) []any {
		return append(args, ds[i].endpoint, ds[i].event)
	})
	if err != nil {
		return fmt.Errorf("webhook deliveries: %w", err)
	}
	return nil
}

// PutWebhookEndpoint stores ep, replacing the endpoint with its id.
func (s webhookRows) PutWebhookEndpoint(ctx context.Context, ep *podium.WebhookEndpoint) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.w.ExecContext(ctx, sqlstore.PutWebhookEndpoint.SQLite, ep.ID, ep.URL, sqlstore.WebhookTypesJSON(ep.Types),
		ep.Prefix, ep.Secret, ep.PrevSecret, podium.Millis(ep.PrevUntil), sqlstore.Bool(ep.Disabled),
		podium.Millis(ep.CreatedAt), podium.Millis(ep.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put webhook endpoint: %w", err)
	}
	return s.durable(ctx)
}

// WebhookEndpoints lists the endpoints by id.
func (s webhookRows) WebhookEndpoints(ctx context.Context) ([]podium.WebhookEndpoint, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.WebhookEndpoints.SQLite)
	if err != nil {
		return nil, fmt.Errorf("webhook endpoints: %w", err)
	}
	defer rows.Close()
	var out []podium.WebhookEndpoint
	for rows.Next() {
		ep, err := sqlstore.ScanWebhookEndpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("webhook endpoints: %w", err)
		}
		out = append(out, ep)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("webhook endpoints: %w", err)
	}
	return out, nil
}

// DeleteWebhookEndpoint deletes an endpoint and its deliveries.
func (s webhookRows) DeleteWebhookEndpoint(ctx context.Context, id string) (bool, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("delete webhook endpoint: %w", err)
	}
	defer rollback(tx)
	res, err := tx.ExecContext(ctx, sqlstore.DeleteWebhookEndpoint.SQLite, id)
	if err != nil {
		return false, fmt.Errorf("delete webhook endpoint: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("delete webhook endpoint: %w", err)
	}
	if _, err := tx.ExecContext(ctx, sqlstore.DeleteWebhookEndpointWork.SQLite, id); err != nil {
		return false, fmt.Errorf("delete webhook endpoint: %w", err)
	}
	if err := s.commitTx(tx); err != nil {
		return false, fmt.Errorf("delete webhook endpoint: %w", err)
	}
	return n > 0, s.durable(ctx)
}

func (s webhookRows) queryDeliveries(ctx context.Context, what, q string, args ...any) ([]podium.WebhookDelivery, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []podium.WebhookDelivery
	for rows.Next() {
		d, err := sqlstore.ScanWebhookDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// WebhookQueue returns an endpoint's pending deliveries by event seq.
func (s webhookRows) WebhookQueue(ctx context.Context, endpoint string, limit int) ([]podium.WebhookDelivery, error) {
	return s.queryDeliveries(ctx, "webhook queue", sqlstore.WebhookQueue.SQLite, endpoint, limit)
}

// WebhookDeliveries returns a page of an endpoint's delivery log.
func (s webhookRows) WebhookDeliveries(ctx context.Context, q podium.WebhookDeliveryQuery) ([]podium.WebhookDelivery, error) {
	return s.queryDeliveries(ctx, "webhook deliveries", sqlstore.WebhookDeliveries.SQLite,
		q.Endpoint, q.Status, q.Status, q.Before, q.Before, q.Limit)
}

// SetWebhookDelivery stores how a delivery went.
func (s webhookRows) SetWebhookDelivery(ctx context.Context, d *podium.WebhookDelivery) (bool, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	res, err := s.w.ExecContext(ctx, sqlstore.SetWebhookDelivery.SQLite, d.Status, d.Attempts, podium.Millis(d.Next),
		d.LastError, d.LastStatus, d.Latency.Milliseconds(), podium.Millis(d.UpdatedAt), d.Endpoint, d.Event.ID)
	if err != nil {
		return false, fmt.Errorf("set webhook delivery: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("set webhook delivery: %w", err)
	}
	return n > 0, s.durable(ctx)
}

// RedeliverWebhooks makes the deliveries r selects pending again.
func (s webhookRows) RedeliverWebhooks(ctx context.Context, r podium.WebhookRedelivery, now time.Time) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	ms := podium.Millis(now)
	var (
		res sql.Result
		err error
	)
	if r.Event != "" {
		res, err = s.w.ExecContext(ctx, sqlstore.RedeliverWebhook.SQLite, ms, ms, ms, r.Endpoint, r.Event)
	} else {
		res, err = s.w.ExecContext(ctx, sqlstore.RedeliverWebhooks.SQLite, ms, ms, ms, r.Endpoint,
			podium.Millis(r.From), podium.Millis(r.To))
	}
	if err != nil {
		return 0, fmt.Errorf("redeliver webhooks: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("redeliver webhooks: %w", err)
	}
	return int(n), s.durable(ctx)
}

// WebhookBacklog returns the pending deliveries of each endpoint.
func (s webhookRows) WebhookBacklog(ctx context.Context) (map[string]int, error) {
	rows, err := s.r.QueryContext(ctx, sqlstore.WebhookBacklog.SQLite)
	if err != nil {
		return nil, fmt.Errorf("webhook backlog: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var (
			ep string
			n  int
		)
		if err := rows.Scan(&ep, &n); err != nil {
			return nil, fmt.Errorf("webhook backlog: %w", err)
		}
		out[ep] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("webhook backlog: %w", err)
	}
	return out, nil
}

// DropWebhooks marks up to limit of an endpoint's oldest pending
// deliveries dropped.
func (s webhookRows) DropWebhooks(ctx context.Context, endpoint string, limit int, reason string, now time.Time) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	res, err := s.w.ExecContext(ctx, sqlstore.DropWebhooks.SQLite, reason, podium.Millis(now), endpoint, endpoint, limit)
	if err != nil {
		return 0, fmt.Errorf("drop webhooks: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("drop webhooks: %w", err)
	}
	return int(n), s.durable(ctx)
}

// PruneWebhooks deletes up to limit ended deliveries and up to limit
// unreferenced events, made before before: two statements, each its own
// short transaction, so the writer waits for no more than a batch.
func (s webhookRows) PruneWebhooks(ctx context.Context, before time.Time, limit int) (int, int, error) {
	var n [2]int
	for i, q := range []string{sqlstore.PruneWebhookDeliveries.SQLite, sqlstore.PruneWebhookEvents.SQLite} {
		s.wmu.Lock()
		res, err := s.w.ExecContext(ctx, q, podium.Millis(before), limit)
		s.wmu.Unlock()
		if err != nil {
			return n[0], n[1], fmt.Errorf("prune webhooks: %w", err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return n[0], n[1], fmt.Errorf("prune webhooks: %w", err)
		}
		n[i] = int(k)
	}
	return n[0], n[1], s.durable(ctx)
}
