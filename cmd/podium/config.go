package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/redis"
	"github.com/podiumhq/podium/webhooks"
)

// Config is the configuration of podium serve. Every field is a flag and a
// PODIUM_* environment variable; flags win over the environment.
type Config struct {
	Addr     string // listen address
	Data     string // data directory
	Demo     bool   // create demo boards and feed them
	Sync     string // full | normal
	MaxBody  int64  // request body limit, bytes
	MaxBatch int    // submissions per group commit
	LogLevel string // debug | info | warn | error
	AdminKey string // from PODIUM_ADMIN_KEY only (flags show in ps)
	Shutdown time.Duration

	Coalesce          time.Duration // live: window that coalesces changes into one delta
	SnapshotEvery     time.Duration // live: safety-net snapshot interval
	StreamsPerIP      int           // live: concurrent streams per client IP
	StreamsMax        int           // live: concurrent streams in all
	StreamMemory      int64         // live: memory budget of all streams, bytes
	StreamMemoryPerIP int64         // live: one client address's share of StreamMemory (0: an eighth of it)
	Origins           string        // web origins allowed to use the API from a browser, comma-separated ("*": any)

	DebugAddr string // if set, serve net/http/pprof here (never on a public address)

	BodyTimeout    time.Duration // a request body that sends nothing this long is cut (408)
	RequestTimeout time.Duration // a request must arrive and its answer be taken within this (streams exempt)
	BodyMinRate    int64         // bytes/s a request body must keep after --body-timeout (0: no minimum)
	ConnsPerIP     int           // connections open from one client address (0: no cap)
	H2C            bool          // also accept HTTP/2 cleartext with prior knowledge on Addr

	// Several nodes: the shared PostgreSQL database (empty: SQLite in
	// Data), the optional Redis, the deployment's name in the Redis
	// keyspace, this node's name, and how often it polls the database for
	// what other nodes changed.
	DB        string
	Redis     string
	Env       string
	Node      string
	PollEvery time.Duration

	FeedCap int // activity feed events kept per board
	// Webhooks: private destinations allowed, one attempt's timeout, how
	// long a delivery is retried, the outbox's budget of pending
	// deliveries and how long ended ones are kept.
	WebhookAllowPrivate bool
	WebhookTimeout      time.Duration
	WebhookWindow       time.Duration
	WebhookBudget       int
	WebhookRetention    time.Duration
	WebhookPeriodTop    int
	// OldPeriodsBytes bounds the periods older than each board's
	// previous one kept in memory after a read; 0 keeps none.
	OldPeriodsBytes int64
	// IdempotencyTTL is how long Idempotency-Key records are kept (at
	// least 24h, the API's promise); IdempotencyBytes bounds those kept
	// in memory (0: none, every keyed request reads the database).
	IdempotencyTTL   time.Duration
	IdempotencyBytes int64

	// Player sessions (package sessions): default and longest TTL, and
	// sessions per player.
	SessionTTL, SessionMaxTTL time.Duration
	SessionCap                int
	RateLimit                 RateConfig // rate limits and trusted proxies (ratelimit.go)

	Evidence EvidenceConfig // evidence upload budgets (evidence.go)

	LogFormat string // text | json (logging.go)
	// LogRepeatEvery lets a warning or error with one message through
	// once per this interval, with the count of those dropped (logging.go;
	// 0: every one).
	LogRepeatEvery time.Duration
	// SQLiteWALMax is the SQLite write-ahead log's disk budget, bytes
	// (sqlite.Options.WALMax; 0: from the volume's size).
	SQLiteWALMax int64
}

// allowedOrigins splits --allowed-origins.
func (c *Config) allowedOrigins() []string {
	var out []string
	for _, o := range strings.Split(c.Origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
		}
	}
	return out
}

