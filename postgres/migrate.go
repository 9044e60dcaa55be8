package postgres

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/podiumhq/podium/internal/migrate"
	"github.com/podiumhq/podium/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations returns the embedded migrations in version order.
func migrations() ([]migrate.Migration, error) {
	return migrate.Load(migrationFS, "migrations")
}

// migrate applies the migrations the database has not seen, in order, in
// one transaction, recording each in schema_migrations (package
// internal/migrate, shared with the SQLite store). The transaction first
// takes an advisory lock of the schema, so a second process opening the
// same database waits, then finds nothing left to do.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(s.pool)
	defer db.Close()
	return migrate.Apply(ctx, db, migrate.PostgreSQL, ms)
}

// SchemaVersion returns the version of the last migration applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.pool.QueryRow(ctx, sqlstore.SchemaVersion.Postgres).Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}
