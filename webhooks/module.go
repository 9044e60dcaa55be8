package webhooks

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Config configures the module; the zero value means the defaults.
type Config struct {
	// AllowPrivate lets endpoints be in loopback, link-local and private
	// ranges (--webhook-allow-private): a receiver on the same host or
	// network. Off, such destinations are refused when an endpoint is
	// saved and again, resolved, at each delivery.
	AllowPrivate bool
	// Timeout bounds one delivery attempt (default DefaultTimeout).
	Timeout time.Duration
	// Backoff paces retries; its Window (default 24h) is how long a
	// delivery is retried before it is failed.
	Backoff Backoff
	// Poll is how often the worker looks for due retries, and each node
	// reloads the endpoints another node may have changed (default 1s).
	Poll time.Duration
	// Concurrency is how many endpoints are delivered to at once
	// (default 16): a slow endpoint holds one of them, never the others.
	Concurrency int
	// Budget is how many deliveries may be pending, every endpoint
	// together, before the oldest are dropped (default DefaultBudget;
	// --webhook-outbox-budget): first those of disabled endpoints, then
	// those of the endpoint with the most pending (bound.go).
	Budget int
	// Retention is how long a delivery that ended (delivered, failed,
	// dropped), and an event no delivery refers to, are kept (default
	// DefaultRetention, at least Backoff.Window; --webhook-retention).
	// An event's id is derived from its cause and a stored id is kept:
	// once pruned, the same cause replayed would be a new event, so it
	// must outlast any replay.
	Retention time.Duration
	// PeriodTop is how many entries a period.ended event lists (default
	// DefaultPeriodTop, at most MaxPeriodTop; --webhook-period-top), and
	// how many teams a contest event lists.
	PeriodTop int
	// TimedGrace is how long after a period's end, a contest's freeze or
	// its end the event waits (default DefaultTimedGrace): scores dated
	// before it may still be in flight on another node.
	TimedGrace time.Duration
	// Attempted, if set, hears every attempt's outcome once it is stored
	// (tests wait on it rather than on time).
	Attempted func(podium.WebhookDelivery)
	// Bounded, if set, hears the pending deliveries each round's budget
	// check left (tests wait on it rather than on time).
	Bounded func(pending int)
}

// Module is the webhooks module.
type Module struct {
	cfg    Config
	guard  Guard
	client *Client
	host   engine.Host
	log    *slog.Logger
	store  podium.WebhookStore // nil: the store keeps no webhooks; the module is off
	lease  leaser              // nil: no lease (one node)
	holder string              // the lease's holder: this node's name

	// eps is the endpoints now, read by the writer without a lock.
	eps atomic.Pointer[endpointSet]
	// amu serializes the admin's writes of endpoints (admin.go), so that
	// each snapshot it installs holds them all. Lock order: docs/LOCKS.md.
	amu sync.Mutex

	// boardEvs are the events of the board changes being stored, from
	// BoardParts to BoardStored, by the board the event names (the
	// writer's alone). Several are stored at once when board PUTs share a
	// commit (engine/boardbatch.go).
	boardEvs map[*podium.Board]podium.WebhookEvent

	poke chan struct{} // wakes the worker (worker.go)
	w    worker
	tm   timed // the events that time causes (timed.go)

	m metrics
}

// leaser is the lease the worker holds while it delivers, so that one
// node at a time does (podium.TourneyStore's, which the settlement holds
// under another name).
type leaser interface {
	AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (podium.Lease, bool, error)
	ReleaseLease(ctx context.Context, name, holder string, epoch int64) error
}

// New returns the module.
func New(c Config) *Module {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	c.Backoff = c.Backoff.withDefaults()
	if c.Budget <= 0 {
		c.Budget = DefaultBudget
	}
	if c.Retention <= 0 {
		c.Retention = DefaultRetention
	}
	c.Retention = max(c.Retention, c.Backoff.Window)
	if c.PeriodTop <= 0 {
		c.PeriodTop = DefaultPeriodTop
	}
	c.PeriodTop = min(c.PeriodTop, MaxPeriodTop)
	if c.TimedGrace <= 0 {
		c.TimedGrace = DefaultTimedGrace
	}
	g := Guard{AllowPrivate: c.AllowPrivate}
	m := &Module{cfg: c, guard: g, client: NewClient(g, c.Timeout), poke: make(chan struct{}, 1)}
	m.eps.Store(&endpointSet{})
	return m
}

var (
	_ engine.Provisioner    = (*Module)(nil)
	_ engine.Loader         = (*Module)(nil)
	_ engine.Starter        = (*Module)(nil)
	_ engine.EventSink      = (*Module)(nil)
	_ engine.PartMaker      = (*Module)(nil)
	_ engine.Finisher       = (*Module)(nil)
	_ engine.BoardWatcher   = (*Module)(nil) // timed.go
	_ engine.BoardPartMaker = (*Module)(nil)
	_ engine.SignalSink     = (*Module)(nil) // review.go
)