// newFlagSet returns a flag set whose defaults come from PODIUM_* variables.
// --help prints its usage to out.
func newFlagSet(name, summary string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports mistakes itself, in one line
	fs.Usage = func() {
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			fmt.Fprintf(out, "Usage: podium %s\n\n%s\n", name, summary)
			return
		}
		fmt.Fprintf(out, "Usage: podium %s [flags]\n\n%s\n\nFlags (each also an environment variable):\n", name, summary)
		fs.VisitAll(func(f *flag.Flag) {
			fmt.Fprintf(out, "  --%s (%s)\n    \t%s", f.Name, envName(f.Name), f.Usage)
			if f.DefValue != "" && f.DefValue != "false" {
				fmt.Fprintf(out, " (default %q)", f.DefValue)
			}
			fmt.Fprintln(out)
		})
	}
	return fs
}

func envName(flagName string) string {
	return "PODIUM_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parse parses args, then applies PODIUM_* variables for flags not given on
// the command line. A mistake is a *usageError; --help prints the usage and
// returns flag.ErrHelp.
func parse(fs *flag.FlagSet, args []string) error {
	bad := checkValues(fs)
	usage := fs.Usage
	fs.Usage = func() {} // the flag package would print it after every mistake
	err := fs.Parse(args)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		usage()
		return err
	}
	if err != nil {
		return explain(fs, err, *bad)
	}
	if fs.NArg() > 0 {
		return usagef(fs.Name(), "unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			if e := f.Value.Set(v); e != nil {
				err = usagef(fs.Name(), "%s=%q: %v", envName(f.Name), v, e)
				if b := *bad; b != nil {
					err = usagef(fs.Name(), "%s: %q is not %s", envName(f.Name), v, b.want)
				}
			}
		}
	})
	return err
}

