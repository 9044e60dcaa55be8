package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

var _ podium.WebhookStore = (*Store)(nil)

// webhookRows is the Store's webhooks (podium.WebhookStore).
type webhookRows struct{ *Store }

// The outbox rows of a commit, as one JSON document each: the events
// (the first of an id is kept), then a delivery per event and endpoint.
const (
	sqlWebhookEvents = `INSERT INTO webhook_events (id, type, board, at_ms, payload)
		SELECT i, t, b, a, p FROM jsonb_to_recordset($1::jsonb) AS x(i text, t text, b text, a bigint, p text)
		ON CONFLICT (id) DO NOTHING`
	sqlWebhookDeliveries = `INSERT INTO webhook_deliveries (endpoint, event, seq, status, attempts, born_ms, next_ms,
		last_error, last_status, latency_ms, updated_ms)
		SELECT x.n, e.id, e.seq, 'pending', 0, e.at_ms, e.at_ms, '', 0, 0, e.at_ms
		FROM jsonb_to_recordset($1::jsonb) AS x(n text, i text) JOIN webhook_events e ON e.id = x.i
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

// queue queues the inserts of the events and their deliveries.
func (p *webhookPart) queue(w *writer, pb *pgconn.Batch, _ *statements) {
	if len(p.evs) == 0 {
		return
	}
	type event struct {
		I string `json:"i"`
		T string `json:"t"`
		B string `json:"b"`
		A int64  `json:"a"`
		P string `json:"p"`
	}
	type delivery struct {
		N string `json:"n"`
		I string `json:"i"`
	}
	evs := make([]event, len(p.evs))
	var ds []delivery
	for i := range p.evs {
		ev := &p.evs[i]
		evs[i] = event{ev.ID, ev.Type, ev.Board, podium.Millis(ev.At), string(ev.Payload)}
		for _, n := range ev.Endpoints {
			ds = append(ds, delivery{n, ev.ID})
		}
	}
	w.jsonRows(pb, sqlWebhookEvents, evs)
	if len(ds) > 0 {
		w.jsonRows(pb, sqlWebhookDeliveries, ds)
	}
}

// PutWebhookEndpoint stores ep, replacing the endpoint with its id.
func (s webhookRows) PutWebhookEndpoint(ctx context.Context, ep *podium.WebhookEndpoint) error {
	_, err := s.pool.Exec(ctx, sqlstore.PutWebhookEndpoint.Postgres, ep.ID, ep.URL, sqlstore.WebhookTypesJSON(ep.Types),
		ep.Prefix, ep.Secret, ep.PrevSecret, podium.Millis(ep.PrevUntil), sqlstore.Bool(ep.Disabled),
		podium.Millis(ep.CreatedAt), podium.Millis(ep.UpdatedAt))
	return wrap("put webhook endpoint", err)
}

// WebhookEndpoints lists the endpoints by id.
func (s webhookRows) WebhookEndpoints(ctx context.Context) ([]podium.WebhookEndpoint, error) {
	rows, err := s.pool.Query(ctx, sqlstore.WebhookEndpoints.Postgres)
	if err != nil {
		return nil, fmt.Errorf("webhook endpoints: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.WebhookEndpoint, error) {
		return sqlstore.ScanWebhookEndpoint(r)
	})
	return out, wrap("webhook endpoints", err)
}

// DeleteWebhookEndpoint deletes an endpoint and its deliveries.
func (s webhookRows) DeleteWebhookEndpoint(ctx context.Context, id string) (bool, error) {
	var n int64
	err := inWriteTx(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, sqlstore.DeleteWebhookEndpoint.Postgres, id)
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		_, err = tx.Exec(ctx, sqlstore.DeleteWebhookEndpointWork.Postgres, id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("delete webhook endpoint: %w", err)
	}
	return n > 0, nil
}

func (s webhookRows) queryDeliveries(ctx context.Context, what, q string, args ...any) ([]podium.WebhookDelivery, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (podium.WebhookDelivery, error) {
		return sqlstore.ScanWebhookDelivery(r)
	})
	return out, wrap(what, err)
}

// WebhookQueue returns an endpoint's pending deliveries by event seq.
func (s webhookRows) WebhookQueue(ctx context.Context, endpoint string, limit int) ([]podium.WebhookDelivery, error) {
	return s.queryDeliveries(ctx, "webhook queue", sqlstore.WebhookQueue.Postgres, endpoint, limit)
}

// WebhookDeliveries returns a page of an endpoint's delivery log.
func (s webhookRows) WebhookDeliveries(ctx context.Context, q podium.WebhookDeliveryQuery) ([]podium.WebhookDelivery, error) {
	return s.queryDeliveries(ctx, "webhook deliveries", sqlstore.WebhookDeliveries.Postgres,
		q.Endpoint, q.Status, q.Status, q.Before, q.Before, q.Limit)
}

// SetWebhookDelivery stores how a delivery went.
func (s webhookRows) SetWebhookDelivery(ctx context.Context, d *podium.WebhookDelivery) (bool, error) {
	tag, err := s.pool.Exec(ctx, sqlstore.SetWebhookDelivery.Postgres, d.Status, int64(d.Attempts), podium.Millis(d.Next),
		d.LastError, int64(d.LastStatus), d.Latency.Milliseconds(), podium.Millis(d.UpdatedAt), d.Endpoint, d.Event.ID)
	if err != nil {
		return false, fmt.Errorf("set webhook delivery: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// RedeliverWebhooks makes the deliveries r selects pending again.
func (s webhookRows) RedeliverWebhooks(ctx context.Context, r podium.WebhookRedelivery, now time.Time) (int, error) {
	ms := podium.Millis(now)
	var (
		tag pgconn.CommandTag
		err error
	)
	if r.Event != "" {
		tag, err = s.pool.Exec(ctx, sqlstore.RedeliverWebhook.Postgres, ms, ms, ms, r.Endpoint, r.Event)
	} else {
		tag, err = s.pool.Exec(ctx, sqlstore.RedeliverWebhooks.Postgres, ms, ms, ms, r.Endpoint,
			podium.Millis(r.From), podium.Millis(r.To))
	}
	if err != nil {
		return 0, fmt.Errorf("redeliver webhooks: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// WebhookBacklog returns the pending deliveries of each endpoint.
func (s webhookRows) WebhookBacklog(ctx context.Context) (map[string]int, error) {
	rows, err := s.pool.Query(ctx, sqlstore.WebhookBacklog.Postgres)
	if err != nil {
		return nil, fmt.Errorf("webhook backlog: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var (
			ep string
			n  int64
		)
		if err := rows.Scan(&ep, &n); err != nil {
			return nil, fmt.Errorf("webhook backlog: %w", err)
		}
		out[ep] = int(n)
	}
	return out, wrap("webhook backlog", rows.Err())
}

// DropWebhooks marks up to limit of an endpoint's oldest pending
// deliveries dropped.
func (s webhookRows) DropWebhooks(ctx context.Context, endpoint string, limit int, reason string, now time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, sqlstore.DropWebhooks.Postgres, reason, podium.Millis(now), endpoint, endpoint, int64(limit))
	if err != nil {
		return 0, fmt.Errorf("drop webhooks: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// PruneWebhooks deletes up to limit ended deliveries and up to limit
// unreferenced events, made before before: two statements, each its own
// short transaction.
func (s webhookRows) PruneWebhooks(ctx context.Context, before time.Time, limit int) (int, int, error) {
	var n [2]int
	for i, q := range []string{sqlstore.PruneWebhookDeliveries.Postgres, sqlstore.PruneWebhookEvents.Postgres} {
		tag, err := s.pool.Exec(ctx, q, podium.Millis(before), int64(limit))
		if err != nil {
			return n[0], n[1], fmt.Errorf("prune webhooks: %w", err)
		}
		n[i] = int(tag.RowsAffected())
	}
	return n[0], n[1], nil
}