// Name implements engine.Module.
func (m *Module) Name() string { return "webhooks" }

// Provision takes the store's webhooks, if it keeps them, and registers
// the metrics.
func (m *Module) Provision(h engine.Host) {
	m.host, m.log = h, h.Logger()
	// The lease's holder is the node's name, as the settlement's is: a
	// node restarted after a crash (one SQLite node is always "local")
	// takes back the lease it held at once, rather than waiting out the
	// TTL of its own dead process.
	m.holder = "webhooks/" + h.Node()
	ws, ok := h.Store().(podium.WebhookStore)
	if !ok {
		return
	}
	m.store = ws
	if l, ok := h.Store().(leaser); ok {
		m.lease = l
	}
	m.m = newMetrics()
	if reg := h.Registerer(); reg != nil {
		m.m.register(reg)
	}
}

// Load implements engine.Loader: the endpoints, and the schedule of the
// timed events (timed.go).
func (m *Module) Load(ctx context.Context) error {
	if m.store == nil {
		return nil
	}
	if err := m.reload(ctx); err != nil {
		return err
	}
	m.loadTimed()
	return nil
}

// reload reads the endpoints into a new snapshot.
func (m *Module) reload(ctx context.Context) error {
	eps, err := m.store.WebhookEndpoints(ctx)
	if err != nil {
		return err
	}
	m.eps.Store(newEndpointSet(eps))
	return nil
}

// endpointSet is the endpoints at one moment, and by event type the
// enabled ones that subscribe to it.
type endpointSet struct {
	all    []podium.WebhookEndpoint
	byType map[string][]*podium.WebhookEndpoint
}

func newEndpointSet(eps []podium.WebhookEndpoint) *endpointSet {
	s := &endpointSet{all: eps, byType: map[string][]*podium.WebhookEndpoint{}}
	for i := range s.all {
		ep := &s.all[i]
		if ep.Disabled {
			continue
		}
		for _, t := range ep.Types {
			s.byType[t] = append(s.byType[t], ep)
		}
	}
	return s
}

// match returns the enabled endpoints that take an event of typ about
// board.
func (s *endpointSet) match(typ, board string) []string {
	var ids []string
	for _, ep := range s.byType[typ] {
		if ep.Prefix == "" || strings.HasPrefix(board, ep.Prefix) {
			ids = append(ids, ep.ID)
		}
	}
	return ids
}

// outbox is what the module keeps with a group (Group.Slot): its events.
type outbox struct{ events []podium.WebhookEvent }

// newEvent makes the outbox event of typ about board caused by cause,
// for the endpoints that take it; ok false if none does.
func (m *Module) newEvent(typ, board, cause string, at time.Time, data any) (podium.WebhookEvent, bool) {
	if m.store == nil {
		return podium.WebhookEvent{}, false
	}
	to := m.eps.Load().match(typ, board)
	if len(to) == 0 {
		return podium.WebhookEvent{}, false // no endpoint: the write path pays nothing more
	}
	payload, err := json.Marshal(data)
	if err != nil || len(payload) > podium.MaxWebhookPayload {
		m.log.Error("webhooks: event data not stored", "type", typ, "board", board, "bytes", len(payload), "err", err)
		return podium.WebhookEvent{}, false
	}
	return podium.WebhookEvent{ID: eventID(typ, board, cause), Type: typ, Board: board,
		At: at.UTC().Truncate(time.Millisecond), Payload: payload, Endpoints: to}, true
}

// Event implements engine.EventSink: an activity event of the group
// becomes an outbox event in the group's commit, if an endpoint takes it.
func (m *Module) Event(g *engine.Group, ev podium.FeedEvent) {
	// Most scores' events go to no endpoint: find that out before
	// anything is built for one (this runs on the writer, per event).
	if typ := feedType(ev.Kind); typ == "" || m.store == nil || len(m.eps.Load().match(typ, ev.Board)) == 0 {
		return
	}
	typ, data, ok := fromFeed(&ev)
	if !ok {
		return
	}
	// The activity feed's identity of the event, (board, seq, kind), is
	// the cause: the same on every node that could compute it.
	out, ok := m.newEvent(typ, ev.Board, ev.ID(), ev.At, data)
	if !ok {
		return
	}
	m.add(g, out)
}

// add keeps an outbox event with the group, for its commit (Parts).
func (m *Module) add(g *engine.Group, ev podium.WebhookEvent) {
	o, _ := g.Slot(m).(*outbox)
	if o == nil {
		o = &outbox{}
		g.SetSlot(m, o)
	}
	o.events = append(o.events, ev)
}