func (c *Config) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", ":8080", "address to listen on")
	fs.StringVar(&c.Data, "data", "./podium-data", "data directory (SQLite database, generated admin key)")
	fs.BoolVar(&c.Demo, "demo", false, "run the demo: boards of every kind, a tournament cycle and CTF contests fed by simulated players (data in ./podium-demo-data unless --data is given)")
	fs.StringVar(&c.Sync, "sync", "full", "SQLite durability: full (survives power loss) or normal (survives a crash of podium, not of the OS)")
	fs.Int64Var(&c.MaxBody, "max-body", 1<<20, "largest request body in bytes")
	fs.IntVar(&c.MaxBatch, "max-batch", 8192, "most submissions in one group commit")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.DurationVar(&c.Coalesce, "stream-coalesce", 200*time.Millisecond, "live streams: changes within this window become one delta")
	fs.DurationVar(&c.SnapshotEvery, "stream-snapshot-every", 30*time.Second, "live streams: send a full snapshot this often as a safety net")
	fs.IntVar(&c.StreamsPerIP, "stream-per-ip", 32, "live streams: concurrent streams per client IP (more get 429)")
	fs.IntVar(&c.StreamsMax, "stream-max", 20000, "live streams: concurrent streams in all (more get 429)")
	fs.Int64Var(&c.StreamMemory, "stream-memory", 256<<20, "live streams: bytes they may hold in all (histories, snapshots, queues, window states), a bound never passed; near it resume histories are dropped, new windows get 429 and connections that fall behind are resynced or cut")
	fs.Int64Var(&c.StreamMemoryPerIP, "stream-memory-per-ip", 0, "live streams: bytes one client address may hold (its queued events and the windows it opened); 0: an eighth of --stream-memory")
	fs.StringVar(&c.Origins, "allowed-origins", "*", "web origins whose pages may use the API and open streams, comma-separated, e.g. https://example.com,https://*.example.com (\"*\": any)")
	fs.StringVar(&c.DebugAddr, "debug-addr", "", "serve Go's pprof profiles on this address, e.g. 127.0.0.1:6060 (off when empty; keep it private)")
	fs.DurationVar(&c.Shutdown, "shutdown-timeout", 10*time.Second, "how long to wait for requests to finish on shutdown")
	fs.DurationVar(&c.BodyTimeout, "body-timeout", 10*time.Second, "cut a request body that sends nothing for this long (408)")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", 60*time.Second, "a request must arrive and its answer be read within this (live streams exempt)")
	fs.Int64Var(&c.BodyMinRate, "body-min-rate", 1024, "bytes/s a request body must keep: it is cut (408) unless it has arrived by --body-timeout plus one second per this many bytes (0: no minimum)")
	fs.BoolVar(&c.H2C, "h2c", false, "also accept HTTP/2 cleartext with prior knowledge (h2c) on --addr, for clients that multiplex requests and live streams over one connection; at most 256 streams a connection, every per-request and per-stream limit applies to each stream")
	fs.IntVar(&c.ConnsPerIP, "conns-per-ip", 128, "connections open at once from one client address (IPv6: one /64); more are answered 429 and closed; --trusted-proxies are not capped (0: no cap)")
	fs.StringVar(&c.DB, "db", "", "PostgreSQL URL (postgres://user@host/db) of a database shared by several nodes; empty: SQLite in --data")
	fs.StringVar(&c.Redis, "redis", "", "Redis URL (redis://host:6379/0) that wakes the other nodes at once after a write (optional, with --db)")
	fs.StringVar(&c.Env, "env", "default", "the deployment's name in the Redis keyspace podium:{env}:v1:..., so several deployments can share one Redis")
	fs.StringVar(&c.Node, "node", "", "this node's name in logs and notices (default: host name and a random suffix)")
	fs.DurationVar(&c.PollEvery, "poll-every", time.Second, "with --db: how often to poll the database for what other nodes changed, notices or not")
	fs.DurationVar(&c.SessionTTL, "session-ttl", 30*24*time.Hour, "player sessions: how long a session lives when the request names no ttl")
	fs.DurationVar(&c.SessionMaxTTL, "session-max-ttl", 90*24*time.Hour, "player sessions: the longest ttl a request may ask")
	fs.IntVar(&c.SessionCap, "session-cap", 10, "player sessions: sessions per player (the oldest goes when a new one passes it)")
	fs.Int64Var(&c.OldPeriodsBytes, "old-periods-bytes", engine.DefaultOldPeriodsBytes, "bytes (estimated) of old periods, older than each board's previous one, kept in memory after a read; the least recently read go past it and are read from the database again when asked for (0: none is kept)")
	fs.DurationVar(&c.IdempotencyTTL, "idempotency-ttl", 48*time.Hour, "how long the answer to a request with an Idempotency-Key is kept for its retries (at least 24h)")
	fs.Int64Var(&c.IdempotencyBytes, "idempotency-bytes", engine.DefaultIdempotencyBytes, "bytes (estimated) of Idempotency-Key records kept in memory to decide retries (~110 bytes each, answers are read from the database); past it the oldest are evicted and keys not in memory are looked up in the database (0: none is kept)")
	fs.BoolVar(&c.WebhookAllowPrivate, "webhook-allow-private", false, "webhooks: allow endpoints in loopback, link-local and private ranges (refused by default: SSRF)")
	fs.DurationVar(&c.WebhookTimeout, "webhook-timeout", 10*time.Second, "webhooks: how long one delivery attempt may take")
	fs.DurationVar(&c.WebhookWindow, "webhook-retry-window", 24*time.Hour, "webhooks: how long a failed delivery is retried (exponential backoff with jitter) before it is marked failed")
	fs.IntVar(&c.WebhookBudget, "webhook-outbox-budget", webhooks.DefaultBudget, "webhooks: deliveries that may be pending, every endpoint together; past it the oldest of disabled endpoints, then of the endpoint with the most pending, are dropped (podium_webhook_dropped_total)")
	fs.DurationVar(&c.WebhookRetention, "webhook-retention", webhooks.DefaultRetention, "webhooks: how long delivered, failed and dropped deliveries, and events no delivery refers to, are kept (at least --webhook-retry-window)")
	fs.IntVar(&c.WebhookPeriodTop, "webhook-period-top", webhooks.DefaultPeriodTop, "webhooks: how many entries a period.ended event lists (and teams a contest event), 1 to 100")
	fs.IntVar(&c.FeedCap, "feed-cap", 200, "activity feed: events kept per board (older ones are pruned; GET /v1/feed's largest limit)")
	c.RateLimit.flags(fs) // ratelimit.go
	c.Evidence.flags(fs)  // evidence.go

	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text (key=value lines) or json (one object a line, for log collectors)")
	fs.DurationVar(&c.LogRepeatEvery, "log-repeat-every", 10*time.Second, "a warning or error with the same message is logged once per this interval, the next one saying how many were suppressed (0: every one)")
	fs.Int64Var(&c.SQLiteWALMax, "sqlite-wal-max", 0, "SQLite: disk the write-ahead log may take, bytes; checkpointed at half of it (0: 64 MiB or an eighth of the volume, whichever is smaller; at least 1 MiB)")
}

