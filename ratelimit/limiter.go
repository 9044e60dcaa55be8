package ratelimit

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Config configures a Limiter. Zero values mean the defaults.
type Config struct {
	// Shared is the store every node uses (Redis or PostgreSQL); nil: the
	// in-process store only (a single node).
	Shared Store
	// Name names the shared store in logs and /readyz ("redis",
	// "postgres").
	Name string
	// Timeout bounds one Take on the shared store (default 200ms); past
	// it the request is decided in process.
	Timeout time.Duration
	// RetryEvery is how long after a failure the shared store is tried
	// again (default 1s); meanwhile every Take is decided in process, so a
	// dead store costs one timeout per second, not one per request.
	RetryEvery time.Duration
	// MaxKeys bounds the in-process store (see NewMemory).
	MaxKeys int
	Now     func() time.Time // default time.Now
	Logger  *slog.Logger
	// Registerer receives the limiter's metrics (none if nil).
	Registerer prometheus.Registerer
}

// Limiter decides requests on the shared store and, while it fails, on the
// process's own buckets. It never returns an error: a limiter whose store
// is down admits or refuses by the local buckets (each node then enforces
// the limit alone, so the cluster admits up to nodes × the limit) and
// reports the degradation in Status, in the log (once per transition) and
// in the podium_ratelimit_fallback gauge.
type Limiter struct {
	shared     Store
	local      *Memory
	name       string
	timeout    time.Duration
	retryEvery time.Duration
	now        func() time.Time
	log        *slog.Logger

	// down is the unix-µs time of the shared store's last failure, 0 while
	// it works.
	down atomic.Int64
	// mu serialises the transitions, so each is logged once.
	mu      sync.Mutex
	lastErr string

	decisions *prometheus.CounterVec
	failures  prometheus.Counter
	fallback  prometheus.Gauge
}

// New returns a limiter.
func New(cfg Config) *Limiter {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 200 * time.Millisecond
	}
	if cfg.RetryEvery <= 0 {
		cfg.RetryEvery = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Name == "" {
		cfg.Name = "memory"
	}
	l := &Limiter{shared: cfg.Shared, local: NewMemory(cfg.MaxKeys), name: cfg.Name, timeout: cfg.Timeout,
		retryEvery: cfg.RetryEvery, now: cfg.Now, log: cfg.Logger}
	l.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "podium_ratelimit_decisions_total", Help: "Rate limit decisions by scope and result (allowed, limited).",
	}, []string{"scope", "result"})
	l.failures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "podium_ratelimit_store_errors_total", Help: "Failed takes on the shared rate limit store (each decided in process instead).",
	})
	l.fallback = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "podium_ratelimit_fallback", Help: "1 while the shared rate limit store fails and limits are enforced per node.",
	})
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(l.decisions, l.failures, l.fallback)
	}
	return l
}

// Take decides a request of cost (0: a peek) on bucket key under lim.
// scope only labels the metrics ("submit", "read", "anon", "auth").
func (l *Limiter) Take(ctx context.Context, scope, key string, lim Limit, cost int) Result {
	if lim.Unlimited() {
		return Result{Allowed: true}
	}
	now := l.now()
	r, ok := l.takeShared(ctx, key, lim, cost, now)
	if !ok {
		r, _ = l.local.Take(ctx, key, lim, cost, now)
	}
	if cost > 0 {
		res := "allowed"
		if !r.Allowed {
			res = "limited"
		}
		l.decisions.WithLabelValues(scope, res).Inc()
	}
	return r
}

// Refund gives back cost of what a Take on bucket key under lim charged
// (see Refunder), on the store that decides now: the shared one if it
// works and can refund, else the process's own. A refund that fails is
// dropped: the bucket then keeps the charge, which errs on the side of the
// limit.
func (l *Limiter) Refund(ctx context.Context, key string, lim Limit, cost int) {
	if lim.Unlimited() || cost <= 0 {
		return
	}
	now := l.now()
	if rf, ok := l.shared.(Refunder); ok {
		if d := l.down.Load(); d == 0 || Micros(now)-d >= l.retryEvery.Microseconds() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.timeout)
			err := rf.Refund(ctx, key, lim, cost, now)
			cancel()
			if err == nil {
				return
			}
			l.failures.Inc()
			l.markDown(now, err)
		}
	}
	l.local.Refund(ctx, key, lim, cost, now)
}

func (l *Limiter) takeShared(ctx context.Context, key string, lim Limit, cost int, now time.Time) (Result, bool) {
	if l.shared == nil {
		return Result{}, false
	}
	if d := l.down.Load(); d != 0 && Micros(now)-d < l.retryEvery.Microseconds() {
		return Result{}, false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.timeout)
	r, err := l.shared.Take(ctx, key, lim, cost, now)
	cancel()
	if err != nil {
		l.failures.Inc()
		l.markDown(now, err)
		return Result{}, false
	}
	if l.down.Load() != 0 {
		l.markUp()
	}
	return r, true
}

func (l *Limiter) markDown(now time.Time, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down.Load() == 0 {
		l.log.Warn("rate limits: the shared store fails; enforcing limits per node until it answers", "store", l.name, "err", err)
		l.fallback.Set(1)
	}
	l.lastErr = err.Error()
	l.down.Store(max(Micros(now), 1))
}

func (l *Limiter) markUp() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down.Load() == 0 {
		return
	}
	l.down.Store(0)
	l.lastErr = ""
	l.fallback.Set(0)
	l.log.Info("rate limits: the shared store answers again; limits are shared by every node", "store", l.name)
}

// Status is "" while limits are enforced as configured, or why they are
// enforced per node (the shared store's last error), for /readyz.
func (l *Limiter) Status() string {
	if l.down.Load() == 0 {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.name + " failing, limits enforced per node: " + l.lastErr
}

// Check is Status after trying the shared store again if it failed more
// than RetryEvery ago (a peek, which changes nothing), so that /readyz
// sees a recovery even while no limited request comes.
func (l *Limiter) Check(ctx context.Context) string {
	if l.down.Load() != 0 {
		l.takeShared(ctx, "probe", Limit{Quota: 1, Window: time.Second}, 0, l.now())
	}
	return l.Status()
}

// Store names the store decisions are taken on: "memory" or the shared
// store's name.
func (l *Limiter) Store() string { return l.name }

// Sweep deletes at most limit forgotten buckets of the shared store, if it
// needs sweeping (see Sweeper); errors are returned, not logged.
func (l *Limiter) Sweep(ctx context.Context, limit int) (int, error) {
	sw, ok := l.shared.(Sweeper)
	if !ok {
		return 0, nil
	}
	return sw.Sweep(ctx, l.now(), limit)
}

// RunSweeper sweeps the shared store every interval in batches of batch
// until ctx ends: a full batch is followed at once by another, so a
// backlog drains without one statement ever touching more than batch rows.
func (l *Limiter) RunSweeper(ctx context.Context, every time.Duration, batch int) {
	if _, ok := l.shared.(Sweeper); !ok {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for ctx.Err() == nil {
			n, err := l.Sweep(ctx, batch)
			if err != nil {
				l.log.Debug("rate limits: sweep failed", "err", err)
				break
			}
			if n < batch {
				break
			}
		}
	}
}
