package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/podiumhq/podium/aggregate"
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/groups"
	"github.com/podiumhq/podium/league"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/tournament"
)

type opsFlags struct {
	Data     string
	URLs     urlList
	DB       string
	Redis    string
	Env      string
	RedisMax int
}

func (o *opsFlags) flags(fsName string, out io.Writer, summary string) *flag.FlagSet {
	fs := newFlagSet(fsName, summary, out)
	fs.StringVar(&o.Data, "data", "./podium-data", "data directory of the server (without --db); with --url it only locates admin.key")
	fs.Var(&o.URLs, "url", "base URL of a running server or node, e.g. http://node1:8080; give it once per node (or a comma-separated list)")
	fs.StringVar(&o.DB, "db", "", "PostgreSQL URL (postgres://user@host/db) of the database that several nodes share")
	fs.StringVar(&o.Redis, "redis", "", "Redis URL (redis://host:6379/0) of the nodes' shared tier")
	fs.StringVar(&o.Env, "env", "default", "the deployment's name in the Redis keyspace podium:{env}:v1:...")
	fs.IntVar(&o.RedisMax, "redis-max-keys", 100000, "with --redis: look at most at this many keys under podium:{env}: (SCAN with MATCH and COUNT)")
	return fs
}

func (o *opsFlags) validate(cmd string) error {
	if err := o.URLs.validate(cmd); err != nil {
		return err
	}
	if o.RedisMax <= 0 {
		return usagef(cmd, "--redis-max-keys must be positive")
	}
	return validateShared(cmd, o.DB, o.Redis, o.Env)
}

// cliLogger shows the operations commands' warnings (for example a data
// directory readable by others) on stderr.
func cliLogger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func checkCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o opsFlags
	fs := o.flags("check", stdout, `Checks that what podium serves matches its database of record.

Embedded deployment (SQLite in --data):
  0. the data directory and the database name the same instance, and SQLite's
     quick_check finds the database sound;
  1. the entries table against a replay of the append-only submissions log;
  2. rank indexes built from the database (in this process) for order and content.
Without --url it opens --data itself, so the server must be stopped (a running
server holds its data directory). With --url, the running server runs the
checks 0 (quick_check), 1 and 2 against its own in-memory indexes; --data then
only locates admin.key (or set PODIUM_ADMIN_KEY).

Several nodes (--db, --url once per node, --redis; the nodes may keep running):
  --db     check 1 on the PostgreSQL database; exact while the nodes write
           (entries written during the check are left out and counted)
  --url    each node checks its in-memory indexes against the database
  --redis  Redis answers, and podium:{env}:* holds only the keys that this
           version's keyspace documents (SCAN, at most --redis-max-keys keys)

Prints every difference and exits 1 if there is any; exits 3 when it cannot
ask a server (--url) for want of an admin key, or when the server refuses it.`)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := o.validate("check"); err != nil {
		return err
	}
	if len(o.URLs) > 0 {
		// Before any check: without a key no node can be asked.
		if _, err := adminKeyFor(o.Data); err != nil {
			return err
		}
	}
	if o.DB != "" || o.Redis != "" {
		bad := 0
		if o.DB != "" {
			n, err := checkDB(ctx, stdout, o.DB)
			if err != nil {
				return err
			}
			bad += n
		}
		n, setup := checkNodes(ctx, stdout, o.URLs, o.Data)
		bad += n
		if o.Redis != "" {
			bad += checkRedis(ctx, stdout, o.Redis, o.Env, o.RedisMax)
		}
		return verdictOr(stdout, bad, setup)
	}
	if len(o.URLs) > 0 {
		n, setup := checkNodes(ctx, stdout, o.URLs, o.Data)
		return verdictOr(stdout, n, setup)
	}
	d, err := openDataDir(o.Data, false, "to check a running server use: podium check --url http://HOST:PORT (it runs the checks on the server)", cliLogger(stderr))
	if err != nil {
		return err
	}
	defer d.release()
	store, err := d.openStore(ctx, sqlite.Options{})
	var ie *integrityError
	if errors.As(err, &ie) {
		report(stdout, "data directory and database", []string{ie.msg})
		fmt.Fprintln(stdout, "check: 1 difference(s)")
		return errMismatch
	}
	if err != nil {
		return err
	}
	defer d.closeStore(true)
	id, err := store.InstanceID(ctx)
	if err != nil {
		return err
	}
	report(stdout, "data directory and database are instance "+id, nil)
	bad := 0
	problems, err := store.QuickCheck(ctx)
	if err != nil {
		return err
	}
	report(stdout, "SQLite quick_check", problems)
	bad += len(problems)
	diffs, err := engine.CheckStore(ctx, store)
	if err != nil {
		return err
	}
	report(stdout, "entries vs log", diffLines(diffs))
	bad += len(diffs)
	diffs, err = tournament.CheckSettlements(ctx, store, time.Now()) // tournaments and points
	if err != nil {
		return err
	}
	report(stdout, "tournament payouts and points boards", diffLines(diffs))
	bad += len(diffs)
	diffs, err = league.Check(ctx, store) // leagues' placements
	if err != nil {
		return err
	}
	report(stdout, "league placements (cohorts within size, filled in order)", diffLines(diffs))
	bad += len(diffs)

	// The aggregate module checks each aggregate against its sources,
	// and the groups module each group board against its set and source
	// (engine.IndexCheckers); no other module is needed to check.
	eng := engine.New(engine.Config{Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Modules: []engine.Module{aggregate.New(), groups.New()}})
	if err := eng.Start(ctx); err != nil {
		return err
	}
	diffs, err = eng.Checker().Indexes(ctx)
	eng.Close()
	if err != nil {
		return err
	}
	report(stdout, "indexes built from the database", diffLines(diffs))
	bad += len(diffs)
	n, err := checkContests(ctx, stdout, store, "contests: solves, heads and snapshots")
	if err != nil {
		return err
	}
	bad += n
	return verdict(stdout, bad)
}

