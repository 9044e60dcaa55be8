// Command cluster measures podium on several nodes sharing one PostgreSQL
// database, as ratios against one node on SQLite (--sync full) measured in
// the same run: throughput of 1 and N nodes (with and without Redis), what
// a forwarding hop would cost against what the row lock costs, the
// visibility lag from one node to another, how long writes stall when the
// node holding a board's lock dies or pauses, and how long a node takes to
// load 1M entries from PostgreSQL at start.
//
// Usage, from the repository root:
//
//	PODIUM_TEST_POSTGRES=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	  go run ./bench/cluster [--phases throughput,forward,lag,failover,startup] [--runs 3]
//
// Every node, every load generator (wrk, and the harness itself), Redis
// and PostgreSQL share this machine's CPUs: the ratios are the figures to
// read, not the absolute rates. Each PostgreSQL cluster gets a schema of
// its own (created, passed as ?search_path=, dropped afterwards) and each
// Redis cluster an --env of its own on a redis-server the harness starts
// on a free port. Progress goes to stderr, the report to stdout.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// phaseNames are the phases in the order they run.
var phaseNames = []string{"throughput", "forward", "lag", "failover", "startup"}

// config holds the parsed flags.
type config struct {
	DB          string
	Redis       string // an existing Redis to use instead of starting one
	RedisServer string
	Podium      string
	Wrk         string
	Phases      []string
	Runs        int
	Duration    time.Duration
	Warmup      time.Duration
	Conns       int
	BatchConns  int
	Players     int
	Nodes       int
	PollEvery   time.Duration
	FixedRate   int

	LagSamples int
	LagEvery   time.Duration
	LagPoll    time.Duration
	// LagCoalesce is the nodes' --stream-coalesce in the lag phase (0:
	// podium's default).
	LagCoalesce time.Duration
	LagArgs     map[string][]string // mode -> extra serve flags

	FailWorkers int
	FailObserve time.Duration
	PauseMax    time.Duration

	StartEntries int
	GoBench      bool

	// OwnDB makes the harness create a database of its own on the --db
	// server for the run (and drop it), so that the database-wide
	// counters (pg_stat_database) count only the clusters' work.
	OwnDB bool

	command string
}

// errNoDatabase is the refusal to run without PostgreSQL.
var errNoDatabase = errors.New("bench/cluster measures podium on PostgreSQL and needs a server where it may create schemas: " +
	"set PODIUM_TEST_POSTGRES (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) or pass --db postgres://…")

