package http_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/sqlite"
)

// The stores a scenario runs on: a SQLite database in the test's temp
// directory, or a PostgreSQL schema of its own (skipped without
// PODIUM_TEST_POSTGRES); each closed when the test ends.

func sqliteStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func postgresStore(t *testing.T) *postgres.Store {
	t.Helper()
	dsn, _ := pgtest.Schema(t)
	st, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
