package http

import (
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// routeMux is the server's ServeMux, remembering the patterns registered on
// it, so that what the server serves can be listed (Server.Routes) without a
// second copy of the route table: the OpenAPI test compares it with the spec.
type routeMux struct {
	*http.ServeMux
	patterns []string
	// query holds the query parameters each API route accepts, by pattern.
	// Server.api hands them over in next (its result is the argument of
	// the HandleFunc call that follows at once); nil next: not an API
	// route, which ignores query strings.
	query map[string][]string
	next  []string
}

func newRouteMux() *routeMux {
	return &routeMux{ServeMux: http.NewServeMux(), query: map[string][]string{}}
}

// Handle registers h for pattern, as http.ServeMux.Handle does, behind
// the route's entry.
func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.ServeMux.Handle(pattern, routeEntry{h, &routeMetrics{pattern: pattern}})
	m.patterns = append(m.patterns, pattern)
	if m.next != nil {
		m.query[pattern] = m.next
		m.next = nil
	}
}

// HandleFunc registers f for pattern, as http.ServeMux.HandleFunc does.
func (m *routeMux) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(f))
}

// Routes returns the patterns of every route the server registered
// ("GET /v1/boards/{board}"), sorted; the server's route table and the
// handlers that add routes of their own (contests, sessions, the pages) are
// all in it.
func (s *Server) Routes() []string {
	out := slices.Clone(s.mux.patterns)
	slices.Sort(out)
	return out
}

// RouteQuery returns the query parameters the API route registered with
// pattern accepts (any other is 400), and false for a route that is not an
// API route (the pages, assets, health and metrics ignore query strings).
func (s *Server) RouteQuery(pattern string) ([]string, bool) {
	q, ok := s.mux.query[pattern]
	return slices.Clone(q), ok
}

// The route lookup. Server.Handler serves the mux a routeProbe: when the
// mux finds a route it calls the route's entry, which applies the route's
// deadlines (timeout.go) and serves the handler the request's own
// statusWriter; when it answers by itself (404, 405, a redirect) the probe
// keeps the answer for notRouted. The mux used to be asked twice, once to
// find the route (Handler) and once to serve it with its path values
// (ServeHTTP): 4% of a rank read's CPU.
type routeProbe struct {
	s       *Server
	sw      *statusWriter
	t0      time.Time
	routed  bool
	metrics *routeMetrics // the route's, when routed
	// The mux's own answer, when not routed.
	header http.Header
	status int
	body   []byte
}

func (p *routeProbe) Header() http.Header {
	if p.header == nil {
		p.header = http.Header{}
	}
	return p.header
}

func (p *routeProbe) Write(b []byte) (int, error) {
	p.body = append(p.body, b...)
	return len(b), nil
}

func (p *routeProbe) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}

// routeEntry is a registered handler behind the lookup.
type routeEntry struct {
	h http.Handler
	m *routeMetrics
}

func (e routeEntry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, ok := w.(*routeProbe)
	if !ok { // served by another mux (tests)
		e.h.ServeHTTP(w, r)
		return
	}
	p.routed = true
	p.metrics = e.m
	p.s.setDeadlines(p.sw.ResponseWriter, p.sw, r, p.t0, p.s.timing[r.Pattern])
	e.h.ServeHTTP(p.sw, r)
}

// routeMetrics keeps a route's children of the request metrics once made,
// so that a request does not hash its labels to find them (1.5% of a rank
// read's CPU); they are made on first use, as before, so that a route that
// was never asked shows no series.
type routeMetrics struct {
	pattern string
	latency atomic.Pointer[prometheus.Observer]
	ok      atomic.Pointer[prometheus.Counter] // code 200
}

// record counts a request of the route and observes its latency.
func (m *routeMetrics) record(s *Server, code int, d time.Duration) {
	if code == http.StatusOK {
		c := m.ok.Load()
		if c == nil {
			made := s.requests.WithLabelValues(m.pattern, "200")
			c = &made
			m.ok.Store(c)
		}
		(*c).Inc()
	} else {
		s.requests.WithLabelValues(m.pattern, strconv.Itoa(code)).Inc()
	}
	o := m.latency.Load()
	if o == nil {
		made := s.latency.WithLabelValues(m.pattern)
		o = &made
		m.latency.Store(o)
	}
	(*o).Observe(d.Seconds())
}