// parseFlags parses args; getenv supplies the environment's defaults.
func parseFlags(args []string, getenv func(string) string) (*config, error) {
	cfg := &config{}
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.StringVar(&cfg.DB, "db", getenv("PODIUM_TEST_POSTGRES"), "PostgreSQL URL where the harness creates a schema per cluster (default $PODIUM_TEST_POSTGRES)")
	fs.StringVar(&cfg.Redis, "redis", "", "use this Redis (redis://host:port/db) instead of starting a redis-server; Redis counters are then not read")
	fs.StringVar(&cfg.RedisServer, "redis-server", "redis-server", "redis-server binary the harness starts on a free port (\"\": no Redis clusters)")
	fs.StringVar(&cfg.Podium, "podium", "", "podium binary (default: go build ./cmd/podium)")
	fs.StringVar(&cfg.Wrk, "wrk", "wrk", "wrk binary (apt-get install -y wrk)")
	phases := fs.String("phases", strings.Join(phaseNames, ","), "comma-separated phases: "+strings.Join(phaseNames, ", "))
	fs.BoolVar(&cfg.OwnDB, "own-database", true, "create a database of the harness's own on the --db server (clean pg_stat_database counters), dropped at the end; false: schemas in --db's database")
	fs.IntVar(&cfg.Runs, "runs", 3, "runs of every measurement (medians and ranges are over runs)")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "measured time of each throughput scenario")
	fs.DurationVar(&cfg.Warmup, "warmup", 2*time.Second, "unmeasured load before each throughput scenario")
	fs.IntVar(&cfg.Conns, "conns", 64, "connections for single submits and reads, spread over the nodes")
	fs.IntVar(&cfg.BatchConns, "batch-conns", 6, "connections for batch submits (1000 scores each), spread over the nodes")
	fs.IntVar(&cfg.Players, "players", 100_000, "players preloaded on every board")
	fs.IntVar(&cfg.Nodes, "nodes", 3, "nodes of the multi-node clusters")
	fs.DurationVar(&cfg.PollEvery, "poll-every", 200*time.Millisecond, "--poll-every of every PostgreSQL node")
	fs.IntVar(&cfg.FixedRate, "fixed-rate", 500, "single submits/s of the fixed-rate database-load window (0: skip)")
	fs.IntVar(&cfg.LagSamples, "lag-samples", 200, "submissions per visibility-lag mode and run")
	fs.DurationVar(&cfg.LagEvery, "lag-every", 50*time.Millisecond, "pauses between lag submissions are drawn uniformly from 0 to this, or to the poll or stream-coalescing period when longer")
	fs.DurationVar(&cfg.LagPoll, "lag-poll", 2*time.Millisecond, "how often the REST reader polls node B")
	fs.DurationVar(&cfg.LagCoalesce, "lag-coalesce", 0, "--stream-coalesce of the lag phase's nodes (0: podium's default, 200ms)")
	pollOnly := fs.String("poll-only-flags", "", "serve flags that turn notices off, for the polling-only lag mode (default: found in `podium serve -h`, else the mode is skipped)")
	fs.IntVar(&cfg.FailWorkers, "failover-workers", 4, "writers per node on the hot board during failover")
	fs.DurationVar(&cfg.FailObserve, "failover-observe", 5*time.Second, "load kept running after a kill")
	fs.DurationVar(&cfg.PauseMax, "pause-max", 60*time.Second, "longest a paused lock holder is left paused")
	fs.IntVar(&cfg.StartEntries, "startup-entries", 1_000_000, "entries on the board of the start-up phase")
	fs.BoolVar(&cfg.GoBench, "go-bench", true, "startup: also run engine's BenchmarkStartup1M (go test) as SQLite's in-process reference")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.DB == "" {
		return nil, errNoDatabase
	}
	if _, err := withParams(cfg.DB); err != nil {
		return nil, err
	}
	switch {
	case cfg.Runs < 1:
		return nil, errors.New("--runs must be at least 1")
	case cfg.Duration < time.Second:
		return nil, errors.New("--duration must be at least 1s (wrk counts whole seconds)")
	case cfg.Conns < 1 || cfg.BatchConns < 1:
		return nil, errors.New("--conns and --batch-conns must be at least 1")
	case cfg.Players < 1:
		return nil, errors.New("--players must be at least 1")
	case cfg.Nodes < 2:
		return nil, errors.New("--nodes must be at least 2")
	case cfg.PollEvery <= 0 || cfg.LagEvery <= 0 || cfg.LagPoll <= 0:
		return nil, errors.New("--poll-every, --lag-every and --lag-poll must be positive")
	case cfg.LagSamples < 1 || cfg.FailWorkers < 1 || cfg.StartEntries < 1:
		return nil, errors.New("--lag-samples, --failover-workers and --startup-entries must be at least 1")
	}
	for _, p := range strings.Split(*phases, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !slices.Contains(phaseNames, p) {
			return nil, fmt.Errorf("--phases: unknown phase %q (known: %s)", p, strings.Join(phaseNames, ", "))
		}
		if !slices.Contains(cfg.Phases, p) {
			cfg.Phases = append(cfg.Phases, p)
		}
	}
	if len(cfg.Phases) == 0 {
		return nil, errors.New("--phases is empty")
	}
	cfg.LagArgs = map[string][]string{}
	if *pollOnly != "" {
		cfg.LagArgs["poll"] = strings.Fields(*pollOnly)
	}
	cmd := []string{"go run ./bench/cluster"}
	fs.Visit(func(f *flag.Flag) {
		v := f.Value.String()
		if f.Name == "db" || f.Name == "redis" {
			v = redact(v)
		}
		cmd = append(cmd, "--"+f.Name+"="+v)
	})
	cfg.command = strings.Join(cmd, " ")
	return cfg, nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "proxy" {
		os.Exit(proxyMain(os.Args[2:]))
	}
	cfg, err := parseFlags(os.Args[1:], os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

// harness is what every phase uses.
type harness struct {
	cfg      *config
	out, log io.Writer
	tmp      string
	root     string // the repository root
	podium   string // the binary
	key      string // PODIUM_ADMIN_KEY of every node
	redisURL string // "" when there is no Redis
	redis    *redisServer
	wrk      *wrkRunner
	api      *api
	schemas  map[string]bool // created and not dropped yet
	// db is the URL of the database the clusters' schemas are made in:
	// the harness's own (dbNote empty) or --db's.
	db     string
	dbNote string
}

func (h *harness) progress(format string, args ...any) {
	fmt.Fprintf(h.log, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

// run prepares the harness, runs the phases and prints the report.
func run(ctx context.Context, cfg *config, out, log io.Writer) (err error) {
	h := &harness{cfg: cfg, out: out, log: log, key: "bench-" + randHex(8), schemas: map[string]bool{}}
	if h.root, err = repoRoot(); err != nil {
		return err
	}
	if h.tmp, err = os.MkdirTemp("", "podium-cluster-"); err != nil {
		return err
	}
	defer os.RemoveAll(h.tmp)
	if err := pgExec(ctx, cfg.DB, "SELECT 1"); err != nil {
		return fmt.Errorf("PostgreSQL: %w", err)
	}
	h.db = cfg.DB
	if cfg.OwnDB {
		name := "podium_bench_" + randHex(4)
		if err := pgExec(ctx, cfg.DB, "CREATE DATABASE "+name); err != nil {
			h.dbNote = fmt.Sprintf("could not create a database of its own (%v): xact/s counts every user of the database", err)
		} else {
			defer pgExec(context.Background(), cfg.DB, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			if h.db, err = withDatabase(cfg.DB, name); err != nil {
				return err
			}
		}
	} else {
		h.dbNote = "--own-database=false: xact/s counts every user of the database"
	}
	defer func() {
		for s := range h.schemas { // a cluster that failed to close
			pgExec(context.Background(), h.db, "DROP SCHEMA IF EXISTS "+s+" CASCADE")
		}
	}()
	if h.podium = cfg.Podium; h.podium == "" {
		h.podium = filepath.Join(h.tmp, "podium")
		h.progress("building podium")
		b := exec.CommandContext(ctx, "go", "build", "-o", h.podium, "./cmd/podium")
		b.Dir, b.Stdout, b.Stderr = h.root, log, log
		if err := b.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/podium: %w", err)
		}
	}
	switch {
	case cfg.Redis != "":
		h.redisURL = cfg.Redis
	case cfg.RedisServer != "":
		if h.redis, err = startRedis(ctx, cfg.RedisServer); err != nil {
			return fmt.Errorf("%w (pass --redis-server \"\" to measure without Redis)", err)
		}
		defer h.redis.stop()
		h.redisURL = "redis://" + h.redis.addr + "/0"
	}
	if slices.Contains(cfg.Phases, "throughput") || slices.Contains(cfg.Phases, "forward") {
		if _, err := exec.LookPath(cfg.Wrk); err != nil {
			return fmt.Errorf("wrk not found (%v): apt-get install -y wrk, or pass --wrk", err)
		}
	}
	if h.wrk, err = newWrkRunner(cfg.Wrk, h.tmp, filepath.Join(h.root, "bench", "wrk"), h.key); err != nil {
		return err
	}
	h.api = newAPI(h.key, 64)
	rep := newReport(h)
	rep.header(out)
	for _, p := range cfg.Phases {
		if ctx.Err() != nil {
			break
		}
		var err error
		switch p {
		case "throughput":
			var r *tpResults
			r, err = h.runThroughput(ctx)
			rep.throughput(out, r)
		case "forward":
			var r *fwdResults
			r, err = h.runForward(ctx)
			rep.forward(out, r)
		case "lag":
			var r *lagResults
			r, err = h.runLag(ctx)
			rep.lag(out, r)
		case "failover":
			var r *failResults
			r, err = h.runFailover(ctx)
			rep.failover(out, r)
		case "startup":
			var r *startResults
			r, err = h.runStartup(ctx)
			rep.startup(out, r)
		}
		if err != nil {
			fmt.Fprintf(out, "\n%s stopped early: %v\n", p, err)
			return err
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintln(out, "\ninterrupted: the results above are partial")
		return ctx.Err()
	}
	return nil
}

// repoRoot finds the podium repository from the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/podiumhq/podium\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run bench/cluster from inside the podium repository (go run ./bench/cluster)")
		}
		dir = parent
	}
}
