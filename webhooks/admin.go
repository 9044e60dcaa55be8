package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"slices"
	"time"

	"github.com/podiumhq/podium"
)

// The admin's management of endpoints and deliveries, which http's
// webhook handlers call. Every error is a *podium.Error: ECodeInvalid for
// bad input, ECodeNotFound, ECodeUnavailable when the store fails or
// keeps no webhooks.

// Limits of the admin's input.
const (
	MaxEndpoints = 100 // endpoints in all
	MaxPrefix    = 128 // bytes of a prefix
	MaxPage      = 200 // deliveries a page
	// RotateGrace is how long the previous secret still signs deliveries
	// after a rotation, so that a receiver can switch without a gap.
	RotateGrace = 24 * time.Hour
)

var prefixRe = regexp.MustCompile(`^[a-z0-9_.:-]*$`)

// EndpointSpec is what an admin sets of an endpoint (nil: unchanged, on
// an update).
type EndpointSpec struct {
	URL      *string
	Types    []string // nil: unchanged
	Prefix   *string
	Disabled *bool
}

func (m *Module) errUnavailable(what string, err error) error {
	m.log.Error("webhooks: "+what, "err", err)
	return podium.Errorf(podium.ECodeUnavailable, "webhooks: %s: storage unavailable", what)
}

// ErrOff is the error of every call when the store keeps no webhooks.
var ErrOff = podium.Errorf(podium.ECodeUnavailable, "webhooks are not available on this store")

func (m *Module) ready() error {
	if m.store == nil {
		return ErrOff
	}
	return nil
}

// check validates s's set fields; create requires URL and Types.
func (m *Module) check(s *EndpointSpec, create bool) error {
	if create && (s.URL == nil || s.Types == nil) {
		return podium.Errorf(podium.ECodeInvalid, "an endpoint needs a url and its event types")
	}
	if s.URL != nil {
		if err := m.guard.CheckURL(*s.URL); err != nil {
			return podium.Errorf(podium.ECodeInvalid, "%s", err.Error())
		}
	}
	if s.Types != nil {
		if len(s.Types) == 0 || len(s.Types) > len(Types) {
			return podium.Errorf(podium.ECodeInvalid, "types lists 1 to %d event types", len(Types))
		}
		for i, t := range s.Types {
			if !knownType(t) {
				return podium.Errorf(podium.ECodeInvalid, "unknown event type %q (known: %v)", t, Types)
			}
			if slices.Contains(s.Types[:i], t) {
				return podium.Errorf(podium.ECodeInvalid, "event type %q is listed twice", t)
			}
		}
	}
	if s.Prefix != nil && (len(*s.Prefix) > MaxPrefix || !prefixRe.MatchString(*s.Prefix)) {
		return podium.Errorf(podium.ECodeInvalid, "prefix is at most %d characters of a board id ([a-z0-9_.:-])", MaxPrefix)
	}
	return nil
}

// installed reloads the endpoints after the admin changed one, and
// wakes the worker.
func (m *Module) installed(ctx context.Context) {
	if err := m.reload(ctx); err != nil {
		m.log.Warn("webhooks: reload endpoints", "err", err)
	}
	m.Poke()
}

