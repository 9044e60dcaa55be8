package http

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/webhooks"
)

// webhookHandlers serves the admin's webhooks: endpoints, their delivery
// log and redeliveries (docs/API.md, "Webhooks"). Every route is for a
// global admin.
type webhookHandlers struct {
	*base
	wh webhookStore
}

// webhookStore is what the handlers call of the webhooks module
// (webhooks/admin.go).
type webhookStore interface {
	CreateEndpoint(ctx context.Context, s webhooks.EndpointSpec) (podium.WebhookEndpoint, error)
	Endpoints(ctx context.Context) ([]podium.WebhookEndpoint, error)
	Endpoint(ctx context.Context, id string) (podium.WebhookEndpoint, error)
	UpdateEndpoint(ctx context.Context, id string, s webhooks.EndpointSpec) (podium.WebhookEndpoint, error)
	RotateSecret(ctx context.Context, id string) (podium.WebhookEndpoint, error)
	DeleteEndpoint(ctx context.Context, id string) error
	Deliveries(ctx context.Context, q podium.WebhookDeliveryQuery) ([]podium.WebhookDelivery, error)
	Redeliver(ctx context.Context, r podium.WebhookRedelivery) (int, error)
}

var _ webhookStore = (*webhooks.Module)(nil)

// noWebhooks answers 503 when the engine has no webhooks module.
type noWebhooks struct{}

var errNoWebhooks = podium.Errorf(podium.ECodeUnavailable, "webhooks are not available on this server")

func (noWebhooks) CreateEndpoint(context.Context, webhooks.EndpointSpec) (podium.WebhookEndpoint, error) {
	return podium.WebhookEndpoint{}, errNoWebhooks
}
func (noWebhooks) Endpoints(context.Context) ([]podium.WebhookEndpoint, error) {
	return nil, errNoWebhooks
}
func (noWebhooks) Endpoint(context.Context, string) (podium.WebhookEndpoint, error) {
	return podium.WebhookEndpoint{}, errNoWebhooks
}
func (noWebhooks) UpdateEndpoint(context.Context, string, webhooks.EndpointSpec) (podium.WebhookEndpoint, error) {
	return podium.WebhookEndpoint{}, errNoWebhooks
}
func (noWebhooks) RotateSecret(context.Context, string) (podium.WebhookEndpoint, error) {
	return podium.WebhookEndpoint{}, errNoWebhooks
}
func (noWebhooks) DeleteEndpoint(context.Context, string) error { return errNoWebhooks }
func (noWebhooks) Deliveries(context.Context, podium.WebhookDeliveryQuery) ([]podium.WebhookDelivery, error) {
	return nil, errNoWebhooks
}
func (noWebhooks) Redeliver(context.Context, podium.WebhookRedelivery) (int, error) {
	return 0, errNoWebhooks
}

// findWebhooks returns the engine's webhooks module, or noWebhooks.
func findWebhooks(e *engine.Engine) webhookStore {
	for _, m := range e.Modules() {
		if x, ok := m.(webhookStore); ok {
			return x
		}
	}
	return noWebhooks{}
}

// maxWebhookID bounds an endpoint or event id in a path or body.
const maxWebhookID = 64

// endpointBody is the body of a create or an update (absent: unchanged).
type endpointBody struct {
	URL      *string  `json:"url"`
	Types    []string `json:"types"`
	Prefix   *string  `json:"prefix"`
	Disabled *bool    `json:"disabled"`
}

// redeliverBody names one event, or a time range of events.
type redeliverBody struct {
	Event *string `json:"event"`
	From  *string `json:"from"`
	To    *string `json:"to"`
}

func (b *endpointBody) spec() webhooks.EndpointSpec {
	return webhooks.EndpointSpec{URL: b.URL, Types: b.Types, Prefix: b.Prefix, Disabled: b.Disabled}
}

// appendEndpoint appends an endpoint; secret is shown only when set (a
// create or a rotation: the one time it is).
func appendEndpoint(b []byte, ep *podium.WebhookEndpoint, secret string) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, ep.ID)
	b = append(b, `,"url":`...)
	b = appendString(b, ep.URL)
	b = append(b, `,"types":`...)
	b = appendStrings(b, ep.Types)
	b = append(b, `,"prefix":`...)
	b = appendString(b, ep.Prefix)
	b = append(b, `,"disabled":`...)
	b = strconv.AppendBool(b, ep.Disabled)
	b = append(b, `,"created_at":`...)
	b = appendTime(b, ep.CreatedAt)
	b = append(b, `,"updated_at":`...)
	b = appendTime(b, ep.UpdatedAt)
	if secret != "" {
		b = append(b, `,"secret":`...)
		b = appendString(b, secret)
	}
	return append(b, '}')
}

