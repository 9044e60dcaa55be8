package webhooks_test

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/webhooks"
)

// Board events ride the board's transaction (a transactional outbox): a
// board made or deleted has its one event in the outbox by the time the
// change is answered, and a change whose event cannot be stored (the
// store refuses outbox rows: fault) fails, 503, with nothing of it stored
// or applied.
func testBoardEventsAtomic(t *testing.T, eng *engine.Engine, m *webhooks.Module, st podium.Store, fault func(on bool)) {
	ctx := context.Background()
	rcv := newReceiver(t, http.StatusOK)
	url, prefix := rcv.srv.URL, ""
	ep, err := m.CreateEndpoint(ctx, webhooks.EndpointSpec{URL: &url, Prefix: &prefix,
		Types: []string{webhooks.TypeBoardCreated, webhooks.TypeBoardDeleted}})
	if err != nil {
		t.Fatal(err)
	}
	outbox := func() []string {
		t.Helper()
		ds, err := m.Deliveries(ctx, podium.WebhookDeliveryQuery{Endpoint: ep.ID, Limit: webhooks.MaxPage})
		if err != nil {
			t.Fatal(err)
		}
		slices.Reverse(ds)
		return types(ds)
	}
	stored := func() int {
		t.Helper()
		bs, err := st.Boards(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(bs)
	}
	want := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Fatalf("%s: outbox = %v, want %v", what, got, want)
		}
	}
	b := &podium.Board{ID: "b", Keys: []podium.KeyDef{{Name: "score", Order: podium.Desc}}, Mode: podium.Best}
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}

	fault(true)
	if _, _, err := eng.PutBoard(ctx, b); podium.ErrorCode(err) != podium.ECodeUnavailable {
		t.Fatalf("PutBoard whose event cannot be stored = %v, want %s", err, podium.ECodeUnavailable)
	}
	if _, err := eng.Board("b"); podium.ErrorCode(err) != podium.ECodeBoardNotFound {
		t.Fatalf("Board after a failed PutBoard = %v, want %s", err, podium.ECodeBoardNotFound)
	}
	if n := stored(); n != 0 {
		t.Fatalf("%d boards stored after a failed PutBoard", n)
	}
	want("after a failed PutBoard", outbox(), nil)

	fault(false)
	if _, _, err := eng.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	want("once PutBoard is answered", outbox(), []string{"board.created"})

	fault(true)
	if err := eng.DeleteBoard(ctx, "b"); podium.ErrorCode(err) != podium.ECodeUnavailable {
		t.Fatalf("DeleteBoard whose event cannot be stored = %v, want %s", err, podium.ECodeUnavailable)
	}
	if _, err := eng.Board("b"); err != nil {
		t.Fatalf("Board after a failed DeleteBoard: %v", err)
	}
	if n := stored(); n != 1 {
		t.Fatalf("%d boards stored after a failed DeleteBoard, want 1", n)
	}
	want("after a failed DeleteBoard", outbox(), []string{"board.created"})

	fault(false)
	if err := eng.DeleteBoard(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	want("once DeleteBoard is answered", outbox(), []string{"board.created", "board.deleted"})
}

func TestBoardEventsAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "podium.db")
	st, err := sqlite.Open(path, sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := start(t, st, webhooks.Config{AllowPrivate: true})
	// The fault: a trigger that fails every insert into the outbox, made
	// through a connection of the test's own.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	testBoardEventsAtomic(t, e.eng, e.m, st, func(on bool) {
		q := "DROP TRIGGER outbox_fault"
		if on {
			q = "CREATE TRIGGER outbox_fault BEFORE INSERT ON webhook_events BEGIN SELECT RAISE(ABORT, 'injected outbox fault'); END"
		}
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	})
}