// CreateEndpoint makes an endpoint with a new secret, which the answer
// is the only place to show. Errors: ECodeInvalid, ECodeUnavailable.
func (m *Module) CreateEndpoint(ctx context.Context, s EndpointSpec) (podium.WebhookEndpoint, error) {
	if err := m.ready(); err != nil {
		return podium.WebhookEndpoint{}, err
	}
	if err := m.check(&s, true); err != nil {
		return podium.WebhookEndpoint{}, err
	}
	m.amu.Lock()
	defer m.amu.Unlock()
	if err := m.reload(ctx); err != nil {
		return podium.WebhookEndpoint{}, m.errUnavailable("create endpoint", err)
	}
	if len(m.eps.Load().all) >= MaxEndpoints {
		return podium.WebhookEndpoint{}, podium.Errorf(podium.ECodeInvalid, "at most %d webhook endpoints", MaxEndpoints)
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	now := m.host.Now().UTC().Truncate(time.Millisecond)
	ep := podium.WebhookEndpoint{ID: "wh_" + hex.EncodeToString(id[:]), URL: *s.URL, Types: s.Types,
		Secret: NewSecret(), CreatedAt: now, UpdatedAt: now}
	if s.Prefix != nil {
		ep.Prefix = *s.Prefix
	}
	if s.Disabled != nil {
		ep.Disabled = *s.Disabled
	}
	if err := m.store.PutWebhookEndpoint(ctx, &ep); err != nil {
		return podium.WebhookEndpoint{}, m.errUnavailable("create endpoint", err)
	}
	m.installed(ctx)
	return ep, nil
}

// Endpoints lists the endpoints, by id (secrets included: the caller
// hides them). Errors: ECodeUnavailable.
func (m *Module) Endpoints(ctx context.Context) ([]podium.WebhookEndpoint, error) {
	if err := m.ready(); err != nil {
		return nil, err
	}
	eps, err := m.store.WebhookEndpoints(ctx)
	if err != nil {
		return nil, m.errUnavailable("list endpoints", err)
	}
	return eps, nil
}

// Endpoint returns one endpoint. Errors: ECodeNotFound, ECodeUnavailable.
func (m *Module) Endpoint(ctx context.Context, id string) (podium.WebhookEndpoint, error) {
	eps, err := m.Endpoints(ctx)
	if err != nil {
		return podium.WebhookEndpoint{}, err
	}
	for _, ep := range eps {
		if ep.ID == id {
			return ep, nil
		}
	}
	return podium.WebhookEndpoint{}, podium.Errorf(podium.ECodeNotFound, "webhook endpoint %q does not exist", id)
}

// change applies fn to endpoint id and stores it.
func (m *Module) change(ctx context.Context, id string, fn func(ep *podium.WebhookEndpoint)) (podium.WebhookEndpoint, error) {
	m.amu.Lock()
	defer m.amu.Unlock()
	ep, err := m.Endpoint(ctx, id)
	if err != nil {
		return ep, err
	}
	fn(&ep)
	ep.UpdatedAt = m.host.Now().UTC().Truncate(time.Millisecond)
	if err := m.store.PutWebhookEndpoint(ctx, &ep); err != nil {
		return podium.WebhookEndpoint{}, m.errUnavailable("update endpoint", err)
	}
	m.installed(ctx)
	return ep, nil
}

// UpdateEndpoint changes what s sets. Errors: ECodeInvalid,
// ECodeNotFound, ECodeUnavailable.
func (m *Module) UpdateEndpoint(ctx context.Context, id string, s EndpointSpec) (podium.WebhookEndpoint, error) {
	if err := m.ready(); err != nil {
		return podium.WebhookEndpoint{}, err
	}
	if err := m.check(&s, false); err != nil {
		return podium.WebhookEndpoint{}, err
	}
	return m.change(ctx, id, func(ep *podium.WebhookEndpoint) {
		if s.URL != nil {
			ep.URL = *s.URL
		}
		if s.Types != nil {
			ep.Types = s.Types
		}
		if s.Prefix != nil {
			ep.Prefix = *s.Prefix
		}
		if s.Disabled != nil {
			ep.Disabled = *s.Disabled
		}
	})
}

// RotateSecret gives an endpoint a new secret, returned once; the old
// one also signs deliveries for RotateGrace. Errors: ECodeNotFound,
// ECodeUnavailable.
func (m *Module) RotateSecret(ctx context.Context, id string) (podium.WebhookEndpoint, error) {
	if err := m.ready(); err != nil {
		return podium.WebhookEndpoint{}, err
	}
	return m.change(ctx, id, func(ep *podium.WebhookEndpoint) {
		ep.PrevSecret, ep.PrevUntil = ep.Secret, m.host.Now().Add(RotateGrace)
		ep.Secret = NewSecret()
	})
}

// DeleteEndpoint deletes an endpoint and its deliveries. Errors:
// ECodeNotFound, ECodeUnavailable.
func (m *Module) DeleteEndpoint(ctx context.Context, id string) error {
	if err := m.ready(); err != nil {
		return err
	}
	m.amu.Lock()
	defer m.amu.Unlock()
	ok, err := m.store.DeleteWebhookEndpoint(ctx, id)
	if err != nil {
		return m.errUnavailable("delete endpoint", err)
	}
	if !ok {
		return podium.Errorf(podium.ECodeNotFound, "webhook endpoint %q does not exist", id)
	}
	m.installed(ctx)
	return nil
}

// Deliveries returns a page of an endpoint's delivery log, newest first.
// Errors: ECodeInvalid (a limit outside 1..MaxPage, an unknown status),
// ECodeNotFound, ECodeUnavailable.
func (m *Module) Deliveries(ctx context.Context, q podium.WebhookDeliveryQuery) ([]podium.WebhookDelivery, error) {
	if _, err := m.Endpoint(ctx, q.Endpoint); err != nil {
		return nil, err
	}
	if q.Limit < 1 || q.Limit > MaxPage {
		return nil, podium.Errorf(podium.ECodeInvalid, "limit is 1 to %d", MaxPage)
	}
	switch q.Status {
	case "", podium.WebhookPending, podium.WebhookDelivered, podium.WebhookFailed, podium.WebhookDropped:
	default:
		return nil, podium.Errorf(podium.ECodeInvalid, "status is pending, delivered, failed or dropped")
	}
	if q.Before < 0 {
		return nil, podium.Errorf(podium.ECodeInvalid, "before is a positive event seq")
	}
	ds, err := m.store.WebhookDeliveries(ctx, q)
	if err != nil {
		return nil, m.errUnavailable("delivery log", err)
	}
	return ds, nil
}

// Redeliver makes the deliveries r selects (one event, or the events of
// a time range) pending again, due now, with a new retry window; it
// returns how many. Errors: ECodeInvalid, ECodeNotFound (the endpoint;
// or the event, when one is named and the endpoint has no delivery of it),
// ECodeUnavailable.
func (m *Module) Redeliver(ctx context.Context, r podium.WebhookRedelivery) (int, error) {
	if _, err := m.Endpoint(ctx, r.Endpoint); err != nil {
		return 0, err
	}
	if (r.Event == "") == (r.From.IsZero() && r.To.IsZero()) {
		return 0, podium.Errorf(podium.ECodeInvalid, "name either an event or a time range (from and to)")
	}
	if r.Event == "" && (r.From.IsZero() || r.To.IsZero() || !r.From.Before(r.To)) {
		return 0, podium.Errorf(podium.ECodeInvalid, "a time range needs from before to")
	}
	if len(r.Event) > 64 {
		return 0, podium.Errorf(podium.ECodeInvalid, "an event id is at most 64 characters")
	}
	n, err := m.store.RedeliverWebhooks(ctx, r, m.host.Now())
	if err != nil {
		return 0, m.errUnavailable("redeliver", err)
	}
	if n == 0 && r.Event != "" {
		return 0, podium.Errorf(podium.ECodeNotFound, "endpoint %q has no delivery of event %q", r.Endpoint, r.Event)
	}
	m.Poke()
	return n, nil
}
