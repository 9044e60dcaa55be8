// Package http serves podium's JSON API (../shared/API.md in the design
// repo; docs/API.md here), the health and metrics endpoints, and the live
// pages, on the standard library's net/http.
package http

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/evidence"
	"github.com/podiumhq/podium/ratelimit"
	"github.com/podiumhq/podium/stream"
)

// Config configures a Server. Zero values mean the defaults.
type Config struct {
	Engine *engine.Engine // required
	Store  podium.Store   // for readiness pings; required
	Logger *slog.Logger
	// MaxBody is the largest accepted request body (default 1 MiB).
	MaxBody int64
	// Registry serves /metrics and receives the HTTP metrics (default: a
	// new registry).
	Registry *prometheus.Registry
	// Hub serves the live endpoints (default: a hub over Engine with
	// default settings; the caller must then make it the engine's
	// listener, see Server.Hub).
	Hub    *stream.Hub
	Stream StreamConfig
	// BodyTimeout cuts a request body that sends nothing for this long
	// (default 10s); RequestTimeout bounds how long a request may take to
	// arrive and its answer to be written (default 60s). Live streams are
	// exempt; see timeout.go.
	BodyTimeout    time.Duration
	RequestTimeout time.Duration
	// BodyMinRate is the rate in bytes/s a request body must keep after
	// its first BodyTimeout (default 1024; negative: none; timeout.go).
	BodyMinRate int64
	// MaxConnsPerIP caps the connections open from one client address
	// (IPv6: one /64) on Listener (default 128; negative: no cap). The
	// connections of TrustedProxies are not capped (conn.go).
	MaxConnsPerIP int
	// AllowedOrigins lists the web origins whose pages may use the API
	// and open streams ("https://example.com", "https://*.example.com");
	// empty or "*" allows any (see origins). Check them with CheckOrigins.
	AllowedOrigins []string
	// RateLimits limits the API's requests (ratelimit.go; none if nil).
	// TrustedProxies are the proxies whose X-Forwarded-For gives the
	// client's address (clientip.go).
	RateLimits     *RateLimits
	TrustedProxies []netip.Prefix
	// EvidenceBudgets bounds evidence uploads (evidence.go; zero values:
	// the defaults). Their byte budgets are decided on RateLimits' limiter
	// (shared by the nodes), or in this process without one.
	EvidenceBudgets evidence.BudgetConfig
}

// Server is the HTTP face of an engine: the routes, the middleware every
// request passes (api), health and metrics. The handlers are in groups by
// feature, each over a small interface of the engine (handlers.go).
type Server struct {
	*base             // handlers.go: the principal, the read rule, the body limit
	state engineState // handlers.go
	store podium.Store
	log   *slog.Logger
	mux   *routeMux // routes.go
	reg   *prometheus.Registry
	hub   *stream.Hub
	// contests runs CTF contests (contests.go): the engine's contests
	// module's service (handlers.go); nil: no contest routes. contestHub
	// streams their standings (contests_stream.go).
	contests   *ctf.Service
	contestHub *stream.Hub

	streamCfg StreamConfig
	origins   origins
	rates     *RateLimits    // ratelimit.go
	trusted   []netip.Prefix // clientip.go

	bodyTimeout    time.Duration
	requestTimeout time.Duration
	bodyMinRate    int64                  // bytes/s; 0: none
	maxConnsPerIP  int                    // 0: no cap
	timing         map[string]routeTiming // by route pattern; absent: timedFully
	pages          *pageCache             // encoded ranking pages by ETag (pagecache.go)

	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	conns    *connMetrics

	// Evidence uploads (evidence.go).
	evCfg     evidence.BudgetConfig
	evLimiter *ratelimit.Limiter

	// The handler groups (handlers.go), each in the file named.
	boards   *boardHandlers      // boards.go, restore.go
	entries  *entryHandlers      // entries.go, export.go, history.go
	scores   *scoreHandlers      // scores.go
	players  *playerHandlers     // players.go
	admin    *adminHandlers      // keys.go
	sessions *sessionHandlers    // sessions.go
	evidence *evidenceHandlers   // evidence.go, evidence_review.go
	review   *reviewHandlers     // review.go
	feed     *feedHandlers       // feed.go
	webhooks *webhookHandlers    // webhooks.go
	streams  *streamHandlers     // stream.go
	tourneys *tournamentHandlers // tournaments.go
	leagues  *leagueHandlers     // leagues.go
	groups   *groupHandlers      // groups.go
	web      *pageHandlers       // web.go
	contest  *contestHandlers    // contests*.go
}

