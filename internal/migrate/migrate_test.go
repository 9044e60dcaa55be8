package migrate

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver

	"github.com/podiumhq/podium/internal/pgtest"
)

var ctx = context.Background()

// dialectCase is one database the runner is tested on.
type dialectCase struct {
	name string
	d    Dialect
	open func(t *testing.T) *sql.DB // a fresh, empty database
}

var dialects = []dialectCase{
	{"sqlite", SQLite, openSQLite},
	{"postgres", PostgreSQL, openPostgres},
}

// forEach runs f on every dialect; the PostgreSQL case skips when
// PODIUM_TEST_POSTGRES is unset.
func forEach(t *testing.T, f func(t *testing.T, c dialectCase)) {
	for _, c := range dialects {
		t.Run(c.name, func(t *testing.T) { f(t, c) })
	}
}

// openSQLite opens a new database file the way the store opens its write
// connection: transactions begin IMMEDIATE.
func openSQLite(t *testing.T) *sql.DB {
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := sql.Open("sqlite", path+"?_txlock=immediate&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openPostgres opens a pool on a schema of its own.
func openPostgres(t *testing.T) *sql.DB {
	dsn, _ := pgtest.Schema(t)
	return openDSN(t, dsn)
}

func openDSN(t *testing.T, dsn string) *sql.DB {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func load(t *testing.T, fsys fstest.MapFS) []Migration {
	t.Helper()
	ms, err := Load(fsys, "m")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return ms
}

func count(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// Migrations run in version order (not name order), each once, and a
// failing one leaves the database as it was before the run.
func TestApply(t *testing.T) {
	forEach(t, func(t *testing.T, c dialectCase) {
		db := c.open(t)
		// By name, 0010 would run before 2 and fail: t does not exist yet.
		fsys := fstest.MapFS{
			"m/0001_nothing.sql": {Data: []byte("SELECT 1;")},
			"m/2_create.sql":     {Data: []byte("CREATE TABLE t (x INTEGER); INSERT INTO t (x) VALUES (2);")},
			"m/0010_more.sql":    {Data: []byte("INSERT INTO t (x) VALUES (10);")},
		}
		for range 2 {
			if err := Apply(ctx, db, c.d, load(t, fsys)); err != nil {
				t.Fatalf("Apply: %v", err)
			}
		}
		if n, sum := count(t, db, "SELECT count(*) FROM t"), count(t, db, "SELECT coalesce(sum(x), 0) FROM t"); n != 2 || sum != 12 {
			t.Errorf("after applying twice, t has %d rows summing to %d; want 2 rows, 12", n, sum)
		}
		if v, err := Version(ctx, db); err != nil || v != 10 {
			t.Errorf("Version = %d, %v; want 10", v, err)
		}
		var name string
		if err := db.QueryRowContext(ctx, "SELECT name FROM schema_migrations WHERE version = 2").Scan(&name); err != nil || name != "2_create" {
			t.Errorf("migration 2 recorded as %q (%v), want 2_create", name, err)
		}

		fsys["m/0011_ok.sql"] = &fstest.MapFile{Data: []byte("INSERT INTO t (x) VALUES (11);")}
		fsys["m/0012_bad.sql"] = &fstest.MapFile{Data: []byte("INSERT INTO no_such_table VALUES (1);")}
		if err := Apply(ctx, db, c.d, load(t, fsys)); err == nil || !strings.Contains(err.Error(), "0012_bad") {
			t.Fatalf("a failing migration returned %v, want an error naming it", err)
		}
		if n := count(t, db, "SELECT count(*) FROM t"); n != 2 {
			t.Errorf("after a failed migration run, t has %d rows, want the 2 from before", n)
		}
		if v, err := Version(ctx, db); err != nil || v != 10 {
			t.Errorf("after a failed migration run, Version = %d, %v; want 10", v, err)
		}
	})
}

// A migration numbered below the newest one recorded, but not recorded
// itself (written on another branch, which took another number), is
// applied too, once.
func TestApplyFillsGaps(t *testing.T) {
	forEach(t, func(t *testing.T, c dialectCase) {
		db := c.open(t)
		fsys := fstest.MapFS{
			"m/0001_t.sql": {Data: []byte("CREATE TABLE t (x INTEGER);")},
			"m/0030_c.sql": {Data: []byte("INSERT INTO t (x) VALUES (30);")},
		}
		if err := Apply(ctx, db, c.d, load(t, fsys)); err != nil {
			t.Fatal(err)
		}
		fsys["m/0010_a.sql"] = &fstest.MapFile{Data: []byte("INSERT INTO t (x) VALUES (10);")}
		for range 2 {
			if err := Apply(ctx, db, c.d, load(t, fsys)); err != nil {
				t.Fatal(err)
			}
		}
		if sum := count(t, db, "SELECT coalesce(sum(x), 0) FROM t"); sum != 40 {
			t.Errorf("t sums to %d, want 40: 0010 must run once after 0030", sum)
		}
		if n := count(t, db, "SELECT count(*) FROM schema_migrations"); n != 3 {
			t.Errorf("%d migrations recorded, want 3", n)
		}
	})
}

// A database migrated by a newer podium is refused and left alone.
func TestApplyRefusesNewerSchema(t *testing.T) {
	forEach(t, func(t *testing.T, c dialectCase) {
		db := c.open(t)
		newer := load(t, fstest.MapFS{"m/0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);")}, "m/0002_b.sql": {Data: []byte("CREATE TABLE b (x INTEGER);")}})
		if err := Apply(ctx, db, c.d, newer); err != nil {
			t.Fatal(err)
		}
		err := Apply(ctx, db, c.d, newer[:1]) // an older podium knows only 0001

		if err == nil || !strings.Contains(err.Error(), "newer") {
			t.Fatalf("Apply with fewer migrations than the database has = %v, want an error saying the schema is newer", err)
		}
		if n := count(t, db, "SELECT count(*) FROM schema_migrations"); n != 2 {
			t.Errorf("a refused run changed schema_migrations: %d rows, want 2", n)
		}
	})
}

// Two processes starting at once against one PostgreSQL schema: both
// succeed, and each migration runs exactly once. The first migration sleeps
// so that every opener is inside Apply while it runs.
func TestApplyConcurrentPostgres(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	ms := load(t, fstest.MapFS{
		"m/0001_slow.sql": {Data: []byte("CREATE TABLE t (x integer); INSERT INTO t SELECT 1 FROM pg_sleep(0.2);")},
		"m/0002_more.sql": {Data: []byte("INSERT INTO t VALUES (2);")},
	})
	const openers = 4
	dbs := make([]*sql.DB, openers)
	for i := range dbs {
		dbs[i] = openDSN(t, dsn) // a pool each, as separate processes would have
		if err := dbs[i].PingContext(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, openers)
	for i, db := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = Apply(ctx, db, PostgreSQL, ms)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("opener %d: %v", i, err)
		}
	}
	if n := count(t, dbs[0], "SELECT count(*) FROM t"); n != 2 {
		t.Errorf("t has %d rows, want 2: each migration must run once", n)
	}
	if n := count(t, dbs[0], "SELECT count(*) FROM schema_migrations"); n != 2 {
		t.Errorf("schema_migrations has %d rows, want 2", n)
	}
}

// Two schemas of one database migrate independently: the lock is per
// schema, and each schema gets its own tables and history.
func TestApplyPerSchemaPostgres(t *testing.T) {
	dsnA, _ := pgtest.Schema(t)
	dsnB, _ := pgtest.Schema(t)
	a, b := openDSN(t, dsnA), openDSN(t, dsnB)
	ms := load(t, fstest.MapFS{"m/0001_t.sql": {Data: []byte("CREATE TABLE t (x integer);")}})
	for _, db := range []*sql.DB{a, b} {
		if err := Apply(ctx, db, PostgreSQL, ms); err != nil {
			t.Fatalf("Apply: %v", err)
		}
	}
	for _, db := range []*sql.DB{a, b} {
		if n := count(t, db, "SELECT count(*) FROM schema_migrations"); n != 1 {
			t.Errorf("schema_migrations has %d rows, want 1", n)
		}
	}
}

func TestLoadRejectsBadNames(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"no number":    {"m/init.sql": {}},
		"zero":         {"m/0000_init.sql": {}},
		"negative":     {"m/-1_init.sql": {}},
		"same version": {"m/0001_a.sql": {}, "m/1_b.sql": {}},
	} {
		if _, err := Load(fsys, "m"); err == nil {
			t.Errorf("%s: Load accepted %v", name, fsys)
		}
	}
}
