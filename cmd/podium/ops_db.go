package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/groups"
	"github.com/podiumhq/podium/league"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/redis"
	"github.com/podiumhq/podium/tournament"
)

// The operations commands on a shared deployment: check and rebuild with
// --db (PostgreSQL), --redis and several --url, and the helpers migrate
// shares with them.

// urlList is a flag that may be given several times (--url A --url B), or
// once with a comma-separated list (so PODIUM_URL can name several).
type urlList []string

func (l *urlList) String() string { return strings.Join(*l, ",") }

func (l *urlList) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// validate checks every URL of the list (after parse, so that a mistake
// is one clear line that names the flag).
func (l urlList) validate(cmd string) error {
	for _, u := range l {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return usagef(cmd, "--url: %q is not an http:// or https:// URL (e.g. http://node1:8080)", u)
		}
	}
	return nil
}

// validateDB checks --db and --redis of an operations command.
func validateShared(cmd, db, redisURL, env string) error {
	if db != "" && !strings.HasPrefix(db, "postgres://") && !strings.HasPrefix(db, "postgresql://") {
		return usagef(cmd, "--db: %q is not a postgres:// URL", redactURL(db))
	}
	if redisURL != "" {
		if !strings.HasPrefix(redisURL, "redis://") && !strings.HasPrefix(redisURL, "rediss://") {
			return usagef(cmd, "--redis: %q is not a redis:// URL", redactURL(redisURL))
		}
		if _, err := redis.NewKeyspace(env); err != nil {
			return usagef(cmd, "--env: %q must be 1 to 32 characters of [a-z0-9_-]", env)
		}
	}
	return nil
}

// opsStatementTimeout bounds each statement of the operations commands: a
// rebuild replaces a million entries in one transaction.
const opsStatementTimeout = 10 * time.Minute

// openOpsDB opens the PostgreSQL database of a deployment for an
// operations command. Its connections are named after the nodes' with
// "-ops" appended, so that they are never taken for a node's; nodeName is
// the nodes' application_name.
func openOpsDB(ctx context.Context, dsn string) (st *postgres.Store, nodeName string, err error) {
	nodeName, err = postgres.ApplicationName(dsn)
	if err != nil {
		return nil, "", err
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("--db: %w", err)
	}
	q := u.Query()
	q.Set("application_name", nodeName+"-ops")
	u.RawQuery = q.Encode()
	st, err = postgres.Open(ctx, u.String(), postgres.Options{StatementTimeout: opsStatementTimeout})
	if err != nil {
		return nil, "", err
	}
	return st, nodeName, nil
}

// refuseNodes fails when podium nodes are connected to the database: what
// the command does (why) must not run beside them.
func refuseNodes(ctx context.Context, st *postgres.Store, nodeName, dsn, why string) error {
	ss, err := st.Sessions(ctx, nodeName)
	if err != nil {
		return err
	}
	if len(ss) == 0 {
		return nil
	}
	var who []string
	for _, s := range ss[:min(len(ss), 5)] {
		w := fmt.Sprintf("pid %d", s.PID)
		if s.Client != "" {
			w += " from " + s.Client
		}
		if !s.Started.IsZero() {
			w += " since " + s.Started.UTC().Format(time.RFC3339)
		}
		who = append(who, w)
	}
	if len(ss) > len(who) {
		who = append(who, fmt.Sprintf("and %d more", len(ss)-len(who)))
	}
	return fmt.Errorf("%d connection(s) named %q, podium nodes, use the database %s (%s): stop every node first: %s. "+
		"(PostgreSQL lists connections per database, not per schema: a deployment in another schema of the same database "+
		"counts too; give each deployment its own application_name in its --db URL.)",
		len(ss), nodeName, redactURL(dsn), strings.Join(who, "; "), why)
}

// checkDB runs the store check on a shared database and returns how many
// differences it found.
func checkDB(ctx context.Context, w io.Writer, dsn string) (int, error) {
	st, _, err := openOpsDB(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		return 0, err
	}
	report(w, fmt.Sprintf("database %s answers (schema version %d)", redactURL(dsn), v), nil)
	t0 := time.Now()
	r, err := engine.CheckStoreDetail(ctx, st)
	if err != nil {
		return 0, err
	}
	what := fmt.Sprintf("database: entries vs log (%d boards, %d entries compared in %s)", r.Boards, r.Entries, time.Since(t0).Round(time.Millisecond))
	if r.Moved > 0 {
		what += fmt.Sprintf("; %d entries written by the nodes during the check were left out", r.Moved)
	}
	report(w, what, diffLines(r.Diffs))
	sd, err := tournament.CheckSettlements(ctx, st, time.Now()) // tournaments and points
	if err != nil {
		return 0, err
	}
	report(w, "database: tournament payouts and points boards", diffLines(sd))
	ld, err := league.Check(ctx, st) // leagues' placements
	if err != nil {
		return 0, err
	}
	report(w, "database: league placements (cohorts within size, filled in order)", diffLines(ld))
	n, err := checkContests(ctx, w, st, "database: contests: solves, heads and snapshots")
	if err != nil {
		return 0, err
	}
	return len(r.Diffs) + len(sd) + len(ld) + n, nil
}