// New returns a server; Handler gives its http.Handler.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 1 << 20
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.Hub == nil {
		cfg.Hub = stream.New(StreamSource(cfg.Engine), stream.Config{Logger: cfg.Logger})
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = 10 * time.Second
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 60 * time.Second
	}
	switch {
	case cfg.BodyMinRate == 0:
		cfg.BodyMinRate = 1024
	case cfg.BodyMinRate < 0:
		cfg.BodyMinRate = 0
	}
	switch {
	case cfg.MaxConnsPerIP == 0:
		cfg.MaxConnsPerIP = 128
	case cfg.MaxConnsPerIP < 0:
		cfg.MaxConnsPerIP = 0
	}
	cfg.Stream.defaults()
	s := &Server{store: cfg.Store, log: cfg.Logger, mux: newRouteMux(),
		reg: cfg.Registry, hub: cfg.Hub, streamCfg: cfg.Stream,
		bodyTimeout: cfg.BodyTimeout, requestTimeout: cfg.RequestTimeout, origins: newOrigins(cfg.AllowedOrigins),
		rates: cfg.RateLimits, trusted: cfg.TrustedProxies,
		bodyMinRate: cfg.BodyMinRate, maxConnsPerIP: cfg.MaxConnsPerIP}
	s.evCfg = cfg.EvidenceBudgets
	if cfg.RateLimits != nil {
		s.evLimiter = cfg.RateLimits.Limiter
	}
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "podium_http_requests_total", Help: "HTTP requests by route and status.",
	}, []string{"route", "code"})
	s.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "podium_http_request_seconds", Help: "HTTP request latency by route.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
	}, []string{"route"})
	s.conns = newConnMetrics(s.reg) // conn.go
	s.reg.MustRegister(s.requests, s.latency, streamCollector{s.hub})
	s.pages = newPageCache(s.reg, pageCacheBudget)
	s.wire(cfg.Engine, &cfg)
	s.routes()
	return s
}

