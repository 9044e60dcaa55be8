package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/podiumhq/podium/internal/gcpace"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/feed"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/redis"
	"github.com/podiumhq/podium/sessions"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/stream"
	"github.com/podiumhq/podium/webhooks"
)

// Main is one running podium server: what main starts and what the
// end-to-end tests start (on port 0 and a temporary data directory).
type Main struct {
	Config Config
	Now    podium.Clock // default time.Now
	Stderr io.Writer

	Store  podium.Store  // SQLite in the data directory, or PostgreSQL (--db)
	Broker podium.Broker // with --db: notices between nodes
	Engine *engine.Engine
	// Contests runs CTF contests (package ctf) on the same store: the
	// engine's contests module's service, nil if the store keeps none.
	Contests *ctf.Service
	Server   *podiumhttp.Server
	Hub      *stream.Hub
	ln       net.Listener
	data     *dataDir
	srv      *http.Server
	debug    *http.Server // --debug-addr, if set
	log      *slog.Logger
	demo     context.CancelFunc
	demoCfg  *demoConfig // the demo's pace; nil: defaultDemo (a test sets a faster one)
	rates    *rateWiring // ratelimit.go
}

// testHookWrapStore, when set by a test, wraps the store before the engine
// is built on it (to inject storage faults).
var testHookWrapStore func(podium.Store) podium.Store

// Addr is the address the server listens on, once Open returned.
func (m *Main) Addr() string { return m.ln.Addr().String() }