// checkNodes asks each running node to check its in-memory indexes and
// returns how many problems they found (a node that does not answer is
// one).
//
// A node that refused the admin key is no difference: it is reported on
// its own line and returned as a *setupError (exit 3) once the other nodes
// are checked.
func checkNodes(ctx context.Context, w io.Writer, urls []string, data string) (int, error) {
	bad := 0
	var setup error
	for _, u := range urls {
		res, err := remoteCheck(ctx, u, data)
		var se *setupError
		if errors.As(err, &se) {
			fmt.Fprintf(w, "SETUP server %s: not checked: %s\n", u, se.msg)
			if setup == nil {
				setup = err
			}
			continue
		}
		if err != nil {
			report(w, "server "+u, []string{err.Error()})
			bad++
			continue
		}
		if res.QuickCheck != nil {
			report(w, "server "+u+": SQLite quick_check", *res.QuickCheck)
			bad += len(*res.QuickCheck)
		}
		if res.LogDifferences != nil {
			report(w, "server "+u+": entries vs log", diffLines(*res.LogDifferences))
			bad += len(*res.LogDifferences)
		}
		report(w, "server "+u+": indexes vs database", diffLines(res.Differences))
		bad += len(res.Differences)
		if sd := res.SettlementDifferences; sd != nil { // tourney.go
			report(w, "server "+u+": tournament payouts and points boards", diffLines(*sd))
			bad += len(*sd)
		}
		if res.ContestDifferences != nil {
			report(w, "server "+u+": contests vs database", problemLines(*res.ContestDifferences))
			bad += len(*res.ContestDifferences)
		}
	}
	return bad, setup
}

// redisShown is how many keys a report lists one by one.
const redisShown = 20

// scanRedis connects to Redis and lists the deployment's keys by status.
func scanRedis(ctx context.Context, w io.Writer, redisURL, env string, maxKeys int) (a *redis.Admin, byStatus map[redis.KeyStatus][]string, complete bool, err error) {
	a, err = redis.OpenAdmin(redisURL, env)
	if err != nil {
		return nil, nil, false, err
	}
	t0 := time.Now()
	if err := a.Ping(ctx); err != nil {
		a.Close()
		return nil, nil, false, err
	}
	report(w, fmt.Sprintf("redis %s answers (%s)", redactURL(redisURL), time.Since(t0).Round(time.Microsecond)), nil)
	keys, complete, err := a.Scan(ctx, maxKeys)
	if err != nil {
		a.Close()
		return nil, nil, false, err
	}
	ks := a.Keyspace()
	byStatus = map[redis.KeyStatus][]string{}
	for _, k := range keys {
		s := ks.Classify(k)
		byStatus[s] = append(byStatus[s], k)
	}
	return a, byStatus, complete, nil
}

// checkRedis checks that Redis answers and that the deployment's part of
// it holds only keys that redis/keyspace.go documents. Keys of a newer
// keyspace version are noted, not counted: a newer podium may share the
// deployment during an upgrade.
func checkRedis(ctx context.Context, w io.Writer, redisURL, env string, maxKeys int) int {
	a, by, complete, err := scanRedis(ctx, w, redisURL, env, maxKeys)
	if err != nil {
		report(w, "redis "+redactURL(redisURL), []string{err.Error()})
		return 1
	}
	defer a.Close()
	ks := a.Keyspace()
	var problems []string
	for _, s := range []redis.KeyStatus{redis.Undocumented, redis.Older} {
		keys := by[s]
		for _, k := range keys[:min(len(keys), redisShown)] {
			typ, _ := a.Type(ctx, k)
			problems = append(problems, fmt.Sprintf("%s (%s): %s; podium rebuild --redis deletes it", k, typ, s))
		}
		if len(keys) > redisShown {
			problems = append(problems, fmt.Sprintf("and %d more keys: %s", len(keys)-redisShown, s))
		}
	}
	if !complete {
		problems = append(problems, fmt.Sprintf("stopped after %d keys under %s*: more may exist (raise --redis-max-keys)", maxKeys, ks.Deployment()))
	}
	n := len(by[redis.Undocumented]) + len(by[redis.Older])
	if !complete {
		n++
	}
	report(w, fmt.Sprintf("redis keyspace %s* (%d documented keys; version %s)", ks.Deployment(), len(by[redis.Documented]), redis.Version), problems)
	if newer := by[redis.Newer]; len(newer) > 0 {
		fmt.Fprintf(w, "note  %d keys of a newer keyspace version (a newer podium shares this deployment), left alone, e.g. %s\n", len(newer), newer[0])
	}
	return n
}

