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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/stream"
)

// Main is one running podium server: what main starts and what the
// end-to-end tests start (on port 0 and a temporary data directory).
type Main struct {
	Config Config
	Now    podium.Clock // default time.Now
	Stderr io.Writer

	Store  *sqlite.Store
	Engine *engine.Engine
	Server *podiumhttp.Server
	Hub    *stream.Hub
	ln     net.Listener
	srv    *http.Server
	log    *slog.Logger
	demo   context.CancelFunc
}

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

// Open opens the store, loads the indexes and starts serving. /healthz
// answers at once; /readyz and the API only once the indexes are loaded.
func (m *Main) Open(ctx context.Context) error {
	if m.Stderr == nil {
		m.Stderr = os.Stderr
	}
	m.log = slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: logLevel(m.Config.LogLevel)}))
	if err := os.MkdirAll(m.Config.Data, 0o755); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	adminKey, err := m.adminKey()
	if err != nil {
		return err
	}
	store, err := sqlite.Open(filepath.Join(m.Config.Data, "podium.db"), sqlite.Options{Sync: m.Config.Sync})
	if err != nil {
		return err
	}
	m.Store = store
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.Engine = engine.New(engine.Config{Store: store, Now: m.Now, Logger: m.log, MaxBatch: m.Config.MaxBatch, Registerer: reg})
	m.Engine.SetAdminSecret(adminKey)
	m.Hub = stream.New(podiumhttp.StreamSource(m.Engine), stream.Config{Coalesce: m.Config.Coalesce,
		SnapshotEvery: m.Config.SnapshotEvery, MaxPerIP: m.Config.StreamsPerIP, MaxTotal: m.Config.StreamsMax,
		MemoryBudget: m.Config.StreamMemory, Logger: m.log})
	m.Engine.SetListener(m.Hub)
	m.Server = podiumhttp.New(podiumhttp.Config{Engine: m.Engine, Store: store, Logger: m.log, MaxBody: m.Config.MaxBody,
		Registry: reg, Hub: m.Hub, AllowedOrigins: m.Config.allowedOrigins()})

	m.ln, err = net.Listen("tcp", m.Config.Addr)
	if err != nil {
		store.Close()
		return err
	}
	m.srv = &http.Server{Handler: m.Server.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(m.log.Handler(), slog.LevelWarn)}
	go func() {
		if err := m.srv.Serve(m.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error("serve", "err", err)
		}
	}()
	if err := m.Engine.Start(ctx); err != nil {
		m.Close()
		return err
	}
	if m.Config.DebugAddr != "" {
		startDebug(m.Config.DebugAddr, m.log)
	}
	m.log.Info("podium is serving", "url", m.URL(), "data", m.Config.Data, "sync", m.Config.Sync, "version", Version)
	if m.Config.Demo {
		dctx, cancel := context.WithCancel(context.Background())
		m.demo = cancel
		if err := startDemo(dctx, m.Engine, m.log); err != nil {
			m.Close()
			return fmt.Errorf("demo: %w", err)
		}
		fmt.Fprintf(m.Stderr, "\n  podium demo is live: open %s/ in a browser\n\n", m.URL())
	}
	return nil
}

// Close shuts the server down gracefully: stop taking requests, finish the
// ones in flight, let the writer commit what it holds, close the database.
func (m *Main) Close() error {
	if m.demo != nil {
		m.demo()
	}
	var errs []error
	if m.Hub != nil {
		m.Hub.Close() // ends live streams with a retry hint so Shutdown need not wait for them
	}
	if m.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), max(m.Config.Shutdown, time.Second))
		errs = append(errs, m.srv.Shutdown(ctx))
		cancel()
	}
	if m.Engine != nil {
		errs = append(errs, m.Engine.Close())
	}
	if m.Store != nil {
		errs = append(errs, m.Store.Close())
	}
	return errors.Join(errs...)
}

// adminKey returns the admin secret: PODIUM_ADMIN_KEY, or the one stored in
// the data directory, or a new one that is stored and printed once.
func (m *Main) adminKey() (string, error) {
	if k := m.Config.AdminKey; k != "" {
		return k, nil
	}
	path := filepath.Join(m.Config.Data, "admin.key")
	if b, err := os.ReadFile(path); err == nil {
		if k := strings.TrimSpace(string(b)); k != "" {
			m.log.Info("admin key read from the data directory", "file", path)
			return k, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read admin key: %w", err)
	}
	k := engine.NewSecret()
	if err := os.WriteFile(path, []byte(k+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("store admin key: %w", err)
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
	fs := newFlagSet("serve", "Runs the podium server on an embedded SQLite database in --data.\nThe admin key comes from PODIUM_ADMIN_KEY, or is generated on first start and stored in --data.", stderr)
	cfg.flags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	switch cfg.Sync {
	case "full", "normal":
	default:
		return fmt.Errorf("--sync must be full or normal, not %q", cfg.Sync)
	}
	if err := podiumhttp.CheckOrigins(cfg.allowedOrigins()); err != nil {
		return fmt.Errorf("--allowed-origins: %w", err)
	}
	cfg.AdminKey = os.Getenv("PODIUM_ADMIN_KEY")
	m := &Main{Config: cfg, Stderr: stderr}
	if err := m.Open(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	m.log.Info("shutting down")
	return m.Close()
}

// startDebug serves the pprof handlers on their own listener, away from the
// public API.
func startDebug(addr string, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() {
		if err := http.ListenAndServe(addr, mux); err != nil {
			log.Error("debug listener", "addr", addr, "err", err)
		}
	}()
}