func (s *Server) routes() {
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))

	// Each API route lists the query parameters it reads; any other is 400.
	s.mux.HandleFunc("GET /v1/boards", s.api(s.boards.listBoards, "cursor", "limit"))
	s.mux.HandleFunc("GET /v1/boards/{board}", s.api(s.boards.getBoard))
	s.mux.HandleFunc("PUT /v1/boards/{board}", s.api(s.boards.putBoard))
	s.mux.HandleFunc("DELETE /v1/boards/{board}", s.api(s.boards.deleteBoard))
	s.mux.HandleFunc("POST /v1/boards/{board}/scores", s.api(s.scores.submit))
	s.mux.HandleFunc("POST /v1/scores", s.api(s.scores.submitBatch))
	s.mux.HandleFunc("GET /v1/boards/{board}/entries", s.api(s.entries.entries, "period", "offset", "limit", "players", "group", "include_hidden", "top_percent"))
	s.mux.HandleFunc("GET /v1/boards/{board}/entries/{player}", s.api(s.entries.entry, "period", "include_hidden"))
	s.mux.HandleFunc("DELETE /v1/boards/{board}/entries/{player}", s.api(s.entries.deleteEntry, "period"))
	s.mux.HandleFunc("GET /v1/boards/{board}/entries/{player}/around", s.api(s.entries.around, "period", "include_hidden", "radius"))
	s.mux.HandleFunc("GET /v1/boards/{board}/periods", s.api(s.boards.periods))
	s.mux.HandleFunc("GET /v1/boards/{board}/export", s.api(s.entries.exportBoard, "format", "period", "include_hidden")) // export.go
	s.mux.HandleFunc("POST /v1/boards/{board}/restore", s.api(s.boards.restore))                                          // restore.go
	s.mux.HandleFunc("GET /v1/players/{player}", s.api(s.players.getPlayer))
	s.mux.HandleFunc("PUT /v1/players/{player}", s.api(s.players.putPlayer))
	s.mux.HandleFunc("POST /v1/keys", s.api(s.admin.createKey))
	s.mux.HandleFunc("GET /v1/keys", s.api(s.admin.listKeys))
	s.mux.HandleFunc("DELETE /v1/keys/{id}", s.api(s.admin.deleteKey))
	s.mux.HandleFunc("POST /v1/webhooks", s.api(s.webhooks.createEndpoint)) // webhooks.go
	s.mux.HandleFunc("GET /v1/webhooks", s.api(s.webhooks.listEndpoints))
	s.mux.HandleFunc("GET /v1/webhooks/{id}", s.api(s.webhooks.getEndpoint))
	s.mux.HandleFunc("PATCH /v1/webhooks/{id}", s.api(s.webhooks.updateEndpoint))
	s.mux.HandleFunc("DELETE /v1/webhooks/{id}", s.api(s.webhooks.deleteEndpoint))
	s.mux.HandleFunc("POST /v1/webhooks/{id}/rotate", s.api(s.webhooks.rotateSecret))
	s.mux.HandleFunc("GET /v1/webhooks/{id}/deliveries", s.api(s.webhooks.deliveries, "status", "before", "limit"))
	s.mux.HandleFunc("POST /v1/webhooks/{id}/redeliver", s.api(s.webhooks.redeliver))
	s.mux.HandleFunc("POST /v1/admin/check", s.api(s.admin.check))
	s.mux.HandleFunc("POST /v1/admin/reload", s.api(s.admin.reload))
	s.mux.HandleFunc("GET /v1/boards/{board}/stream", s.api(s.streams.sse, "limit", "last_event_id"))
	s.mux.HandleFunc("GET /v1/stream", s.api(s.streams.ws, "key"))
	s.mux.HandleFunc("GET /v1/feed", s.api(s.feed.feed, "board", "limit")) // feed.go
	s.mux.HandleFunc("GET /v1/feed/stream", s.api(s.feed.feedStream, "board", "limit", "last_event_id"))
	// Moderation (review.go).
	s.mux.HandleFunc("GET /v1/review", s.api(s.review.reviewQueue, "board", "player", "status", "cursor", "limit"))
	s.mux.HandleFunc("GET /v1/review/{id}", s.api(s.review.getReviewItem))
	s.mux.HandleFunc("POST /v1/review/{id}/approve", s.api(s.review.approveReview))
	s.mux.HandleFunc("POST /v1/review/{id}/reject", s.api(s.review.rejectReview))
	s.mux.HandleFunc("POST /v1/players/{player}/freeze", s.api(s.review.freeze))
	s.mux.HandleFunc("POST /v1/players/{player}/unfreeze", s.api(s.review.unfreeze))
	s.mux.HandleFunc("GET /v1/players/{player}/freeze", s.api(s.review.getFreeze))
	s.mux.HandleFunc("GET /v1/boards/{board}/entries/{player}/history", s.api(s.entries.history, "cursor", "limit"))
	s.tourneyRoutes() // tournaments.go
	s.leagueRoutes()  // leagues.go
	s.groupRoutes()   // groups.go
	s.sessionRoutes() // sessions.go
	s.evidenceRoutes()
	s.timing = map[string]routeTiming{
		"GET /v1/boards/{board}/stream": untimed,
		"GET /v1/stream":                untimed,
		"GET /v1/feed/stream":           untimed,
		"GET /v1/leagues/{board}/players/{player}/cohort/stream": untimed,
		"GET /v1/boards/{board}/export":                          untimed, // bounds each chunk's write (export.go)
		"POST /v1/admin/check":                                   timedBodyOnly,
		"POST /v1/admin/reload":                                  timedBodyOnly,
	}
	s.webRoutes()
	s.contestRoutes()
	s.openapiRoutes() // openapi.go
}

// Hub returns the stream hub the live endpoints use.
func (s *Server) Hub() *stream.Hub { return s.hub }

