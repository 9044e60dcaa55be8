// Package postgres is podium's database of record on PostgreSQL: a
// podium.Store on a pgx connection pool, with the same semantics as the
// SQLite store (package storetest is the contract both pass).
//
// A group commit is one round trip: every part of the batch (log rows, the
// boards' heads, entry deletes and upserts, watermarks, idempotency records)
// is one INSERT ... SELECT FROM unnest(...) statement whose columns are bound
// as arrays in PostgreSQL's binary format, pipelined with the others and run
// as one implicit transaction. It is durable when Commit returns as far as
// the server's synchronous_commit makes it (on by default: the WAL is
// flushed before the commit is acknowledged). The start-up scans
// (LoadEntries, Log) read binary rows straight from the wire.
//
// The schema is created and upgraded by the embedded, ordered migrations in
// migrations/, through the runner shared with the SQLite store
// (internal/migrate); several processes may open one database at once.
// Tables are unqualified: a search_path in the connection string (for
// example ?search_path=podium) puts podium in a schema of its own.
//
// Store is also a podium.SharedStore, for several podium nodes on one
// database (shared.go): write transactions that lock the heads of the
// boards they write, a generation per board, and the change feed of
// board, player and key changes (changes.go). Broker carries the nodes'
// notices over LISTEN/NOTIFY (broker.go).
//
// Times are stored as unix milliseconds and read back in UTC. An empty meta
// object is stored as NULL and read back as {}: every Meta this package
// returns is a JSON object, never nil.
package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/podiumhq/podium"
)

// Options configures Open. A zero field means its default; a setting in
// the connection string is kept when the field is zero.
type Options struct {
	// MaxConns is the size of the connection pool (default: the
	// connection string's pool_max_conns, else pgxpool's max(4, CPUs)).
	MaxConns int
	// ConnectTimeout bounds dialling and authenticating a connection, and
	// every Ping (default 2 s, or the connection string's
	// connect_timeout).
	ConnectTimeout time.Duration
	// StatementTimeout is PostgreSQL's statement_timeout for every
	// statement except the scans of LoadEntries and Log, which stream rows
	// to a callback for as long as it takes (default 30 s, or the
	// connection string's statement_timeout; negative: none).
	StatementTimeout time.Duration
	// LockTimeout is PostgreSQL's lock_timeout: the longest a statement
	// waits for a lock, above all a writer for a board another node holds
	// (default 6 s; negative: none). A write transaction that waits longer
	// fails with ECodeUnavailable (any other statement with the server's
	// error) and stores nothing, instead of queueing behind a node that
	// paused while it held the board.
	LockTimeout time.Duration
	// IdleInTransactionTimeout is PostgreSQL's
	// idle_in_transaction_session_timeout: the server ends a session that
	// sits this long inside a transaction without sending a statement
	// (default 4 s; negative: none). A node that pauses or is cut off
	// while it holds a board's lock thus loses the lock, and its
	// transaction can never commit. It must be longer than a node's
	// longest legitimate pause inside a write transaction (loading a
	// board's period of a million entries takes about a second), and
	// shorter than LockTimeout, so that the writers queued behind a
	// frozen node get the board instead of failing (bench/cluster: with
	// 10 s and 5 s, a SIGSTOPped holder stalled a hot board 10 s and failed
	// the waiting writes).
	IdleInTransactionTimeout time.Duration
	// ChangeRetention is how long the change feed keeps a change (default
	// 7 days). A node that has not read the feed for longer must reload
	// every board, player and key (Changes returns
	// podium.ErrChangesPruned).
	ChangeRetention time.Duration

	// cancelGrace is how long a statement whose context ended has to
	// answer the cancel request before its connection is closed (default
	// defaultCancelGrace); tests on a loaded machine make it longer.
	cancelGrace time.Duration
}

// Defaults of Options.
const (
	DefaultConnectTimeout           = 2 * time.Second
	DefaultStatementTimeout         = 30 * time.Second
	DefaultLockTimeout              = 6 * time.Second
	DefaultIdleInTransactionTimeout = 4 * time.Second
	DefaultChangeRetention          = 7 * 24 * time.Hour
)

// defaultCancelGrace is how long a statement whose context ended has to
// answer the cancel request before its connection is closed. The server
// answers within milliseconds unless it is overloaded or unreachable.
const defaultCancelGrace = 500 * time.Millisecond

