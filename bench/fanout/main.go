// Command fanout measures podium's live updates under many subscribers: it
// opens --clients Server-Sent Events streams of one board's top --limit,
// submits scores at --rate per second for --duration, and reports delivery
// latency, bytes per client per minute (deltas against what full snapshots
// would have cost), gaps, and whether every client's window ends equal to
// the board's top.
//
// It starts nothing itself: it drives a running server. The streams come
// from one address (127.0.0.1), or from --addrs N loopback addresses
// (127.0.1.1 and on) past the ~28k ephemeral ports one source address
// has; raise the server's per-IP caps to clients/N, e.g.:
//
//	PODIUM_ADMIN_KEY=k go run ./cmd/podium serve --addr 127.0.0.1:8080 --data $(mktemp -d) \
//	    --sync normal --stream-per-ip 20000 --stream-max 20000 --rate-anon off --rate-key off --rate-submit off --conns-per-ip 0
//	PODIUM_ADMIN_KEY=k go run ./bench/fanout --url http://127.0.0.1:8080 --clients 1000 --duration 20s --pid <server pid>
//
// With --pid the server's resident memory and CPU use are read from /proc.
// The harness creates the public board --board (one descending key, mode
// --mode), preloads --players entries, and deletes the board at the end
// unless --keep. Clients speak HTTP/1.1 over raw connections (with --h2c:
// HTTP/2 cleartext, --h2c-streams streams sharing a connection; h2c.go) and keep
// their window the way docs/CLIENT.md describes: a snapshot replaces it; a
// delta applies only when its snapshot_id and prev_seq follow the state
// held, its changed entries go to their new ranks and the others fill the
// free ranks in their old order; anything else is a gap, answered by a new
// connection without a last event id.
//
// The output starts with the date, Go version, GOMAXPROCS and the flags, so
// that it can be pasted into docs/BENCHMARKS.md as it is; --json adds one
// line of JSON at the end. The exit status is 1 when a client saw a gap,
// ended with a wrong window or could not connect, or a submission failed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// config holds the parsed flags.
type config struct {
	URL        string
	Key        string
	Board      string
	Mode       string
	Players    int
	Clients    int
	Limit      int
	Rate       float64
	Duration   time.Duration
	TopShare   float64
	TopMoves   string
	RampBatch  int
	Submitters int
	Settle     time.Duration
	PID        int
	Addrs      int
	Keep       bool
	JSON       bool
	H2C        bool
	H2CStreams int

	u       *url.URL
	command string   // the command line, rebuilt from the flags that were set (never the key)
	flags   []string // every flag with its effective value
}

var boardPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.:-]{0,127}$`)

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	failed, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}

// parseFlags parses and checks args.
func parseFlags(args []string) (*config, error) {
	cfg := &config{}
	fs := flag.NewFlagSet("fanout", flag.ContinueOnError)
	fs.StringVar(&cfg.URL, "url", "http://127.0.0.1:8080", "base URL of the running podium server (http only)")
	fs.StringVar(&cfg.Key, "key", "", "admin key (default $PODIUM_ADMIN_KEY)")
	fs.StringVar(&cfg.Board, "board", "bench.fanout", "board to create, stream and delete")
	fs.StringVar(&cfg.Mode, "mode", "best", "board mode: best or latest")
	fs.IntVar(&cfg.Players, "players", 10000, "entries to preload")
	fs.IntVar(&cfg.Clients, "clients", 1000, "SSE subscribers")
	fs.IntVar(&cfg.Limit, "limit", 50, "window size each client follows")
	fs.Float64Var(&cfg.Rate, "rate", 50, "submissions per second")
	fs.DurationVar(&cfg.Duration, "duration", 60*time.Second, "how long to submit")
	fs.Float64Var(&cfg.TopShare, "top-share", 0.1, "fraction of submissions that enter or move within the top --limit")
	fs.StringVar(&cfg.TopMoves, "top-moves", "small", "how top changes land: small (enter near the bottom, climb 1-3 places: long-tailed scores) or uniform (anywhere in the window: the worst case for deltas)")
	fs.IntVar(&cfg.RampBatch, "ramp-batch", 500, "clients connected at once while ramping up")
	fs.IntVar(&cfg.Submitters, "submitters", 4, "concurrent submitting connections")
	fs.DurationVar(&cfg.Settle, "settle", 2*time.Second, "wait after the last submission before checking the windows")
	fs.IntVar(&cfg.Addrs, "addrs", 0, "loopback source addresses to spread the streams over, 127.0.1.1 and on (0: the system's choice); one source address has only ip_local_port_range's ports (~28k)")
	fs.IntVar(&cfg.PID, "pid", 0, "server process id, to report its memory and CPU (0: skip)")
	fs.BoolVar(&cfg.H2C, "h2c", false, "clients share HTTP/2 cleartext connections (prior knowledge; the server needs --h2c) instead of one HTTP/1.1 connection each")
	fs.IntVar(&cfg.H2CStreams, "h2c-streams", 200, "with --h2c: streams per connection (the server allows 256)")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the board at the end")
	fs.BoolVar(&cfg.JSON, "json", false, "also print the results as one line of JSON at the end")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	keySource := "flag"
	if cfg.Key == "" {
		cfg.Key, keySource = os.Getenv("PODIUM_ADMIN_KEY"), "$PODIUM_ADMIN_KEY"
	}
	u, err := url.Parse(cfg.URL)
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	case err != nil:
		return nil, fmt.Errorf("--url: %w", err)
	case u.Scheme != "http" || u.Host == "":
		return nil, fmt.Errorf("--url %q: want http://host:port", cfg.URL)
	case cfg.Key == "":
		return nil, errors.New("no admin key: set PODIUM_ADMIN_KEY or pass --key")
	case !boardPattern.MatchString(cfg.Board):
		return nil, fmt.Errorf("--board %q does not match %s", cfg.Board, boardPattern)
	case cfg.Mode != "best" && cfg.Mode != "latest":
		return nil, errors.New("--mode must be best or latest")
	case cfg.Limit < 1 || cfg.Limit > 1000:
		return nil, errors.New("--limit must be 1 to 1000")
	case cfg.Players < cfg.Limit+1:
		return nil, errors.New("--players must exceed --limit")
	case cfg.Addrs < 0 || cfg.Addrs > 250*250:
		return nil, errors.New("--addrs must be from 0 to 62500")
	case cfg.Clients < 1 || cfg.RampBatch < 1 || cfg.Submitters < 1:
		return nil, errors.New("--clients, --ramp-batch and --submitters must be at least 1")
	case cfg.Rate <= 0 || cfg.Duration <= 0 || cfg.Settle < 0:
		return nil, errors.New("--rate and --duration must be positive, --settle not negative")
	case cfg.TopShare < 0 || cfg.TopShare > 1:
		return nil, errors.New("--top-share must be from 0 to 1")
	case cfg.H2CStreams < 1 || cfg.H2CStreams > 256:
		return nil, errors.New("--h2c-streams must be 1 to 256")
	case cfg.TopMoves != "small" && cfg.TopMoves != "uniform":
		return nil, errors.New("--top-moves must be small or uniform")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	cfg.u = u

	cmd := []string{"go run ./bench/fanout"}
	fs.Visit(func(f *flag.Flag) {
		v := f.Value.String()
		switch {
		case f.Name == "key":
			v = "..."
		case v == "true" && (f.Name == "json" || f.Name == "keep" || f.Name == "h2c"):
			cmd = append(cmd, "--"+f.Name)
			return
		}
		cmd = append(cmd, "--"+f.Name+"="+v)
	})
	cfg.command = strings.Join(cmd, " ")
	fs.VisitAll(func(f *flag.Flag) {
		v := f.Value.String()
		if f.Name == "key" {
			v = "(" + keySource + ")"
		}
		cfg.flags = append(cfg.flags, "--"+f.Name+"="+v)
	})
	return cfg, nil
}

// run performs the whole measurement and prints the report. failed is
// true when the run saw gaps, wrong windows, failed clients or failed
// submissions; err is a failure that stopped it.
func run(ctx context.Context, cfg *config) (failed bool, err error) {
	r := &report{cfg: cfg, date: time.Now().UTC(), pid: strconv.Itoa(cfg.PID)}
	r.nofile, r.nofileErr = raiseNoFile()
	r.header(os.Stdout)
	logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }

	t := newTarget(cfg.u, cfg.Key, cfg.Board, cfg.Submitters)
	m := newModel(cfg.Players, cfg.Limit, cfg.TopShare, cfg.Mode == "latest", 1)
	m.smallMoves = cfg.TopMoves == "small"
	if err := t.setup(ctx, cfg.Mode); err != nil {
		return false, err
	}
	defer func() {
		if cfg.Keep {
			return
		}
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if derr := t.deleteBoard(dctx); derr != nil {
			logf("cleaning up: %v", derr)
		}
	}()
	logf("preloading %d players...", cfg.Players)
	t0 := time.Now()
	if err := t.preload(ctx, m); err != nil {
		return false, err
	}
	r.preload = time.Since(t0)
	r.serverRSS[0] = r.serverMem("VmRSS")

	host := cfg.u.Host
	addr := host
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, "80")
	}
	f := &fleet{addr: addr, host: host, start: time.Now(),
		path:   cfg.u.Path + "/v1/boards/" + cfg.Board + "/stream?limit=" + strconv.Itoa(cfg.Limit),
		dialer: net.Dialer{Timeout: 10 * time.Second}}
	cctx, stopClients := context.WithCancel(context.Background())
	clients := make([]*client, cfg.Clients)
	done := make(chan struct{}, cfg.Clients)
	defer func() {
		stopClients()
		for _, c := range clients {
			if c != nil {
				c.stop()
			}
		}
		for _, c := range clients {
			if c != nil {
				<-done
			}
		}
	}()

	var groups []*h2cGroup // --h2c
	defer func() {
		for _, g := range groups {
			g.tr.CloseIdleConnections()
		}
	}()

	// Ramp up in batches; each batch must have its first snapshots.
	t0 = time.Now()
	for lo := 0; lo < cfg.Clients && ctx.Err() == nil; lo += cfg.RampBatch {
		hi := min(lo+cfg.RampBatch, cfg.Clients)
		for i := lo; i < hi; i++ {
			c := newClient(f)
			if cfg.Addrs > 0 {
				c.dialer.LocalAddr = sourceAddr(i % cfg.Addrs)
			}
			if cfg.H2C {
				// One Transport for each --h2c-streams clients (h2c.go).
				if i%cfg.H2CStreams == 0 {
					groups = append(groups, newH2CGroup(f, c.dialer, &c.ctr[cWire]))
				}
				c.h2c = groups[len(groups)-1]
			}
			clients[i] = c
			go func() { c.run(cctx); done <- struct{}{} }()
		}
		for i := lo; i < hi; i++ {
			select {
			case <-clients[i].ready:
			case <-ctx.Done():
			}
		}
		logf("clients with a snapshot: %d/%d", hi, cfg.Clients)
	}
	r.ramp = time.Since(t0)
	r.clients = clients
	r.serverRSS[1] = r.serverMem("VmRSS")
	if ctx.Err() != nil {
		r.interrupted = true
	}

	// Measure: submit for --duration, then let the last events arrive.
	logf("submitting %.0f/s for %s...", cfg.Rate, cfg.Duration)
	r.before = sumCounters(clients)
	cpu0, scpu0 := processCPU(), r.serverCPU()
	f.measuring.Store(true)
	m0 := time.Now()
	r.drive = drive(ctx, t, m, f, cfg.Limit, cfg.Rate, cfg.Duration, cfg.Submitters)
	time.Sleep(500 * time.Millisecond) // a coalescing interval and some
	r.measured = time.Since(m0)
	r.after = sumCounters(clients)
	r.cpu, r.srvCPU = processCPU()-cpu0, r.serverCPU()-scpu0
	r.serverRSS[2] = r.serverMem("VmRSS")
	r.interrupted = r.interrupted || ctx.Err() != nil

	// Check every window against the board's top.
	time.Sleep(cfg.Settle)
	for round := 0; round < 4; round++ {
		vctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		top, err := t.top(vctx, cfg.Limit)
		cancel()
		if err != nil {
			return false, fmt.Errorf("final check: %w", err)
		}
		r.checkWindows(top, round)
		if r.mismatches == 0 {
			break
		}
		time.Sleep(time.Second)
	}
	r.final = sumCounters(clients)
	f.measuring.Store(false)
	stopClients()
	for _, c := range clients {
		c.stop()
	}
	for range clients {
		<-done
	}
	clients = nil // the deferred stop has nothing left to do
	r.lat = measureLatencies(r.clients, r.drive.subs)
	r.samples = f.samples
	r.h2cConns = f.h2cConns.Load()
	r.serverRSS[3] = r.serverMem("VmHWM")
	r.selfRSS, _ = procStatus("self", "VmHWM")
	return r.print(os.Stdout), nil
}

// sourceAddr is the a-th loopback source address, 127.0.1.1 and on, as
// bench/streammem numbers them. Linux answers on all of 127/8 without
// configuration; each address has its own ephemeral ports.
func sourceAddr(a int) *net.TCPAddr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, byte(1+a/250), byte(1+a%250))}
}

// sumCounters adds up the clients' counters.
func sumCounters(clients []*client) (s [nCounters]int64) {
	for _, c := range clients {
		if c == nil {
			continue
		}
		v := c.ctr.sample()
		for i := range s {
			s[i] += v[i]
		}
	}
	return s
}