func TestBoardEventsAtomicPostgres(t *testing.T) {
	dsn, env := pgCluster(t)
	n := startPG(t, dsn, env, "a", make(chan string, 100))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	testBoardEventsAtomic(t, n.eng, n.m, n.store, func(on bool) {
		q := "DROP TRIGGER outbox_fault ON webhook_events"
		if on {
			q = `CREATE OR REPLACE FUNCTION outbox_fault() RETURNS trigger LANGUAGE plpgsql AS
				$$ BEGIN RAISE EXCEPTION 'injected outbox fault'; END $$;
				CREATE TRIGGER outbox_fault BEFORE INSERT ON webhook_events FOR EACH ROW EXECUTE FUNCTION outbox_fault()`
		}
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	})
}

// On two PostgreSQL nodes, each board made or deleted, on either node, is
// one event in the outbox, written by the node that made the change (in
// its transaction) and by no node that follows it.
func TestTwoNodesBoardEventsPostgres(t *testing.T) {
	dsn, env := pgCluster(t)
	attempts := make(chan string, 100)
	regs := []*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry()}
	a := startPG(t, dsn, env, "a", attempts, regs[0])
	bn := startPG(t, dsn, env, "b", attempts, regs[1])
	ctx := context.Background()
	rcv := newReceiver(t, http.StatusOK)
	url, prefix := rcv.srv.URL, ""
	ep, err := a.m.CreateEndpoint(ctx, webhooks.EndpointSpec{URL: &url, Prefix: &prefix,
		Types: []string{webhooks.TypeBoardCreated, webhooks.TypeBoardDeleted}})
	if err != nil {
		t.Fatal(err)
	}
	if err := bn.m.Load(ctx); err != nil { // node b reads the endpoint now, not at its next poll
		t.Fatal(err)
	}
	put := func(n pgNode, id string) {
		t.Helper()
		b := &podium.Board{ID: id, Keys: []podium.KeyDef{{Name: "score", Order: podium.Desc}}, Mode: podium.Best}
		if err := b.Normalize(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := n.eng.PutBoard(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	// followed waits until node n has applied the other node's change.
	followed := func(n pgNode, id string, exists bool) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			if _, err := n.eng.Board(id); (err == nil) == exists {
				return
			}
			select {
			case <-deadline:
				t.Fatalf("the node did not follow board %s (exists %v)", id, exists)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	put(a, "x1")
	put(bn, "x2")
	followed(bn, "x1", true)
	followed(a, "x2", true)
	if err := bn.eng.DeleteBoard(ctx, "x1"); err != nil {
		t.Fatal(err)
	}
	if err := a.eng.DeleteBoard(ctx, "x2"); err != nil {
		t.Fatal(err)
	}
	followed(a, "x1", false)
	followed(bn, "x2", false)

	ds, err := a.m.Deliveries(ctx, podium.WebhookDeliveryQuery{Endpoint: ep.ID, Limit: webhooks.MaxPage})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	ids := map[string]bool{}
	for _, d := range ds {
		got[d.Event.Type+" "+d.Event.Board]++
		ids[d.Event.ID] = true
	}
	want := map[string]int{"board.created x1": 1, "board.created x2": 1, "board.deleted x1": 1, "board.deleted x2": 1}
	if len(ds) != 4 || len(ids) != 4 || len(got) != len(want) {
		t.Fatalf("outbox = %v (%d events), want one per change: %v", got, len(ds), want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("outbox = %v, want one per change: %v", got, want)
		}
	}
	// Each node wrote the events of its own changes: one creation and one
	// deletion each.
	for i, reg := range regs {
		for _, typ := range []string{webhooks.TypeBoardCreated, webhooks.TypeBoardDeleted} {
			if n := eventsWritten(t, reg, typ); n != 1 {
				t.Fatalf("node %d wrote %v %s events, want 1", i, n, typ)
			}
		}
	}
}

// eventsWritten reads podium_webhook_events_total of one type.
func eventsWritten(t *testing.T, reg *prometheus.Registry, typ string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "podium_webhook_events_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "type" && l.GetValue() == typ {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
