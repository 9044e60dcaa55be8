// Package pgtest gives each test its own PostgreSQL schema on the server
// named by PODIUM_TEST_POSTGRES, so that tests (and packages tested in
// parallel) never see each other's tables.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env is the environment variable that names the test server, for example
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const Env = "PODIUM_TEST_POSTGRES"

// DSN returns the test server's connection string, or skips t with a
// message saying how to run it when Env is unset.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(Env)
	if dsn == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL test (set it to a server where the tests may create schemas, e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", Env)
	}
	return dsn
}

// Schema creates an empty schema named podium_test_<random> and returns a
// connection string whose sessions use it (search_path), so that every
// unqualified table is created and read there. The schema and everything
// in it are dropped when t ends; close what uses it before then (cleanups
// registered after Schema run first).
func Schema(t testing.TB) (dsn, schema string) {
	t.Helper()
	base := DSN(t)
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatal(err)
	}
	schema = "podium_test_" + hex.EncodeToString(rnd[:])
	exec(t, base, "CREATE SCHEMA "+schema)
	t.Cleanup(func() { exec(t, base, "DROP SCHEMA "+schema+" CASCADE") })
	return WithParam(t, base, "search_path", schema), schema
}

// WithParam returns dsn with the connection parameter name set to value
// (a word: no quoting is done), in either form of connection string (URL
// or key=value).
func WithParam(t testing.TB, dsn, name, value string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("%s: %v", Env, err)
		}
		q := u.Query()
		q.Set(name, value)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " " + name + "=" + value
}

// exec runs one statement on its own connection.
func exec(t testing.TB, dsn, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to %s: %v", Env, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
