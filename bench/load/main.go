// Command load drives a running podium server over HTTP with many
// keep-alive connections and reports, per scenario, throughput, latency
// percentiles and errors; then it runs the same kind of work against Redis
// in the same run and prints podium/Redis ratios.
//
// Usage (from the repository root, with a server already running, started
// with --rate-submit off --rate-key off --rate-anon off --conns-per-ip 0 so
// that its default limits do not answer the load with 429):
//
//	PODIUM_ADMIN_KEY=... go run ./bench/load --url http://127.0.0.1:8080 --duration 10s
//
// Scenarios: single (one score per request), batch (--batch scores per
// request), top (the first 100 entries), rank (one random player's entry).
// Before the read scenarios every one of --players players gets an entry.
// The output starts with the date, Go version, GOMAXPROCS and the flags, so
// that it can be pasted into docs/BENCHMARKS.md as it is; --json adds one
// line of JSON at the end. The exit status is 1 when any operation failed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
)

// scenarioNames are the scenarios in their usual order.
var scenarioNames = []string{"single", "batch", "top", "rank"}

// boardPattern is the API's board id syntax.
var boardPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.:-]{0,127}$`)

const (
	maxBatch       = 10_000 // the API's limit on items per POST /v1/scores
	preloadChunk   = 5000   // scores per preload request
	preloadWorkers = 4
	redisChunk     = 1000 // members per preload ZADD
)

// config holds the parsed flags.
type config struct {
	URL       string
	Key       string
	Redis     string
	Conns     int
	Duration  time.Duration
	Warmup    time.Duration
	Players   int
	Batch     int
	Scenarios []string
	Board     string
	JSON      bool

	keySource string   // how the key was given, for the header (never the key)
	command   string   // the command line, rebuilt from the flags that were set
	flags     []string // every flag with its effective value
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	failed, err := run(ctx, cfg, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}

// parseFlags parses and checks args.
func parseFlags(args []string) (*config, error) {
	cfg := &config{}
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.StringVar(&cfg.URL, "url", "http://127.0.0.1:8080", "podium server base URL (empty: skip podium)")
	fs.StringVar(&cfg.Key, "key", "", "admin key (default $PODIUM_ADMIN_KEY)")
	fs.StringVar(&cfg.Redis, "redis", "127.0.0.1:6379", "Redis address for the reference run (empty: skip Redis)")
	fs.IntVar(&cfg.Conns, "conns", 64, "concurrent workers, each with its own keep-alive connection")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "measured time per scenario")
	fs.DurationVar(&cfg.Warmup, "warmup", time.Second, "unmeasured time before each scenario")
	fs.IntVar(&cfg.Players, "players", 100_000, "distinct players (preloaded before read scenarios)")
	fs.IntVar(&cfg.Batch, "batch", 1000, "scores per request in the batch scenario")
	scenarios := fs.String("scenarios", strings.Join(scenarioNames, ","), "comma-separated scenarios: "+strings.Join(scenarioNames, ", "))
	fs.StringVar(&cfg.Board, "board", "bench.load", "board to create and load")
	fs.BoolVar(&cfg.JSON, "json", false, "also print the results as one line of JSON at the end")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	cfg.keySource = "flag"
	if cfg.Key == "" {
		cfg.Key = os.Getenv("PODIUM_ADMIN_KEY")
		cfg.keySource = "$PODIUM_ADMIN_KEY"
	}
	switch {
	case cfg.URL == "" && cfg.Redis == "":
		return nil, errors.New("--url and --redis are both empty: nothing to measure")
	case cfg.URL != "" && cfg.Key == "":
		return nil, errors.New("no admin key: set PODIUM_ADMIN_KEY or pass --key")
	case cfg.Conns < 1:
		return nil, errors.New("--conns must be at least 1")
	case cfg.Duration <= 0:
		return nil, errors.New("--duration must be positive")
	case cfg.Warmup < 0:
		return nil, errors.New("--warmup must not be negative")
	case cfg.Players < 1:
		return nil, errors.New("--players must be at least 1")
	case cfg.Batch < 1 || cfg.Batch > maxBatch:
		return nil, fmt.Errorf("--batch must be 1 to %d", maxBatch)
	case !boardPattern.MatchString(cfg.Board):
		return nil, fmt.Errorf("--board %q does not match %s", cfg.Board, boardPattern)
	}
	for _, s := range strings.Split(*scenarios, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(scenarioNames, s) {
			return nil, fmt.Errorf("--scenarios: unknown scenario %q (known: %s)", s, strings.Join(scenarioNames, ", "))
		}
		if slices.Contains(cfg.Scenarios, s) {
			return nil, fmt.Errorf("--scenarios: %q given twice", s)
		}
		cfg.Scenarios = append(cfg.Scenarios, s)
	}
	if len(cfg.Scenarios) == 0 {
		return nil, errors.New("--scenarios is empty")
	}

	// The header shows the command and every flag, but never the key.
	cmd := []string{"go run ./bench/load"}
	fs.Visit(func(f *flag.Flag) {
		v := f.Value.String()
		switch {
		case f.Name == "key":
			v = "..."
		case f.Name == "json" && v == "true":
			cmd = append(cmd, "--json")
			return
		}
		cmd = append(cmd, "--"+f.Name+"="+shellQuote(v))
	})
	cfg.command = strings.Join(cmd, " ")
	fs.VisitAll(func(f *flag.Flag) {
		v := f.Value.String()
		if f.Name == "key" {
			v = "(" + cfg.keySource + ")"
			if cfg.Key == "" {
				v = "(none)"
			}
		}
		cfg.flags = append(cfg.flags, "--"+f.Name+"="+v)
	})
	return cfg, nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,:/-=@+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isRead reports whether scenario reads rankings, and so needs every
// player preloaded.
func isRead(scenario string) bool { return scenario == "top" || scenario == "rank" }

// run performs every scenario on podium, then on Redis, and prints the
// report to out (progress goes to log). failed is true when any operation
// failed; err is a failure that stopped the run, after the results so far
// were printed.
func run(ctx context.Context, cfg *config, out, log io.Writer) (failed bool, err error) {
	rep := newReport(cfg)
	rep.header(out)
	names := playerNames(cfg.Players)
	if cfg.URL != "" {
		err = runPodium(ctx, cfg, rep, names, out, log)
	}
	if cfg.Redis != "" && err == nil && ctx.Err() == nil {
		err = runRedis(ctx, cfg, rep, names, out, log)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(out, "\ninterrupted: the results below are partial")
	}
	if err != nil {
		fmt.Fprintf(out, "\nstopped early: %v\n", err)
	}
	return rep.results(out), err
}

// runPodium creates the board and runs the scenarios on the server.
func runPodium(ctx context.Context, cfg *config, rep *report, names []string, out, log io.Writer) error {
	p, err := newPodium(cfg.URL, cfg.Key, cfg.Board, cfg.Conns, max(cfg.Batch, preloadChunk), names)
	if err != nil {
		return err
	}
	defer p.close()
	if err := p.setup(); err != nil {
		return err
	}
	preloaded := false
	for _, sc := range cfg.Scenarios {
		if ctx.Err() != nil {
			break
		}
		if isRead(sc) && !preloaded {
			fmt.Fprintf(log, "podium: preloading %d players...\n", cfg.Players)
			t0 := time.Now()
			total, err := p.preload(ctx, preloadChunk, preloadWorkers)
			if err != nil {
				return err
			}
			rep.preload(out, "podium", cfg.Players, time.Since(t0), total)
			preloaded = true
		}
		fmt.Fprintf(log, "podium: %s (%s warmup + %s)...\n", sc, cfg.Warmup, cfg.Duration)
		ops, desc := p.podiumOps(sc, cfg.Conns, cfg.Batch)
		rep.add(runScenario(ctx, "podium", sc, desc, ops, cfg.Warmup, cfg.Duration))
	}
	return nil
}

// runRedis runs the reference scenarios and deletes the keys it made.
func runRedis(ctx context.Context, cfg *config, rep *report, names []string, out, log io.Writer) error {
	r, err := newRedis(ctx, cfg.Redis, cfg.Conns, names)
	if err != nil {
		return err
	}
	rep.redisVersion = r.version
	defer func() {
		if cerr := r.close(); cerr != nil {
			fmt.Fprintf(log, "redis: cleaning up %s*: %v\n", r.prefix, cerr)
		}
	}()
	preloaded := false
	for _, sc := range cfg.Scenarios {
		if ctx.Err() != nil {
			break
		}
		if isRead(sc) && !preloaded {
			fmt.Fprintf(log, "redis: preloading %d members...\n", cfg.Players)
			t0 := time.Now()
			total, err := r.preload(ctx, redisChunk)
			if err != nil {
				return err
			}
			rep.preload(out, "redis", cfg.Players, time.Since(t0), total)
			preloaded = true
		}
		fmt.Fprintf(log, "redis: %s (%s warmup + %s)...\n", sc, cfg.Warmup, cfg.Duration)
		ops, desc := r.redisOps(sc, cfg.Conns, cfg.Batch)
		rep.add(runScenario(ctx, "redis", sc, desc, ops, cfg.Warmup, cfg.Duration))
	}
	return nil
}
