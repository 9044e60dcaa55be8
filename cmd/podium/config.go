package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
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

	Coalesce      time.Duration // live: window that coalesces changes into one delta
	SnapshotEvery time.Duration // live: safety-net snapshot interval
	StreamsPerIP  int           // live: concurrent streams per client IP
	StreamsMax    int           // live: concurrent streams in all
	StreamMemory  int64         // live: memory budget of all streams, bytes
	Origins       string        // web origins allowed to use the API from a browser, comma-separated ("*": any)

	DebugAddr string // if set, serve net/http/pprof here (never on a public address)
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
func newFlagSet(name, summary string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: podium %s [flags]\n\n%s\n\nFlags (each also an environment variable):\n", name, summary)
		fs.VisitAll(func(f *flag.Flag) {
			fmt.Fprintf(stderr, "  --%s (%s)\n    \t%s", f.Name, envName(f.Name), f.Usage)
			if f.DefValue != "" && f.DefValue != "false" {
				fmt.Fprintf(stderr, " (default %q)", f.DefValue)
			}
			fmt.Fprintln(stderr)
		})
	}
	return fs
}

func envName(flagName string) string {
	return "PODIUM_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parse applies PODIUM_* variables for flags not given on the command line.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "podium %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("%s=%q: %v", envName(f.Name), v, e)
			}
		}
	})
	return err
}

func (c *Config) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", ":8080", "address to listen on")
	fs.StringVar(&c.Data, "data", "./podium-data", "data directory (SQLite database, generated admin key)")
	fs.BoolVar(&c.Demo, "demo", false, "create demo boards and feed them simulated players")
	fs.StringVar(&c.Sync, "sync", "full", "SQLite durability: full (survives power loss) or normal (survives a crash of podium, not of the OS)")
	fs.Int64Var(&c.MaxBody, "max-body", 1<<20, "largest request body in bytes")
	fs.IntVar(&c.MaxBatch, "max-batch", 8192, "most submissions in one group commit")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.DurationVar(&c.Coalesce, "stream-coalesce", 200*time.Millisecond, "live streams: changes within this window become one delta")
	fs.DurationVar(&c.SnapshotEvery, "stream-snapshot-every", 30*time.Second, "live streams: send a full snapshot this often as a safety net")
	fs.IntVar(&c.StreamsPerIP, "stream-per-ip", 32, "live streams: concurrent streams per client IP (more get 429)")
	fs.IntVar(&c.StreamsMax, "stream-max", 20000, "live streams: concurrent streams in all (more get 429)")
	fs.Int64Var(&c.StreamMemory, "stream-memory", 256<<20, "live streams: bytes they may hold in all (histories, snapshots, queues); past it resume histories are dropped and new windows get 429")
	fs.StringVar(&c.Origins, "allowed-origins", "*", "web origins whose pages may use the API and open streams, comma-separated, e.g. https://example.com,https://*.example.com (\"*\": any)")
	fs.StringVar(&c.DebugAddr, "debug-addr", "", "serve Go's pprof profiles on this address, e.g. 127.0.0.1:6060 (off when empty; keep it private)")
	fs.DurationVar(&c.Shutdown, "shutdown-timeout", 10*time.Second, "how long to wait for requests to finish on shutdown")
}
