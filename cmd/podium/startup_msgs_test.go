package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewerDatabaseRefused: a database that a newer podium wrote is
// refused by serve and check with a message that says to upgrade podium
// (no backup to restore: nothing is damaged), and the refused start leaves
// no podium.running behind (which would make the next start run a full
// quick_check, as after a crash).
func TestNewerDatabaseRefused(t *testing.T) {
	dir := t.TempDir()
	testMain(t, dir).Close()
	db, err := sql.Open("sqlite", filepath.Join(dir, "podium.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO schema_migrations (version, name, applied_ms) VALUES (999999, 'future', 0)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	t.Setenv("PODIUM_ADMIN_KEY", "admin-secret")
	for _, args := range [][]string{
		{"serve", "--data", dir, "--addr", "127.0.0.1:0"},
		{"check", "--data", dir},
	} {
		code, _, errs := runCLI(t, args...)
		if code != 1 || !strings.Contains(errs, "newer podium") || !strings.Contains(errs, "upgrade podium") || strings.Contains(errs, "backup") {
			t.Errorf("%v: exit %d, %q; want 1 and a message that says to upgrade podium", args, code, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, runningName)); !os.IsNotExist(err) {
			t.Errorf("%v left %s behind (%v)", args, runningName, err)
		}
	}
}

// TestBadDBMessage: a database podium cannot connect to is reported as a
// connection for the schema setup, not as "migrate:", which reads like
// podium's migrate command.
func TestBadDBMessage(t *testing.T) {
	t.Setenv("PODIUM_ADMIN_KEY", "admin-secret")
	// Port 1 on localhost: refused at once, no PostgreSQL needed.
	code, _, errs := runCLI(t, "serve", "--addr", "127.0.0.1:0", "--db", "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=5")
	if code != 1 || strings.Contains(errs, "migrate") || !strings.Contains(errs, "connecting to the database for schema setup") {
		t.Fatalf("bad --db: exit %d, %q", code, errs)
	}
}