// validate checks what the flag types cannot; a mistake is a *usageError
// that names the flag. Zero values mean the defaults (see Main).
func (c *Config) validate() error {
	if err := checkAddr(c.Addr, ":8080, 127.0.0.1:8080"); err != nil {
		return usagef("serve", "--addr: %v", err)
	}
	if c.DebugAddr != "" {
		if err := checkAddr(c.DebugAddr, "127.0.0.1:6060"); err != nil {
			return usagef("serve", "--debug-addr: %v", err)
		}
	}
	if _, _, err := c.RateLimit.parsed(); err != nil {
		return err
	}
	if _, err := c.Evidence.budgets(); err != nil {
		return err
	}
	if err := podiumhttp.CheckOrigins(c.allowedOrigins()); err != nil {
		return usagef("serve", "--allowed-origins: %v", err)
	}
	if c.DB == "" && c.Data == "" {
		return usagef("serve", "--data must name a directory")
	}
	if c.DB != "" {
		if !strings.HasPrefix(c.DB, "postgres://") && !strings.HasPrefix(c.DB, "postgresql://") {
			return usagef("serve", "--db: %q is not a postgres:// URL", redactURL(c.DB))
		}
		if c.AdminKey == "" {
			return usagef("serve", "--db needs PODIUM_ADMIN_KEY: the nodes of a cluster share one admin key, which no node generates")
		}
	}
	if c.DB != "" && c.Env != "" {
		if _, err := redis.NewKeyspace(c.Env); err != nil {
			return usagef("serve", "--env: %q must be 1 to 32 characters of [a-z0-9_-]", c.Env)
		}
	}
	if c.Redis != "" {
		if c.DB == "" {
			return usagef("serve", "--redis needs --db: Redis only connects the nodes that share a PostgreSQL database")
		}
		if !strings.HasPrefix(c.Redis, "redis://") && !strings.HasPrefix(c.Redis, "rediss://") {
			return usagef("serve", "--redis: %q is not a redis:// URL", redactURL(c.Redis))
		}

	}
	if c.SessionTTL < 0 || c.SessionTTL > 0 && c.SessionTTL < time.Minute || c.SessionMaxTTL < 0 ||
		c.SessionMaxTTL > 0 && c.SessionMaxTTL < max(c.SessionTTL, time.Minute) || c.SessionCap < 0 || c.SessionCap > 1000 {
		return usagef("serve", "--session-ttl must be at least 1m, --session-max-ttl at least --session-ttl, --session-cap 1 to 1000")
	}
	switch c.Sync {
	case "", "full", "normal":
	default:
		return usagef("serve", "--sync: %q is not full or normal", c.Sync)
	}
	switch strings.ToLower(c.LogLevel) {
	case "", "debug", "info", "warn", "error":
	default:
		return usagef("serve", "--log-level: %q is not debug, info, warn or error", c.LogLevel)
	}
	if err := checkLogFormat(c.LogFormat); err != nil {
		return err
	}
	for _, n := range []struct {
		name string
		v    int64
	}{
		{"max-body", c.MaxBody}, {"max-batch", int64(c.MaxBatch)}, {"stream-per-ip", int64(c.StreamsPerIP)},
		{"stream-max", int64(c.StreamsMax)}, {"stream-memory", c.StreamMemory}, {"stream-memory-per-ip", c.StreamMemoryPerIP}, {"stream-coalesce", int64(c.Coalesce)},
		{"stream-snapshot-every", int64(c.SnapshotEvery)}, {"shutdown-timeout", int64(c.Shutdown)},
		{"body-timeout", int64(c.BodyTimeout)}, {"request-timeout", int64(c.RequestTimeout)}, {"poll-every", int64(c.PollEvery)},
		{"feed-cap", int64(c.FeedCap)}, {"old-periods-bytes", c.OldPeriodsBytes}, {"idempotency-bytes", c.IdempotencyBytes},
		{"body-min-rate", c.BodyMinRate}, {"conns-per-ip", int64(c.ConnsPerIP)},
		{"log-repeat-every", int64(c.LogRepeatEvery)}, {"sqlite-wal-max", c.SQLiteWALMax},
		{"webhook-timeout", int64(c.WebhookTimeout)}, {"webhook-retry-window", int64(c.WebhookWindow)},
		{"webhook-outbox-budget", int64(c.WebhookBudget)}, {"webhook-retention", int64(c.WebhookRetention)},
	} {
		if n.v < 0 {
			return usagef("serve", "--%s must not be negative", n.name)
		}
	}
	if c.IdempotencyTTL != 0 && c.IdempotencyTTL < 24*time.Hour {
		return usagef("serve", "--idempotency-ttl must be at least 24h (the API keeps an answer a day at least)")
	}
	if c.WebhookRetention != 0 && c.WebhookRetention < max(c.WebhookWindow, 24*time.Hour) {
		return usagef("serve", "--webhook-retention must be at least --webhook-retry-window and 24h (an event's id is kept that long, so that a replay does not emit it twice)")
	}
	if c.WebhookPeriodTop < 0 || c.WebhookPeriodTop > webhooks.MaxPeriodTop { // 0: the default
		return usagef("serve", "--webhook-period-top must be from 1 to %d", webhooks.MaxPeriodTop)
	}
	if c.FeedCap > maxFeedCap {
		return usagef("serve", "--feed-cap must be at most %d", maxFeedCap)
	}
	return nil
}