// URL is the base URL of the server, once Open returned.
func (m *Main) URL() string {
	host, port, _ := net.SplitHostPort(m.Addr())
	if host == "" || host == "::" || host == "0.0.0.0" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Open checks the configuration, binds the address, takes the data
// directory (lock, integrity checks), opens the store, loads the indexes and
// starts serving. Nothing touches the data directory before the address is
// bound, so a start that fails on the configuration or a port in use leaves
// nothing behind. /healthz answers at once; /readyz and the API only once
// the indexes are loaded. On failure Open closes what it opened.
func (m *Main) Open(ctx context.Context) (err error) {
	if m.Stderr == nil {
		m.Stderr = os.Stderr
	}
	m.log = newLogger(m.Stderr, m.Config) // logging.go
	if err := m.Config.validate(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	m.ln, err = net.Listen("tcp", m.Config.Addr)
	if err != nil {
		return err
	}
	logOpenFiles(m.log, m.Config.StreamsMax, m.Config.H2C) // nofile.go
	if m.Config.DebugAddr != "" {
		// Bound here with the API's address, so that a debug port in use
		// fails the start before the data directory is touched.
		dln, err := net.Listen("tcp", m.Config.DebugAddr)
		if err != nil {
			return fmt.Errorf("--debug-addr: %w", err)
		}
		m.debug = startDebug(dln, m.log)
	}
	var adminKey string
	if m.Config.DB == "" {
		m.data, err = openDataDir(m.Config.Data, true, "stop it first, or give this server a --data of its own", m.log)
		if err != nil {
			return err
		}
		if m.Store, err = m.data.openStore(ctx, sqlite.Options{Sync: m.Config.Sync, WALMax: m.Config.SQLiteWALMax}); err != nil {
			return err
		}
		if adminKey, err = m.adminKey(); err != nil {
			return err
		}
	} else {
		if err := m.openShared(ctx); err != nil {
			return err
		}
		adminKey = m.Config.AdminKey
		m.log.Info("admin key from PODIUM_ADMIN_KEY", "source", "environment")
	}
	pgStore, _ := m.Store.(*postgres.Store) // before a test wraps it: the rate limits' table
	if testHookWrapStore != nil {
		m.Store = testHookWrapStore(m.Store)
	}
	store := m.Store
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.Engine = engine.New(engine.Config{Store: store, Now: m.Now, Logger: m.log, MaxBatch: m.Config.MaxBatch, Registerer: reg,
		Broker: m.Broker, Node: m.Config.Node, PollEvery: m.Config.PollEvery,
		OldPeriodsBytes: m.Config.oldPeriodsBytes(), IdempotencyTTL: m.Config.IdempotencyTTL,
		IdempotencyBytes: m.Config.idempotencyBytes(),
		Modules: modules.With(modules.Config{Store: store, Logger: m.log, Evidence: m.Config.Evidence.module(), Feed: feed.Config{Cap: m.Config.FeedCap},
			Sessions: sessions.Config{TTL: m.Config.SessionTTL, MaxTTL: m.Config.SessionMaxTTL, Cap: m.Config.SessionCap},
			Contests: ctf.ModuleConfig{Broker: m.Broker, Node: m.Config.Node, PollEvery: m.Config.PollEvery},
			Webhooks: webhooks.Config{AllowPrivate: m.Config.WebhookAllowPrivate, Timeout: m.Config.WebhookTimeout,
				Backoff: webhooks.Backoff{Window: m.Config.WebhookWindow}, PeriodTop: m.Config.WebhookPeriodTop,
				Budget: m.Config.WebhookBudget, Retention: m.Config.WebhookRetention}})})
	m.Engine.Keys().SetAdminSecret(adminKey)
	m.Contests = contestService(m.Engine) // contests.go
	m.Hub = stream.New(podiumhttp.StreamSource(m.Engine), stream.Config{Coalesce: m.Config.Coalesce,
		SnapshotEvery: m.Config.SnapshotEvery, MaxPerIP: m.Config.StreamsPerIP, MaxTotal: m.Config.StreamsMax,
		MemoryBudget: m.Config.StreamMemory, MemoryPerAddress: m.Config.StreamMemoryPerIP, Logger: m.log})
	m.Engine.SetListener(m.Hub)
	rates, proxies, err := m.openRateLimits(pgStore, reg)
	if err != nil {
		return err
	}
	evBudgets, err := m.Config.Evidence.budgets() // evidence.go
	if err != nil {
		return err
	}
	m.Server = podiumhttp.New(podiumhttp.Config{RateLimits: rates, TrustedProxies: proxies, Engine: m.Engine, Store: store, Logger: m.log, MaxBody: m.Config.MaxBody,
		Registry: reg, Hub: m.Hub, BodyTimeout: m.Config.BodyTimeout, RequestTimeout: m.Config.RequestTimeout,
		BodyMinRate: offIfZero(m.Config.BodyMinRate), MaxConnsPerIP: offIfZero(m.Config.ConnsPerIP),
		AllowedOrigins: m.Config.allowedOrigins(), EvidenceBudgets: evBudgets})

	if ch := m.Server.ContestHub(); ch != nil {
		m.Engine.SetListener(listeners{boards: m.Hub, contests: ch})
	}
	m.srv = &http.Server{Handler: m.Server.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: podiumhttp.ErrorLog(m.log), ConnContext: m.Server.ConnContext}
	if m.Config.H2C {
		podiumhttp.ServeH2C(m.srv) // http/h2c.go
	}
	ln := m.Server.Listener(m.ln) // the connection-level defences (http/conn.go)
	go func() {
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error("serve", "err", err)
		}
	}()
	if err := m.Engine.Start(ctx); err != nil {
		return err
	}
	b := readBuild()
	if m.Config.DB == "" {
		m.log.Info("podium is serving", "url", m.URL(), "data", m.Config.Data, "sync", m.Config.Sync, "version", b.Version, "revision", b.short())
	} else {
		m.log.Info("podium is serving", "url", m.URL(), "node", m.Config.Node, "version", b.Version, "revision", b.short())
	}
	if m.Config.Demo {
		dctx, cancel := context.WithCancel(context.Background())
		m.demo = cancel
		cfg := defaultDemo
		if m.demoCfg != nil {
			cfg = *m.demoCfg
		}
		cfg.Now = m.Now
		if err := startDemo(dctx, m.Engine, m.Contests, m.log, cfg); err != nil { // demo.go
			return fmt.Errorf("demo: %w", err)
		}
		if m.Config.plainOutput() {
			fmt.Fprintf(m.Stderr, "\n  podium demo is live: open %s/ in a browser\n\n", m.URL())
		}
	}
	return nil
}

// Close shuts the server down gracefully: stop taking requests, finish the
// ones in flight, let the writer commit what it holds, close the database
// and release the data directory. Only a close without errors, after no
// storage failure, counts as a clean shutdown (the next start skips
// quick_check).
func (m *Main) Close() error {
	if m.demo != nil {
		m.demo()
	}
	var errs []error
	if m.debug != nil {
		m.debug.Close()
	}
	if m.Hub != nil {
		m.Hub.Close() // ends live streams with a retry hint so Shutdown need not wait for them
	}
	if m.Server != nil && m.Server.ContestHub() != nil {
		m.Server.ContestHub().Close()
	}
	if m.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), max(m.Config.Shutdown, time.Second))
		errs = append(errs, m.srv.Shutdown(ctx))
		cancel()
	} else if m.ln != nil {
		m.ln.Close()
	}
	if m.Engine != nil {
		errs = append(errs, m.Engine.Close())
	}
	m.closeRateLimits()
	if m.Broker != nil {
		errs = append(errs, m.Broker.Close())
	}
	if m.data != nil {
		// After a storage failure the disk may not hold what it was given:
		// like a crash, that makes the next start run quick_check.
		clean := errors.Join(errs...) == nil && (m.Engine == nil || m.Engine.Status().StorageFailed == "")
		errs = append(errs, m.data.closeStore(clean))
		m.data.release()
	} else if m.Store != nil {
		errs = append(errs, m.Store.Close())
	}
	return errors.Join(errs...)
}