// cleanRedis deletes the deployment's keys that this version does not
// document, and those of older versions (Redis holds nothing that is not
// in the database, so deleting is always safe); keys of newer versions are
// left alone. With dryRun it only lists them.
func cleanRedis(ctx context.Context, w io.Writer, redisURL, env string, maxKeys int, dryRun bool) error {
	a, by, complete, err := scanRedis(ctx, w, redisURL, env, maxKeys)
	if err != nil {
		return err
	}
	defer a.Close()
	stale := append(append([]string(nil), by[redis.Undocumented]...), by[redis.Older]...)
	for _, k := range stale[:min(len(stale), redisShown)] {
		fmt.Fprintf(w, "      %s: %s\n", k, a.Keyspace().Classify(k))
	}
	if len(stale) > redisShown {
		fmt.Fprintf(w, "      and %d more\n", len(stale)-redisShown)
	}
	if len(by[redis.Newer]) > 0 {
		fmt.Fprintf(w, "rebuild: %d keys of a newer keyspace version left alone\n", len(by[redis.Newer]))
	}
	switch {
	case len(stale) == 0:
		fmt.Fprintf(w, "rebuild: redis holds no stale key under %s*\n", a.Keyspace().Deployment())
	case dryRun:
		fmt.Fprintf(w, "rebuild: dry run: would delete %d stale keys; nothing deleted\n", len(stale))
	default:
		n, err := a.Delete(ctx, stale)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "rebuild: deleted %d stale keys from redis\n", n)
	}
	if !complete {
		fmt.Fprintf(w, "rebuild: stopped after %d keys: run it again for the rest (or raise --redis-max-keys)\n", maxKeys)
	}
	return nil
}

// rebuildDB recomputes the entries table of a shared database from its log,
// with the nodes stopped, and shows progress.
func rebuildDB(ctx context.Context, w io.Writer, dsn string) error {
	st, nodeName, err := openOpsDB(ctx, dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := refuseNodes(ctx, st, nodeName, dsn, "a rebuild rewrites the entries table, which running nodes write "+
		"with every commit; to make running nodes reload their indexes instead, use podium rebuild --url"); err != nil {
		return err
	}
	t0 := time.Now()
	var (
		boardStart time.Time
		stopTicker func()
	)
	n, err := engine.RebuildStoreProgress(ctx, st, func(s engine.RebuildStep) {
		if !s.Done {
			boardStart = time.Now()
			fmt.Fprintf(w, "rebuild: board %d/%d %s: %d submissions replayed, writing %d entries\n", s.Index, s.Boards, s.Board, s.Log, s.Entries)
			stopTicker = every(w, 5*time.Second, func(d time.Duration) string {
				return fmt.Sprintf("rebuild: board %s: still writing %d entries (%s)", s.Board, s.Entries, d.Round(time.Second))
			})
			return
		}
		stopTicker()
		took := time.Since(boardStart)
		fmt.Fprintf(w, "rebuild: board %d/%d %s: done in %s (%s entries/s)\n", s.Index, s.Boards, s.Board, took.Round(time.Millisecond), rate(s.Entries, took))
	})
	if stopTicker != nil {
		stopTicker() // a failure in the middle of a board
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "rebuild: %d entries recomputed from the log in %s\n", n, time.Since(t0).Round(time.Millisecond))
	fixed, err := groups.Repair(ctx, st, slog.New(slog.NewTextHandler(io.Discard, nil))) // group boards: correcting rows where they differ
	if err != nil {
		return err
	}
	if fixed > 0 {
		fmt.Fprintf(w, "rebuild: %d group board entries corrected from their members\n", fixed)
	}
	return nil
}

// every prints line(elapsed) to w every interval until the returned stop
// is called; stop waits for the printer to end and may be called again.
func every(w io.Writer, interval time.Duration, line func(elapsed time.Duration) string) (stop func()) {
	t0 := time.Now()
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				fmt.Fprintln(w, line(time.Since(t0)))
			}
		}
	}()
	stopped := false
	return func() {
		if !stopped {
			stopped = true
			close(quit)
			<-done
		}
	}
}

// rate formats n things in d as a rate per second.
func rate(n int, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(n)/d.Seconds())
}