// appendDelivery appends one row of the delivery log.
func appendDelivery(b []byte, d *podium.WebhookDelivery) []byte {
	b = append(b, `{"event":{"id":`...)
	b = appendString(b, d.Event.ID)
	b = append(b, `,"type":`...)
	b = appendString(b, d.Event.Type)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, d.Event.Seq, 10)
	b = append(b, `,"board":`...)
	b = appendString(b, d.Event.Board)
	b = append(b, `,"at":`...)
	b = appendTime(b, d.Event.At)
	b = append(b, `,"data":`...)
	b = append(b, d.Event.Payload...)
	b = append(b, `},"status":`...)
	b = appendString(b, d.Status)
	b = append(b, `,"attempts":`...)
	b = strconv.AppendInt(b, int64(d.Attempts), 10)
	if d.Status == podium.WebhookPending {
		b = append(b, `,"next_attempt_at":`...)
		b = appendTime(b, d.Next)
	}
	b = append(b, `,"last_status":`...)
	b = strconv.AppendInt(b, int64(d.LastStatus), 10)
	b = append(b, `,"last_error":`...)
	b = appendString(b, d.LastError)
	b = append(b, `,"latency_ms":`...)
	b = strconv.AppendInt(b, d.Latency.Milliseconds(), 10)
	b = append(b, `,"updated_at":`...)
	b = appendTime(b, d.UpdatedAt)
	return append(b, '}')
}

// webhookID reads the {id} of the path.
func webhookID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if id == "" || len(id) > maxWebhookID {
		return "", podium.Errorf(podium.ECodeInvalid, "a webhook endpoint id is 1 to %d characters", maxWebhookID)
	}
	return id, nil
}

// decodeEndpoint reads the body of a create or an update.
func (s *webhookHandlers) decodeEndpoint(r *http.Request) (endpointBody, error) {
	var body endpointBody
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return body, err
	}
	defer putBody(buf)
	return body, decodeStrict(buf.Bytes(), &body)
}

func (s *webhookHandlers) createEndpoint(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	body, err := s.decodeEndpoint(r)
	if err != nil {
		return err
	}
	ep, err := s.wh.CreateEndpoint(r.Context(), body.spec())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, appendEndpoint(nil, &ep, ep.Secret))
	return nil
}

func (s *webhookHandlers) listEndpoints(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	eps, err := s.wh.Endpoints(r.Context())
	if err != nil {
		return err
	}
	b := appendList([]byte(`{"webhooks":[`), eps, func(b []byte, ep *podium.WebhookEndpoint) []byte { return appendEndpoint(b, ep, "") })
	writeJSON(w, http.StatusOK, append(b, "]}"...))
	return nil
}

func (s *webhookHandlers) getEndpoint(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	ep, err := s.wh.Endpoint(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, appendEndpoint(nil, &ep, ""))
	return nil
}

func (s *webhookHandlers) updateEndpoint(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	body, err := s.decodeEndpoint(r)
	if err != nil {
		return err
	}
	ep, err := s.wh.UpdateEndpoint(r.Context(), id, body.spec())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, appendEndpoint(nil, &ep, ""))
	return nil
}

func (s *webhookHandlers) rotateSecret(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	ep, err := s.wh.RotateSecret(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, appendEndpoint(nil, &ep, ep.Secret))
	return nil
}

func (s *webhookHandlers) deleteEndpoint(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	if err := s.wh.DeleteEndpoint(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *webhookHandlers) deliveries(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", 50, 1, webhooks.MaxPage)
	if err != nil {
		return err
	}
	before, err := queryInt(r, "before", 0, 0, 1<<62)
	if err != nil {
		return err
	}
	status, _ := queryValue(r, "status")
	ds, err := s.wh.Deliveries(r.Context(), podium.WebhookDeliveryQuery{Endpoint: id, Status: status, Before: int64(before), Limit: limit})
	if err != nil {
		return err
	}
	b := appendList([]byte(`{"deliveries":[`), ds, appendDelivery)
	b = append(b, ']')
	if len(ds) == limit {
		b = append(b, `,"next_before":`...)
		b = strconv.AppendInt(b, ds[len(ds)-1].Event.Seq, 10)
	}
	writeJSON(w, http.StatusOK, append(b, '}'))
	return nil
}

func (s *webhookHandlers) redeliver(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.requireGlobalAdmin(r); err != nil {
		return err
	}
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	buf, err := readBody(r, s.maxBody)
	if err != nil {
		return err
	}
	defer putBody(buf)
	var body redeliverBody
	if err := decodeStrict(buf.Bytes(), &body); err != nil {
		return err
	}
	q := podium.WebhookRedelivery{Endpoint: id}
	if body.Event != nil {
		q.Event = *body.Event
		if q.Event == "" || len(q.Event) > maxWebhookID {
			return podium.Errorf(podium.ECodeInvalid, "event is an event id of 1 to %d characters", maxWebhookID)
		}
	}
	for _, f := range []struct {
		name string
		v    *string
		to   *time.Time
	}{{"from", body.From, &q.From}, {"to", body.To, &q.To}} {
		if f.v == nil {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, *f.v)
		if err != nil || len(*f.v) > 40 {
			return podium.Errorf(podium.ECodeInvalid, "%s is an RFC 3339 time", f.name)
		}
		*f.to = t
	}
	n, err := s.wh.Redeliver(r.Context(), q)
	if err != nil {
		return err
	}
	b := append([]byte(`{"redelivered":`), strconv.AppendInt(nil, int64(n), 10)...)
	writeJSON(w, http.StatusAccepted, append(b, '}'))
	return nil
}