// openShared opens the PostgreSQL database that several nodes share, and
// the brokers that wake them: Redis when given (preferred), else polling.
func (m *Main) openShared(ctx context.Context) error {
	st, err := postgres.Open(ctx, m.Config.DB, postgres.Options{})
	if err != nil {
		return err
	}
	m.Store = st
	if m.Config.Env == "" {
		m.Config.Env = "default"
	}
	if m.Config.Node == "" {
		host, _ := os.Hostname()
		m.Config.Node = host + "-" + engine.NewSecret()[4:10]
	}
	var brokers []podium.Broker
	if m.Config.Redis != "" {
		rb, err := redis.Open(m.Config.Redis, redis.Options{Env: m.Config.Env, Logger: m.log})
		if err != nil {
			return err
		}
		brokers = append(brokers, rb)
	}
	// PostgreSQL's LISTEN/NOTIFY always: the only broker without Redis,
	// and the fallback while Redis is down.
	pb, err := postgres.NewBroker(m.Config.DB, postgres.BrokerOptions{Env: m.Config.Env, Logger: m.log})
	if err != nil {
		return err
	}
	brokers = append(brokers, pb)
	// Its first ping (bounded by the broker's timeout) before serving: a
	// node's first /readyz then says whether the broker answers, not
	// "not connected yet" (seen as a degraded first /readyz under load).
	select {
	case <-pb.Pinged():
	case <-time.After(10 * time.Second):
	}
	m.Broker = engine.Fallback(brokers...)
	m.log.Info("shared mode: several nodes on one PostgreSQL database", "node", m.Config.Node,
		"database", redactURL(m.Config.DB), "redis", m.Config.Redis != "", "poll_every", m.Config.PollEvery)
	return nil
}

// adminKey returns the admin secret: PODIUM_ADMIN_KEY, or the one stored in
// the data directory, or a new one that is stored and printed once. It logs
// which (never the secret itself), and warns when the environment
// overrides a different stored key or the stored key is readable by others.
func (m *Main) adminKey() (string, error) {
	path := filepath.Join(m.Config.Data, keyName)
	stored := ""
	if b, err := os.ReadFile(path); err == nil {
		stored = strings.TrimSpace(string(b))
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read admin key: %w", err)
	}
	if k := m.Config.AdminKey; k != "" {
		if stored != "" && stored != k {
			m.log.Warn("admin key from PODIUM_ADMIN_KEY; it overrides the different key stored in the data directory",
				"source", "environment", "ignored", path)
		} else {
			m.log.Info("admin key from PODIUM_ADMIN_KEY", "source", "environment")
		}
		return k, nil
	}
	if stored != "" {
		m.log.Info("admin key read from the data directory", "source", "file", "file", path)
		warnIfShared(m.log, path, "the admin key file", "chmod 600 "+path)
		return stored, nil
	}
	k := engine.NewSecret()
	if err := writeSynced(path, k+"\n"); err != nil {
		return "", fmt.Errorf("store admin key: %w", err)
	}
	m.log.Info("generated a new admin key", "source", "generated", "file", path)
	if !m.Config.plainOutput() {
		return k, nil // JSON logs carry no secret: the key is in the file
	}
	fmt.Fprintf(m.Stderr, "\n  Generated the admin key (shown once; stored in %s):\n\n    %s\n\n", path, k)
	return k, nil
}

func logLevel(s string) slog.Level {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg Config
	fs := newFlagSet("serve", "Runs the podium server on an embedded SQLite database in --data.\nThe admin key comes from PODIUM_ADMIN_KEY, or is generated on first start and stored in --data.", stdout)
	cfg.flags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	useDemoDataDir(fs, &cfg) // demo.go
	cfg.AdminKey = os.Getenv("PODIUM_ADMIN_KEY")
	m := &Main{Config: cfg, Stderr: stderr}
	go gcpace.Run(ctx) // the collector's headroom as the indexes grow, the load at start included (internal/gcpace)
	if err := m.Open(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	m.log.Info("shutting down")
	return m.Close()
}

// startDebug serves the pprof handlers on their own listener, away from the
// public API.
func startDebug(ln net.Listener, log *slog.Logger) *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("debug listener", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return srv
}
