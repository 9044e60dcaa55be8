package main

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestNoticeCountersOnPostgreSQL checks, on the server named by
// PODIUM_TEST_POSTGRES, the two figures the lag table's mode column rests
// on: the harness's listener counts the NOTIFYs on a cluster's channel,
// and listening() finds a node session whose last statement was LISTEN.
func TestNoticeCountersOnPostgreSQL(t *testing.T) {
	dsn := os.Getenv("PODIUM_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("PODIUM_TEST_POSTGRES is not set (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable); skipping the PostgreSQL counter test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := &harness{cfg: &config{DB: dsn}, db: dsn}
	env := "bench-test-" + randHex(4)
	l, err := listenNotices(ctx, dsn, env)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	channel := "podium:" + env + ":v1:notices"
	if err := pgExec(ctx, dsn, fmt.Sprintf("SELECT pg_notify('%s', 'a'), pg_notify('%s', 'b'), pg_notify('other', 'c')", channel, channel)); err != nil {
		t.Fatal(err)
	}
	for l.n.Load() < 2 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // a third one, on another channel, must not arrive
	if n := l.n.Load(); n != 2 {
		t.Fatalf("counted %d notices on %s, want 2", n, channel)
	}

	// A "node" that LISTENs, named as the harness names nodes' sessions.
	schema := "bench_cluster_test" + randHex(3)
	c := &cluster{schema: schema}
	if n, err := h.listening(ctx, c); err != nil || n != 0 {
		t.Fatalf("before any LISTEN: %d, %v", n, err)
	}
	nodeDSN, err := withParams(dsn, "application_name", schema+"-n1")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, nodeDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	if n, err := h.listening(ctx, c); err != nil || n != 1 {
		t.Fatalf("one node LISTENing: found %d, %v", n, err)
	}
}
