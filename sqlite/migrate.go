package sqlite

import (
	"context"
	"embed"

	"github.com/podiumhq/podium/internal/migrate"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations returns the embedded migrations in version order.
func migrations() ([]migrate.Migration, error) {
	return migrate.Load(migrationFS, "migrations")
}

// migrate applies the migrations the database has not seen, in order, in
// one transaction, recording each in schema_migrations (package
// internal/migrate, shared with the PostgreSQL store). The write
// connection begins IMMEDIATE, so a second process opening the same file
// waits for this one's migration.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return migrate.Apply(ctx, s.w, migrate.SQLite, ms)
}

// SchemaVersion returns the version of the last migration applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	return migrate.Version(ctx, s.r)
}
