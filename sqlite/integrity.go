package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

// Instance identity and SQLite's own integrity checks.
//
// The database records the id of the podium instance it belongs to (table
// instance, migration 0003); the caller keeps the same id beside it and
// compares the two at start, which catches a database that was replaced or
// emptied behind podium's back. PRAGMA quick_check verifies the structure
// of every b-tree page (not the indexes against their tables, which
// integrity_check adds); neither can see a value that was changed inside a
// well-formed record, because SQLite keeps no checksum of a page's data.

// maxProblems bounds how many problems a check reports.
const maxProblems = 100

// querier is what the identity and check helpers need of a connection pool.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// InstanceID returns the instance id recorded in the database, or "" when
// none has been recorded yet.
func (s *Store) InstanceID(ctx context.Context) (string, error) {
	return instanceID(ctx, s.r)
}

// SetInstanceID records id as the instance the database belongs to. Setting
// the id it already has is a no-op; a different one is
// podium.ECodeConflict: an identity is never replaced.
func (s *Store) SetInstanceID(ctx context.Context, id string) error {
	if id == "" {
		return podium.Errorf(podium.ECodeInvalid, "instance id must not be empty")
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.w.ExecContext(ctx, "INSERT INTO instance (one, id, created_ms) VALUES (1, ?, ?) ON CONFLICT (one) DO NOTHING",
		id, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("set instance id: %w", err)
	}
	var have string
	if err := s.w.QueryRowContext(ctx, "SELECT id FROM instance WHERE one = 1").Scan(&have); err != nil {
		return fmt.Errorf("set instance id: %w", err)
	}
	if have != id {
		return podium.Errorf(podium.ECodeConflict, "the database already belongs to instance %s", have)
	}
	return s.durable(ctx)
}

// QuickCheck runs SQLite's PRAGMA quick_check on the database and returns
// the problems it found, none when the structure is sound. It reads every
// page once (BENCHMARKS.md has the time for 1M entries) on a read
// connection, so writes go on meanwhile.
func (s *Store) QuickCheck(ctx context.Context) ([]string, error) {
	return integrityCheck(ctx, s.r, false)
}

func instanceID(ctx context.Context, q querier) (string, error) {
	var n int
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'instance'").Scan(&n); err != nil {
		return "", fmt.Errorf("instance id: %w", err)
	}
	if n == 0 {
		return "", nil // a database from before migration 0003
	}
	var id string
	err := q.QueryRowContext(ctx, "SELECT id FROM instance WHERE one = 1").Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("instance id: %w", err)
	}
	return id, nil
}

// integrityCheck runs quick_check, or integrity_check when full, and
// returns its findings; SQLite answers one row "ok" when there are none.
func integrityCheck(ctx context.Context, q querier, full bool) ([]string, error) {
	pragma := "quick_check"
	if full {
		pragma = "integrity_check"
	}
	rows, err := q.QueryContext(ctx, fmt.Sprintf("PRAGMA %s(%d)", pragma, maxProblems))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pragma, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, fmt.Errorf("%s: %w", pragma, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", pragma, err)
	}
	return problems, nil
}

// File is a podium database opened for inspection and backup: opening it
// neither creates the file nor applies migrations, so it is safe on a
// database that a running server holds and on a suspect or foreign one.
type File struct {
	path string
	db   *sql.DB
}

// OpenFile opens the existing database file at path. It fails if there is
// no such file; it does not check that the file is a database (Check and
// InstanceID do).
func OpenFile(path string) (*File, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite: path %q must name a file and contain no ? or #", path)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	q := url.Values{}
	q.Set("mode", "rw") // never create
	q.Add("_pragma", "busy_timeout(5000)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return &File{path: path, db: db}, nil
}

// Path returns the file name the database was opened with.
func (f *File) Path() string { return f.path }

// Close closes the database.
func (f *File) Close() error { return f.db.Close() }

// InstanceID returns the instance id recorded in the database, "" if none.
func (f *File) InstanceID(ctx context.Context) (string, error) { return instanceID(ctx, f.db) }

// Check runs PRAGMA quick_check, or the slower integrity_check (which also
// compares every index with its table) when full, and returns the problems
// found. A file that is not a database at all is an error.
func (f *File) Check(ctx context.Context, full bool) ([]string, error) {
	return integrityCheck(ctx, f.db, full)
}

// SchemaVersion returns the version of the last migration applied to the
// database, 0 when it is not a podium database at all.
func (f *File) SchemaVersion(ctx context.Context) (int, error) {
	var n int
	if err := f.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'").Scan(&n); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	var v int
	if err := f.db.QueryRowContext(ctx, sqlstore.SchemaVersion.SQLite).Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}