// checkAddr checks a listen address: host:port with a port from 0 to
// 65535 (or a service name such as http). What is wrong with it is a
// mistake on the command line, not a failure to listen; the error says
// what, with an example of the form.
func checkAddr(addr, example string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Errorf("%q is not host:port (e.g. %s)", addr, example)
	}
	if n, err := strconv.ParseUint(port, 10, 64); err == nil {
		if n > 65535 {
			return fmt.Errorf("%q: port %d is out of range (0 to 65535)", addr, n)
		}
		return nil
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("%q: unknown port %q (a number from 0 to 65535, e.g. %s)", addr, port, example)
	}
	return nil
}

// offIfZero is n, or -1 for 0: a flag's 0 turns off what the http
// package's 0 makes the default.
func offIfZero[T int | int64](n T) T {
	if n == 0 {
		return -1
	}
	return n
}

// oldPeriodsBytes is the engine's OldPeriodsBytes: --old-periods-bytes 0
// keeps none, which the engine spells negative (its 0 is the default).
func (c *Config) oldPeriodsBytes() int64 {
	if c.OldPeriodsBytes == 0 {
		return -1
	}
	return c.OldPeriodsBytes
}

// idempotencyBytes is the engine's IdempotencyBytes: --idempotency-bytes 0
// keeps none in memory, which the engine spells negative (its 0 is the
// default).
func (c *Config) idempotencyBytes() int64 {
	if c.IdempotencyBytes == 0 {
		return -1
	}
	return c.IdempotencyBytes
}

// maxFeedCap bounds --feed-cap: a feed read is one answer of that many
// events at most (a settled tournament's may carry 4 KiB of data, so
// about 4.5 MB), and a feed stream's window as large as a board's.
const maxFeedCap = 1000

// redactURL drops the password of a URL for a message.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable)"
	}
	return u.Redacted()
}