// Store is a podium.Store on PostgreSQL. It is safe for concurrent use.
type Store struct {
	pool        *pgxpool.Pool
	pingTimeout time.Duration
	// scratch holds *writer values: the buffers of one commit.
	scratch sync.Pool
	// retention is how long the change feed keeps a change; nextPrune is
	// when (unix nanoseconds) a metadata write next prunes it.
	retention time.Duration
	nextPrune atomic.Int64

	// The rows of each feature: views of this Store whose methods are
	// promoted to it, one type per module, so that no one type declares
	// every feature's methods (bindRows sets them).
	keyRows
	sessionRows
	evidenceRows
	reviewRows
	feedRows
	tourneyRows
	leagueRows
	quotaRows
	contestRows
	webhookRows
	groupRows
}

// bindRows points the rows of each feature at s.
func (s *Store) bindRows() {
	s.keyRows = keyRows{s}
	s.sessionRows = sessionRows{s}
	s.evidenceRows = evidenceRows{s}
	s.reviewRows = reviewRows{s}
	s.feedRows = feedRows{s}
	s.tourneyRows = tourneyRows{s}
	s.leagueRows = leagueRows{s}
	s.quotaRows = quotaRows{s}
	s.contestRows = contestRows{s}
	s.webhookRows = webhookRows{s}
	s.groupRows = groupRows{s}
}

var (
	_ podium.Store       = (*Store)(nil)
	_ podium.SharedStore = (*Store)(nil)
)

// Open connects to the database that dsn names (a postgres:// URL or
// key=value string, as pgx reads it) and brings its schema up to date. It
// fails if the database was written by a newer podium whose schema this
// one does not know, or if the server cannot be reached within the connect
// timeout.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = int32(min(opts.MaxConns, 1<<20))
	}
	switch {
	case opts.ConnectTimeout > 0:
		cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	case cfg.ConnConfig.ConnectTimeout <= 0:
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	rp := cfg.ConnConfig.RuntimeParams
	setTimeout(rp, "statement_timeout", opts.StatementTimeout, DefaultStatementTimeout)
	setTimeout(rp, "lock_timeout", opts.LockTimeout, DefaultLockTimeout)
	setTimeout(rp, "idle_in_transaction_session_timeout", opts.IdleInTransactionTimeout, DefaultIdleInTransactionTimeout)
	if rp["application_name"] == "" {
		rp["application_name"] = "podium"
	}
	// When a context ends mid-statement, ask the server to cancel the
	// statement and wait for its answer, giving up the connection only if
	// it does not come soon. pgx's default closes the connection at once
	// and cancels in the background: Commit would return while the
	// server's session still runs, and a commit waiting for a lock could
	// still commit, after Commit reported failure, if it got the lock
	// before the cancel arrived (TestCommitCancelledInFlight).
	grace := cmp.Or(opts.cancelGrace, defaultCancelGrace)
	cfg.ConnConfig.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: grace}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Store{pool: pool, pingTimeout: cfg.ConnConfig.ConnectTimeout, retention: cmp.Or(opts.ChangeRetention, DefaultChangeRetention)}
	s.bindRows()
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return s, nil
}

// setTimeout sets the session timeout name in rp: opt when positive, none
// when negative, else the connection string's value, else def.
func setTimeout(rp map[string]string, name string, opt, def time.Duration) {
	switch {
	case opt > 0:
		rp[name] = strconv.FormatInt(max(opt.Milliseconds(), 1), 10)
	case opt < 0:
		rp[name] = "0"
	case rp[name] == "":
		rp[name] = strconv.FormatInt(def.Milliseconds(), 10)
	}
}

// Ping checks that the database answers a query, within the connect
// timeout (Options.ConnectTimeout, plus half a second to give up the
// connection) even if ctx allows longer: a server that does not answer is
// reported quickly, as a readiness check needs.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.pingTimeout)
	defer cancel()
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}

// Close closes every connection of the pool, waiting for those in use to
// be released. With a server that stopped answering, pgx gives each
// connection up to 15 s to say goodbye.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// pgCode returns the SQLSTATE and constraint of a PostgreSQL error, or "".
func pgCode(err error) (code, constraint string) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code, pe.ConstraintName
	}
	return "", ""
}

// codeUniqueViolation is the SQLSTATE of a duplicate key.
const codeUniqueViolation = "23505"