func verdict(w io.Writer, bad int) error {
	if bad > 0 {
		fmt.Fprintf(w, "check: %d difference(s)\n", bad)
		return errMismatch
	}
	fmt.Fprintln(w, "check: ok")
	return nil
}

// verdictOr is the verdict, unless some part could not be checked for a
// setup error: then that error (exit 3), after the differences found in
// the other parts are counted.
func verdictOr(w io.Writer, bad int, setup error) error {
	if setup == nil {
		return verdict(w, bad)
	}
	if bad > 0 {
		fmt.Fprintf(w, "check: %d difference(s) in the parts checked; the others were not checked\n", bad)
	}
	return setup
}

func diffLines(diffs []engine.Diff) []string {
	lines := make([]string, len(diffs))
	for i, d := range diffs {
		lines[i] = d.String()
	}
	return lines
}

func report(w io.Writer, what string, problems []string) {
	if len(problems) == 0 {
		fmt.Fprintf(w, "ok    %s\n", what)
		return
	}
	fmt.Fprintf(w, "FAIL  %s: %d difference(s)\n", what, len(problems))
	for _, p := range problems {
		fmt.Fprintf(w, "      %s\n", p)
	}
}

func rebuildCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o opsFlags
	var dryRun bool
	fs := o.flags("rebuild", stdout, `Rebuilds derived state from the database of record.

  (none of --url, --db, --redis)  recomputes the entries table of every board
           in --data from the append-only submissions log. The server must be
           stopped: a running server holds --data.
  --url    makes each running server or node reload its in-memory indexes from
           the database (give --url once per node).
  --db     recomputes the entries table of the PostgreSQL database from the
           log, with progress. Every node must be stopped: the nodes write the
           entries table with each commit. It refuses while nodes are connected
           (pg_stat_activity). Nodes load the rebuilt table when they start.
  --redis  deletes the keys under podium:{env}: that this version's keyspace
           does not document, and those of older keyspace versions (Redis holds
           nothing that is not in the database); --dry-run only lists them.
           The nodes may keep running.`)
	fs.BoolVar(&dryRun, "dry-run", false, "with --redis: list the keys that would be deleted, delete nothing")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := o.validate("rebuild"); err != nil {
		return err
	}
	if o.DB != "" && len(o.URLs) > 0 {
		return usagef("rebuild", "--db runs with every node stopped and --url reloads running nodes: run them separately")
	}
	if dryRun && o.Redis == "" {
		return usagef("rebuild", "--dry-run goes with --redis")
	}
	if o.DB != "" || o.Redis != "" || len(o.URLs) > 0 {
		if o.DB != "" {
			if err := rebuildDB(ctx, stdout, o.DB); err != nil {
				return err
			}
		}
		if o.Redis != "" {
			if err := cleanRedis(ctx, stdout, o.Redis, o.Env, o.RedisMax, dryRun); err != nil {
				return err
			}
		}
		for _, u := range o.URLs {
			body, err := adminCall(ctx, u, o.Data, "/v1/admin/reload")
			if err != nil {
				return fmt.Errorf("%s: %w", u, err)
			}
			fmt.Fprintf(stdout, "rebuild: %s reloaded its indexes from the database\n", u)
			reportRepaired(stdout, u, body) // tourney.go
		}
		return nil
	}
	d, err := openDataDir(o.Data, false, "stop that server first, or make it reload its indexes with: podium rebuild --url http://HOST:PORT", cliLogger(stderr))
	if err != nil {
		return err
	}
	defer d.release()
	store, err := d.openStore(ctx, sqlite.Options{})
	if err != nil {
		return err
	}
	t0 := time.Now()
	n, err := engine.RebuildStore(ctx, store)
	var repaired []string
	if err == nil {
		repaired, err = repairSettlements(ctx, store) // tournaments: settle again where payouts differ
	}
	var fixed int
	if err == nil {
		fixed, err = groups.Repair(ctx, store, cliLogger(stderr)) // group boards: correcting rows where they differ
	}
	if cerr := d.closeStore(err == nil); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rebuild: %d entries recomputed from the log in %s\n", n, time.Since(t0).Round(time.Millisecond))
	if len(repaired) > 0 {
		fmt.Fprintf(stdout, "rebuild: settled again, paying the differences: %s\n", strings.Join(repaired, ", "))
	}
	if fixed > 0 {
		fmt.Fprintf(stdout, "rebuild: %d group board entries corrected from their members\n", fixed)
	}
	return nil
}

