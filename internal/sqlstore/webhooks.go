package sqlstore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/podiumhq/podium"
)

// The columns of a webhook endpoint, and of a delivery joined with its
// event (as d and e), in the order the stores scan them.
const (
	WebhookEndpointCols = "id, url, types, prefix, secret, prev_secret, prev_until_ms, disabled, created_ms, updated_ms"
	webhookDeliveryCols = `d.endpoint, d.status, d.attempts, d.born_ms, d.next_ms, d.last_error, d.last_status,
		d.latency_ms, d.updated_ms, e.id, e.seq, e.type, e.board, e.at_ms, e.payload`
)

// Webhooks (podium.WebhookStore).
var (
	PutWebhookEndpoint = New("INSERT INTO webhook_endpoints (" + WebhookEndpointCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET url = excluded.url,
		types = excluded.types, prefix = excluded.prefix, secret = excluded.secret,
		prev_secret = excluded.prev_secret, prev_until_ms = excluded.prev_until_ms,
		disabled = excluded.disabled, created_ms = excluded.created_ms, updated_ms = excluded.updated_ms`)
	WebhookEndpoints          = New("SELECT " + WebhookEndpointCols + " FROM webhook_endpoints ORDER BY id")
	DeleteWebhookEndpoint     = New("DELETE FROM webhook_endpoints WHERE id = ?")
	DeleteWebhookEndpointWork = New("DELETE FROM webhook_deliveries WHERE endpoint = ?")
	WebhookQueue              = New("SELECT " + webhookDeliveryCols + ` FROM webhook_deliveries d
		JOIN webhook_events e ON e.id = d.event
		WHERE d.endpoint = ? AND d.status = 'pending' ORDER BY d.seq LIMIT ?`)
	// A delivery dropped while it was tried stays dropped.
	SetWebhookDelivery = New(`UPDATE webhook_deliveries SET status = ?, attempts = ?, next_ms = ?, last_error = ?,
		last_status = ?, latency_ms = ?, updated_ms = ? WHERE endpoint = ? AND event = ? AND status = 'pending'`)
	WebhookDeliveries = New("SELECT " + webhookDeliveryCols + ` FROM webhook_deliveries d
		JOIN webhook_events e ON e.id = d.event
		WHERE d.endpoint = ? AND (? = '' OR d.status = ?) AND (? = 0 OR d.seq < ?) ORDER BY d.seq DESC LIMIT ?`)
	RedeliverWebhook = New(`UPDATE webhook_deliveries SET status = 'pending', attempts = 0, born_ms = ?, next_ms = ?,
		updated_ms = ? WHERE endpoint = ? AND event = ?`)
	RedeliverWebhooks = New(`UPDATE webhook_deliveries SET status = 'pending', attempts = 0, born_ms = ?, next_ms = ?,
		updated_ms = ? WHERE endpoint = ? AND event IN (SELECT id FROM webhook_events WHERE at_ms >= ? AND at_ms < ?)`)
	WebhookBacklog = New("SELECT endpoint, count(*) FROM webhook_deliveries WHERE status = 'pending' GROUP BY endpoint")
	// (endpoint, seq) is unique: an event has one seq and one delivery
	// per endpoint. The queue's index serves both scans.
	DropWebhooks = New(`UPDATE webhook_deliveries SET status = 'dropped', last_error = ?, updated_ms = ?
		WHERE endpoint = ? AND status = 'pending' AND seq IN (SELECT seq FROM webhook_deliveries
		WHERE endpoint = ? AND status = 'pending' ORDER BY seq LIMIT ?)`)
	// The prunes, in bounded batches (0130_webhook_retention's indexes).
	PruneWebhookDeliveries = New(`DELETE FROM webhook_deliveries WHERE (endpoint, event) IN (SELECT endpoint, event
		FROM webhook_deliveries WHERE status IN ('delivered', 'failed', 'dropped') AND updated_ms < ? LIMIT ?)`)
	PruneWebhookEvents = New(`DELETE FROM webhook_events WHERE seq IN (SELECT e.seq FROM webhook_events e
		WHERE e.at_ms < ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event = e.id) LIMIT ?)`)
)

// WebhookTypesJSON is the types column of ep: a JSON array, never null.
func WebhookTypesJSON(types []string) string {
	if types == nil {
		types = []string{}
	}
	b, _ := json.Marshal(types) // strings only
	return string(b)
}

// ScanWebhookEndpoint reads a row of WebhookEndpointCols.
func ScanWebhookEndpoint(r Scanner) (podium.WebhookEndpoint, error) {
	var (
		ep                      podium.WebhookEndpoint
		types                   string
		until, created, updated int64
		disabled                int64
	)
	if err := r.Scan(&ep.ID, &ep.URL, &types, &ep.Prefix, &ep.Secret, &ep.PrevSecret, &until, &disabled, &created, &updated); err != nil {
		return ep, err
	}
	if err := json.Unmarshal([]byte(types), &ep.Types); err != nil {
		return ep, fmt.Errorf("endpoint %s: types: %w", ep.ID, err)
	}
	if ep.Types == nil {
		ep.Types = []string{}
	}
	ep.Disabled = disabled != 0
	ep.PrevUntil, ep.CreatedAt, ep.UpdatedAt = podium.FromMillis(until), podium.FromMillis(created), podium.FromMillis(updated)
	return ep, nil
}

// ScanWebhookDelivery reads a row of a delivery joined with its event.
func ScanWebhookDelivery(r Scanner) (podium.WebhookDelivery, error) {
	var (
		d                                podium.WebhookDelivery
		born, next, latency, updated, at int64
		attempts, lastStatus             int64
		payload                          string
	)
	err := r.Scan(&d.Endpoint, &d.Status, &attempts, &born, &next, &d.LastError, &lastStatus, &latency, &updated,
		&d.Event.ID, &d.Event.Seq, &d.Event.Type, &d.Event.Board, &at, &payload)
	if err != nil {
		return d, err
	}
	d.Attempts, d.LastStatus = int(attempts), int(lastStatus)
	d.Born, d.Next, d.UpdatedAt, d.Event.At = podium.FromMillis(born), podium.FromMillis(next), podium.FromMillis(updated), podium.FromMillis(at)
	d.Latency = time.Duration(latency) * time.Millisecond
	d.Event.Payload = json.RawMessage(payload)
	return d, nil
}

// Bool is a boolean as an integer column.
func Bool(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