// Handler returns the server's handler: routing, metrics and JSON errors
// for unknown routes and methods.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		// Every answer says its Content-Type is to be believed: a JSON
		// answer (an error echoing input included) is never sniffed
		// into HTML or a script.
		w.Header()["X-Content-Type-Options"] = nosniff
		if why := r.Header.Get(framingHeader); why != "" { // framing.go
			w.Header().Set("Connection", "close")
			s.writeError(w, r, podium.Errorf(podium.ECodeInvalid, "the request has %s: its framing is ambiguous (RFC 9112 section 6.1), so it is refused and the connection closed", why))
			s.requests.WithLabelValues("framing", "400").Inc()
			return
		}
		if s.cors(w, r) {
			return
		}
		// One route lookup: the mux calls the route's entry (routes.go),
		// which applies its deadlines and hands it sw; an answer the mux
		// gives itself (404, 405, a redirect) goes to the probe.
		sw := &statusWriter{ResponseWriter: w, status: 200, conn: connOf(r), http1: isHTTP1(r)}
		sw.probe = routeProbe{s: s, sw: sw, t0: t0}
		s.mux.ServeHTTP(&sw.probe, r)
		pattern := r.Pattern
		if !sw.probe.routed {
			if pattern == "" {
				pattern = "unmatched"
			}
			s.notRouted(sw, r, &sw.probe, t0)
		} else if sw.body.ReadCloser != nil && !sw.body.eof {
			// Answered without the whole body (timeout.go): net/http
			// must not wait for the rest before closing.
			sw.body.conn.SetReadDeadline(time.Now())
		}
		if m := sw.probe.metrics; m != nil {
			m.record(s, sw.status, time.Since(t0))
			return
		}
		s.requests.WithLabelValues(pattern, strconv.Itoa(sw.status)).Inc()
		s.latency.WithLabelValues(pattern).Observe(time.Since(t0).Seconds())
	})
}

var nosniff = []string{"nosniff"}