// adminKeyFor finds the admin key: PODIUM_ADMIN_KEY or the data directory.
func adminKeyFor(data string) (string, error) {
	if k := os.Getenv("PODIUM_ADMIN_KEY"); k != "" {
		return k, nil
	}
	path := filepath.Join(data, "admin.key")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", &setupError{msg: fmt.Sprintf("no admin key to ask the server with: set PODIUM_ADMIN_KEY, or point --data at the server's data directory (%s: %v)", path, errors.Unwrap(err))}
	}
	return strings.TrimSpace(string(b)), nil
}

func adminCall(ctx context.Context, base, data, path string) ([]byte, error) {
	key, err := adminKeyFor(data)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimRight(base, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return nil, &setupError{msg: fmt.Sprintf("the server refused the admin key (%s): PODIUM_ADMIN_KEY, or admin.key in --data, is not this server's admin key", resp.Status)}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// checkAnswer is what POST /v1/admin/check answers. A server from before
// the store checks leaves out quick_check and log_differences.
type checkAnswer struct {
	OK             bool           `json:"ok"`
	Differences    []engine.Diff  `json:"differences"`
	LogDifferences *[]engine.Diff `json:"log_differences"`
	QuickCheck     *[]string      `json:"quick_check"`
	// Tournaments (tourney.go); absent from a server before them.
	SettlementDifferences *[]engine.Diff `json:"settlement_differences"`
	// ContestDifferences: CTF contests against their solves (package ctf).
	ContestDifferences *[]ctf.Problem `json:"contest_differences"`
}

func remoteCheck(ctx context.Context, base, data string) (*checkAnswer, error) {
	body, err := adminCall(ctx, base, data, "/v1/admin/check")
	if err != nil {
		return nil, err
	}
	var out checkAnswer
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("check answer: %w", err)
	}
	return &out, nil
}
