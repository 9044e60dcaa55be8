package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/podiumhq/podium/internal/pgtest"
)

// TestSessions: an operations command, connected under another
// application_name, sees the connections of a store opened with the nodes'
// name, not those of another application, and none once the nodes' store
// is closed.
func TestSessions(t *testing.T) {
	ctx := context.Background()
	dsn, schema := pgtest.Schema(t)
	name := "podium-" + schema // unique, so other tests' nodes do not count
	nodeDSN := pgtest.WithParam(t, dsn, "application_name", name)
	if got, err := ApplicationName(nodeDSN); err != nil || got != name {
		t.Fatalf("ApplicationName(node) = %q, %v", got, err)
	}
	t.Setenv("PGAPPNAME", "")
	if got, err := ApplicationName(dsn); err != nil || got != DefaultApplicationName {
		t.Fatalf("ApplicationName(default) = %q, %v", got, err)
	}
	ops, err := Open(ctx, pgtest.WithParam(t, dsn, "application_name", name+"-ops"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ops.Close()
	// A connection of another application on the same database.
	other, err := Open(ctx, pgtest.WithParam(t, dsn, "application_name", "other-"+schema), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if ss, err := ops.Sessions(ctx, name); err != nil || len(ss) != 0 {
		t.Fatalf("before the node: %v %v", ss, err)
	}
	node, err := Open(ctx, nodeDSN, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	ss, err := ops.Sessions(ctx, name)
	if err != nil || len(ss) == 0 || ss[0].PID == 0 || ss[0].Client == "" || ss[0].Started.IsZero() {
		t.Fatalf("with the node: %+v %v", ss, err)
	}
	node.Close()
	// A backend leaves pg_stat_activity shortly after its client hung up.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ss, err := ops.Sessions(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(ss) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the node closed: %+v", ss)
		}
	}
}
