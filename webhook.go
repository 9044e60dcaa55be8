package podium

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Webhooks (package webhooks): admins register endpoints; the writer
// stores an event in the outbox, with a delivery per endpoint that
// subscribes to it, in the same transaction as the change that caused it
// (WebhookStore.WebhookPart); a worker delivers them.

// WebhookEndpoint is a destination of webhook events.
type WebhookEndpoint struct {
	ID  string
	URL string
	// Types are the event types it receives (webhooks.EventTypes).
	Types []string
	// Prefix, when set, limits it to events of boards whose id starts
	// with it.
	Prefix string
	// Secret signs the deliveries ("whsec_..."); PrevSecret, while
	// PrevUntil is ahead, signs them too (a rotation's grace).
	Secret     string
	PrevSecret string
	PrevUntil  time.Time
	Disabled   bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// WebhookEvent is one event of the outbox.
type WebhookEvent struct {
	// ID is derived from what caused the event, so that every node, and
	// a second run of the same change, names it alike: the store keeps
	// the first.
	ID string
	// Seq is the store's order of the outbox, set when it is stored
	// (per-endpoint delivery order).
	Seq     int64
	Type    string
	Board   string // the board it is about ("" if none)
	At      time.Time
	Payload json.RawMessage // the event's data, a JSON object
	// Endpoints get a delivery each when the event is stored (not read
	// back).
	Endpoints []string
}

// Webhook delivery statuses.
const (
	WebhookPending   = "pending"
	WebhookDelivered = "delivered"
	WebhookFailed    = "failed"
	// WebhookDropped is a delivery the worker gave up on, untried or
	// not, because the outbox was over its budget (webhooks.Config.Budget).
	WebhookDropped = "dropped"
)

// WebhookDelivery is one event's delivery to one endpoint.
type WebhookDelivery struct {
	Endpoint string
	Event    WebhookEvent // Endpoints empty
	Status   string
	Attempts int
	// Born starts its retry window (the event's time, or when it was
	// last redelivered); Next is when it is tried next (pending).
	Born       time.Time
	Next       time.Time
	LastError  string
	LastStatus int           // the last HTTP status, 0 if none came
	Latency    time.Duration // of the last attempt
	UpdatedAt  time.Time
}

// WebhookDeliveryQuery selects a page of an endpoint's delivery log,
// newest event first.
type WebhookDeliveryQuery struct {
	Endpoint string
	Status   string // "" for any
	Before   int64  // event seq; 0: from the newest
	Limit    int
}

// WebhookRedelivery selects deliveries of an endpoint to try again: the
// one of event Event, or those of events made in [From, To).
type WebhookRedelivery struct {
	Endpoint string
	Event    string
	From, To time.Time
}

// MaxWebhookPayload is the largest event payload stored.
const MaxWebhookPayload = 16 << 10

// Check reports what no store can keep of ev.
func (ev *WebhookEvent) Check() error {
	if ev.ID == "" || ev.Type == "" {
		return fmt.Errorf("webhook event %q has no id or type", ev.ID)
	}
	if len(ev.Payload) > MaxWebhookPayload {
		return fmt.Errorf("webhook event %s: payload of %d bytes", ev.ID, len(ev.Payload))
	}
	return nil
}

// CheckWebhookEvents reports what no store can keep of evs (the Check of
// every store's WebhookPart).
func CheckWebhookEvents(evs []WebhookEvent) error {
	for i := range evs {
		if err := evs[i].Check(); err != nil {
			return err
		}
	}
	return nil
}

// WebhookStore is the optional Store ability that webhooks need; both
// sqlite.Store and postgres.Store have it, and storetest covers it.
type WebhookStore interface {
	// WebhookPart returns evs as a part of a Batch this store commits:
	// each event is stored unless one with its id is (then it is kept as
	// it is), and a pending delivery is made for each of its Endpoints
	// that has none of it yet.
	WebhookPart(evs []WebhookEvent) Part
	// PutWebhookEndpoint stores ep, replacing the endpoint with its id.
	PutWebhookEndpoint(ctx context.Context, ep *WebhookEndpoint) error
	// WebhookEndpoints lists the endpoints by id.
	WebhookEndpoints(ctx context.Context) ([]WebhookEndpoint, error)
	// DeleteWebhookEndpoint deletes an endpoint and its deliveries;
	// false if there was none.
	DeleteWebhookEndpoint(ctx context.Context, id string) (bool, error)
	// WebhookQueue returns up to limit pending deliveries of an endpoint,
	// by event seq, each with its event.
	WebhookQueue(ctx context.Context, endpoint string, limit int) ([]WebhookDelivery, error)
	// SetWebhookDelivery stores how a delivery went: its Status,
	// Attempts, Next, LastError, LastStatus, Latency and UpdatedAt
	// (found by Endpoint and Event.ID; false if it no longer exists or
	// is no longer pending: a drop while it was tried wins).
	SetWebhookDelivery(ctx context.Context, d *WebhookDelivery) (bool, error)
	// WebhookDeliveries returns a page of an endpoint's deliveries, each
	// with its event, newest first.
	WebhookDeliveries(ctx context.Context, q WebhookDeliveryQuery) ([]WebhookDelivery, error)
	// RedeliverWebhooks makes the deliveries r selects pending again, due
	// at now with a new retry window from now; it returns how many.
	RedeliverWebhooks(ctx context.Context, r WebhookRedelivery, now time.Time) (int, error)
	// WebhookBacklog returns the number of pending deliveries of each
	// endpoint that has any.
	WebhookBacklog(ctx context.Context) (map[string]int, error)
	// DropWebhooks marks up to limit of an endpoint's pending
	// deliveries, the oldest (lowest event seq) first, WebhookDropped
	// with LastError reason and UpdatedAt now; it returns how many.
	DropWebhooks(ctx context.Context, endpoint string, limit int, reason string, now time.Time) (int, error)
	// PruneWebhooks deletes up to limit deliveries that are not pending
	// and were last updated before before, then up to limit events made
	// before before that no delivery refers to; it returns how many rows
	// of each it deleted.
	PruneWebhooks(ctx context.Context, before time.Time, limit int) (deliveries, events int, err error)
}