// Parts implements engine.PartMaker: one part for the events of every
// group of the transaction.
func (m *Module) Parts(_ podium.Store, gs []*engine.Group) []podium.Part {
	if m.store == nil {
		return nil
	}
	var evs []podium.WebhookEvent
	for _, g := range gs {
		if o, _ := g.Slot(m).(*outbox); o != nil {
			evs = append(evs, o.events...)
		}
	}
	if len(evs) == 0 {
		return nil
	}
	return []podium.Part{m.store.WebhookPart(evs)}
}

// Finished implements engine.Finisher: a committed group's events are
// stored; the worker is woken to deliver them.
func (m *Module) Finished(g *engine.Group, err error) {
	o, _ := g.Slot(m).(*outbox)
	if o == nil || err != nil {
		return
	}
	m.stored(o.events)
}

// stored counts committed outbox events and wakes the worker.
func (m *Module) stored(evs []podium.WebhookEvent) {
	for _, ev := range evs {
		m.m.events.WithLabelValues(ev.Type).Inc()
	}
	m.Poke()
}

// BoardChanged implements engine.BoardWatcher: the timed events follow
// every board's definition, whichever node changed it (timed.go). The
// board events are not written here but in the change's transaction
// (BoardParts), by the node that stores it.
func (m *Module) BoardChanged(old, next *podium.Board) {
	if m.store != nil {
		m.tm.sch.boardChanged(old, next, m.host.Now(), m.cfg.TimedGrace) // timed.go
	}
}

// BoardParts implements engine.BoardPartMaker: a board made or deleted is
// an event written in the transaction that stores the change, so that it
// is stored exactly when the change is. Only the node that stores the
// change writes it (the others follow the change, and write nothing).
func (m *Module) BoardParts(_ podium.Store, old, next *podium.Board) []podium.Part {
	var (
		typ string
		b   *podium.Board
	)
	switch {
	case old == nil && next != nil:
		typ, b = TypeBoardCreated, next
	case old != nil && next == nil:
		typ, b = TypeBoardDeleted, old
	default:
		return nil
	}
	// A board's creation time (and, with several nodes, its generation)
	// tells it from an earlier board of the same id, deleted and made
	// again (in another millisecond).
	cause := b.CreatedAt.UTC().Format(time.RFC3339Nano) + "/" + strconv.FormatUint(b.Gen, 10)
	at := b.CreatedAt
	if typ == TypeBoardDeleted {
		at = m.host.Now()
	}
	ev, ok := m.newEvent(typ, b.ID, cause, at, boardData(b))
	if !ok {
		return nil
	}
	if m.boardEvs == nil {
		m.boardEvs = map[*podium.Board]podium.WebhookEvent{}
	}
	m.boardEvs[b] = ev
	return []podium.Part{m.store.WebhookPart([]podium.WebhookEvent{ev})}
}

// BoardStored implements engine.BoardPartMaker: a board event committed
// with its change is counted, and the worker woken to deliver it.
func (m *Module) BoardStored(old, next *podium.Board, err error) {
	b := next
	if old != nil {
		if next != nil {
			return // an update: no event
		}
		b = old
	}
	ev, ok := m.boardEvs[b]
	if !ok {
		return
	}
	delete(m.boardEvs, b)
	if err == nil {
		m.stored([]podium.WebhookEvent{ev})
	}
}

// metrics are the module's Prometheus metrics.
type metrics struct {
	events     *prometheus.CounterVec
	deliveries *prometheus.CounterVec
	attempts   *prometheus.CounterVec
	lag        prometheus.Histogram
	depth      prometheus.Gauge
	dropped    *prometheus.CounterVec
	pruned     *prometheus.CounterVec
}

func newMetrics() metrics {
	return metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podium_webhook_events_total",
			Help: "Webhook events this node wrote to the outbox, by type.",
		}, []string{"type"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podium_webhook_deliveries_total",
			Help: "Webhook deliveries this node ended, by outcome (delivered, failed after the retry window).",
		}, []string{"outcome"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podium_webhook_attempts_total",
			Help: "Webhook delivery attempts this node made, by result (ok, http_error, network_error).",
		}, []string{"result"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "podium_webhook_lag_seconds",
			Help:    "From a webhook event to its delivery (or its redelivery's start to its delivery).",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400},
		}),
		depth: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "podium_webhook_outbox_depth",
			Help: "Webhook deliveries pending (to every endpoint), as of the delivering node's last round.",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podium_webhook_dropped_total",
			Help: "Pending webhook deliveries this node dropped because the outbox was over its budget, by reason (disabled: a disabled endpoint's; over_budget: an enabled endpoint's, the enabled ones alone being over it).",
		}, []string{"reason"}),
		pruned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podium_webhook_pruned_total",
			Help: "Webhook rows this node deleted past the retention, by table (deliveries that ended, events no delivery refers to).",
		}, []string{"table"}),
	}
}

func (x metrics) register(reg prometheus.Registerer) {
	reg.MustRegister(x.events, x.deliveries, x.attempts, x.lag, x.depth, x.dropped, x.pruned)
}
