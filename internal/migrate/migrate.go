// Package migrate is the one schema migration runner of podium's stores. A
// store embeds its migrations as numbered SQL files (NNNN_description.sql),
// and Apply brings a database up to the newest of them: in version order, in
// one transaction, each recorded in the table schema_migrations. A database
// whose schema is newer than the migrations this binary knows is refused, so
// that an old podium never writes to a schema it does not understand.
//
// What differs between databases is a Dialect: the SQL of the bookkeeping
// table and, for PostgreSQL, the lock that makes a second process starting
// at the same time wait for the first one's migration and then find nothing
// left to do.
package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Migration is one schema change, read from a file named
// NNNN_description.sql.
type Migration struct {
	Version int    // the number the file name starts with
	Name    string // the file name without ".sql"
	SQL     string
}

// Load reads the migrations in directory dir of fsys, in version order (by
// number, not by name). A file whose name does not start with a positive
// number and "_", or two files with one version, are an error.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []Migration
	seen := map[int]string{}
	for _, name := range names {
		base := strings.TrimSuffix(name[len(dir)+1:], ".sql")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and _", name)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s share version %d", prev, name, v)
		}
		seen[v] = name
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: base, SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

// Dialect is the SQL that differs between databases.
type Dialect struct {
	// Lock, if not empty, is the first statement of the migration
	// transaction. It must block until no other transaction holding it is
	// still open, so that two processes never migrate at once: the second
	// waits, then reads the version the first one committed.
	Lock string
	// CreateTable creates schema_migrations (version, name, applied_ms) if
	// it does not exist.
	CreateTable string
	// Insert records one migration; its parameters are the version, the
	// name and the time in unix milliseconds.
	Insert string
}

// SQLite is the dialect of SQLite. It needs no Lock: the store's write
// connection begins its transactions IMMEDIATE, which takes the database's
// write lock at BEGIN, so a second process waits there (busy_timeout).
var SQLite = Dialect{
	CreateTable: `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_ms INTEGER NOT NULL
	) STRICT`,
	Insert: "INSERT INTO schema_migrations (version, name, applied_ms) VALUES (?, ?, ?)",
}

// PostgreSQL is the dialect of PostgreSQL. Its Lock is a transaction-level
// advisory lock keyed by the current schema, taken before anything else
// (even CREATE TABLE IF NOT EXISTS is not safe against a concurrent
// creator), so that processes migrating different schemas of one database
// do not wait for each other.
var PostgreSQL = Dialect{
	// 1886348393 is "podi" in ASCII: the lock's class, apart from any
	// other advisory locks an operator's tools may take.
	Lock: "SELECT pg_advisory_xact_lock(1886348393, hashtext(coalesce(current_schema(), '')))",
	CreateTable: `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer NOT NULL PRIMARY KEY,
		name       text    NOT NULL,
		applied_ms bigint  NOT NULL
	)`,
	Insert: "INSERT INTO schema_migrations (version, name, applied_ms) VALUES ($1, $2, $3)",
}

// NewerError refuses a database whose schema a newer podium wrote. Its
// fix is to run that newer podium (or a later one): this one does not
// write to a schema it does not know. Errors of this package say "schema
// setup", never "migrate", which reads like podium's migrate command.
type NewerError struct {
	Have int // the database's newest schema version
	Know int // the newest this podium knows
}

func (e *NewerError) Error() string {
	return fmt.Sprintf("the database was written by a newer podium (schema version %d; this podium knows up to %d): "+
		"upgrade podium to the version that wrote it, or a later one", e.Have, e.Know)
}

// Apply applies the migrations of ms that db has not seen, in order, in one
// transaction, recording each in schema_migrations: either every pending
// migration is applied or none is, so a failed upgrade leaves the schema
// that the previous podium knew. ms must be in version order (as Load
// returns them). A database whose newest recorded version is above the last
// of ms is refused with an error saying it is newer.
func Apply(ctx context.Context, db *sql.DB, d Dialect, ms []Migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		// The first connection of a store: a bad URL, a server down, a
		// refused password surface here.
		return fmt.Errorf("connecting to the database for schema setup: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit; after a failure its error adds nothing
	if d.Lock != "" {
		if _, err := tx.ExecContext(ctx, d.Lock); err != nil {
			return fmt.Errorf("schema setup: lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, d.CreateTable); err != nil {
		return fmt.Errorf("schema setup: %w", err)
	}
	// Every migration not recorded is applied, also one numbered below
	// the newest recorded: migrations written on parallel branches take
	// numbers apart (0010, 0020, 0030...) and a database may have been
	// migrated by a build that had only some of them.
	applied := map[int]bool{}
	current := 0
	rows, err := tx.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return fmt.Errorf("schema setup: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("schema setup: %w", err)
		}
		applied[v], current = true, max(current, v)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("schema setup: %w", err)
	}
	if n := len(ms); n > 0 && current > ms[n-1].Version {
		return &NewerError{Have: current, Know: ms[n-1].Version}
	}
	now := time.Now().UnixMilli()
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("schema setup: migration %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, d.Insert, m.Version, m.Name, now); err != nil {
			return fmt.Errorf("schema setup: migration %s: %w", m.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("schema setup: %w", err)
	}
	return nil
}

// Version returns the newest migration version recorded in db, 0 if none.
func Version(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	if err := db.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}