// notRouted turns the mux's plain-text 404 and 405 into JSON errors, and
// passes on a redirect to a route's clean path (the mux names the route's
// pattern for it) as the mux gave it.
func (s *Server) notRouted(w *statusWriter, r *http.Request, probe *routeProbe, t0 time.Time) {
	switch {
	case probe.status == http.StatusMethodNotAllowed:
		if allow := probe.Header().Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		s.writeError(w, r, podium.Errorf("method_not_allowed", "%s is not allowed on %s", r.Method, r.URL.Path))
	case r.Pattern == "":
		s.writeError(w, r, podium.Errorf(podium.ECodeNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
	default:
		s.setDeadlines(w.ResponseWriter, w, r, t0, s.timing[r.Pattern])
		for k, v := range probe.header {
			w.Header()[k] = v
		}
		w.WriteHeader(probe.status)
		w.Write(probe.body)
	}
}

type statusWriter struct {
	http.ResponseWriter
	status    int
	wrote     bool       // the header was written
	wroteBody bool       // Write was called
	body      bodyTimer  // the request body's, kept here to save an allocation
	conn      *conn      // the connection, when served on Listener (conn.go)
	http1     bool       // an HTTP/1 request, whose answer may be held (coalesce.go)
	probe     routeProbe // what the mux is served, kept here to save an allocation (routes.go)
}

// WriteHeader writes the answer's header. An answer given before the
// request body was read to its end closes the connection (timeout.go):
// the rest of the body is never read.
func (w *statusWriter) WriteHeader(code int) {
	if code >= 200 && !w.wrote {
		w.wrote = true
		if w.body.ReadCloser != nil && !w.body.eof && w.http1 {
			// HTTP/2 resets the request's stream instead
			// (h2c.go): a Connection: close would end the
			// connection's other streams.
			w.Header().Set("Connection", "close")
		}
	}
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wroteBody {
		if !w.wrote {
			w.WriteHeader(http.StatusOK)
		}
		w.wroteBody = true
		w.holdIfWhole(b) // coalesce.go: the whole answer in one write
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets streaming handlers flush through the wrapper; it also sends
// an answer the connection held (coalesce.go).
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	if w.conn != nil {
		w.conn.sendHeld()
	}
}

// Hijack hands the connection to a WebSocket, telling the framing guard
// that what follows is no longer HTTP (conn.go).
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return hijack(w.ResponseWriter, w.conn)
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// apiFunc is an API handler: it returns an error instead of writing one.
type apiFunc func(w http.ResponseWriter, r *http.Request) error

// api adapts an apiFunc: refuses query parameters other than params (see
// checkQuery) and requests until the engine is ready, authenticates the
// request once for everything that reads its principal (withAuth), and
// writes returned errors in the envelope.
func (s *Server) api(f apiFunc, params ...string) http.HandlerFunc {
	if len(params) > maxParams {
		panic("http: too many query parameters for one route")
	}
	s.mux.next = append([]string{}, params...) // routes.go: for RouteQuery
	return func(w http.ResponseWriter, r *http.Request) {
		if err := checkHeaders(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		r = withAuth(r) // auth.go: authenticated once, on first use
		if r.URL.RawQuery != "" {
			if err := checkQuery(r.URL.RawQuery, params); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		if !s.state.Ready() {
			msg := "podium is loading its indexes; retry shortly"
			if s.state.Status().Closing {
				msg = "podium is shutting down; retry shortly"
			}
			w.Header().Set("Retry-After", "1")
			s.writeError(w, r, podium.Errorf(podium.ECodeUnavailable, "%s", msg))
			return
		}
		if !s.rateLimit(w, r) { // ratelimit.go
			return
		}
		if r.ContentLength != 0 && r.Body != http.NoBody {
			// A body is only read for a request whose credentials hold:
			// a missing or bad key is refused on the headers (401 at
			// once, also to Expect: 100-continue), not after the body
			// arrived. Handlers check their scope before reading too.
			if k, err := s.principal(r); err != nil || k == nil {
				if err == nil {
					err = podium.Errorf(podium.ECodeUnauthenticated, "a request with a body needs an API key or a session: send Authorization: Bearer <token>")
				}
				s.writeError(w, r, err)
				return
			}
		}
		if err := f(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
}

// readyz answers whether this node should get traffic, with the reasons:
//   - 503 "unavailable" while the indexes load, while shutting down, and
//     after a storage failure that stopped writes until a restart;
//   - 200 "degraded" while it serves reads but something is wrong: the
//     database does not answer (reads come from memory and may be stale;
//     writes fail fast), commits fail (a full disk), or the broker is down
//     (changes from other nodes arrive by polling);
//   - 200 "ready" otherwise.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	st := s.state.Status()
	status, code := "ready", http.StatusOK
	checks := map[string]string{"indexes": "loaded", "storage": "ok", "writes": "ok"}
	stale := false
	fail := func(check, msg string) {
		checks[check] = msg
		status, code = "unavailable", http.StatusServiceUnavailable
	}
	degrade := func(check, msg string) {
		checks[check] = msg
		if code == http.StatusOK {
			status = "degraded"
		}
	}
	switch {
	case st.Closing:
		fail("indexes", "shutting down")
	case !st.Loaded:
		fail("indexes", "loading")
	}
	if st.StorageFailed != "" {
		fail("writes", "stopped after a storage failure ("+st.StorageFailed+"); restart podium")
	} else if st.WritesFailing != "" {
		degrade("writes", "failing since "+st.FailingSince.UTC().Format(time.RFC3339)+": "+st.WritesFailing)
	}
	if st.Loaded && !st.Closing {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		err := s.store.Ping(ctx)
		cancel()
		if err != nil || st.Database != "" {
			s.log.Warn("readiness: the database does not answer", "err", err)
			degrade("storage", "unreachable: reads are served from memory and may be stale; writes fail")
			stale = true
		}
	}
	if st.Shared {
		checks["broker"] = "ok"
		if st.Broker != "" {
			degrade("broker", st.Broker)
		}
	}
	if s.rates != nil && s.rates.Limiter != nil {
		checks["rate_limits"] = s.rates.Limiter.Store()
		if st := s.rates.Limiter.Check(r.Context()); st != "" {
			degrade("rate_limits", st)
		}
	}
	if code != http.StatusOK {
		w.Header().Set("Retry-After", "1")
	}
	b, _ := json.Marshal(map[string]any{"status": status, "stale": stale, "checks": checks})
	writeJSON(w, code, b)
}
