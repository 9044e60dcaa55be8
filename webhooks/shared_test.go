package webhooks_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/webhooks"
)

// pgNode is one node of a PostgreSQL cluster with the feed and webhooks.
type pgNode struct {
	eng   *engine.Engine
	m     *webhooks.Module
	store *postgres.Store
}

func startPG(t *testing.T, dsn, env, name string, attempts chan<- string, reg ...prometheus.Registerer) pgNode {
	t.Helper()
	// The lease holder finds what another node committed at its next
	// poll (its own commits wake it at once).
	m := webhooks.New(webhooks.Config{AllowPrivate: true, Poll: 50 * time.Millisecond,
		Attempted: func(d podium.WebhookDelivery) { attempts <- name + " " + d.Event.ID + " " + d.Status }})
	eng, st := startPGNode(t, dsn, env, name, func(c *engine.Config) {
		c.Modules = []engine.Module{feed.New(feed.Config{}), m}
		if len(reg) > 0 {
			c.Registerer = reg[0]
		}
	})
	return pgNode{eng, m, st}
}

// pgCluster is a fresh schema's DSN and a broker env of its own: what the
// nodes of one test share.
func pgCluster(t *testing.T) (dsn, env string) {
	t.Helper()
	dsn, schema := pgtest.Schema(t)
	return pgtest.WithParam(t, dsn, "application_name", schema), newEnv()
}

func newEnv() string {
	var b [4]byte
	rand.Read(b[:])
	return "test-" + hex.EncodeToString(b[:])
}

// startPGNode starts node name of the cluster (dsn, env): its store,
// broker and engine, with what set adds to the engine's config (its
// modules, a clock), all closed when the test ends.
func startPGNode(t *testing.T, dsn, env, name string, set func(*engine.Config)) (*engine.Engine, *postgres.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	br, err := postgres.NewBroker(dsn, postgres.BrokerOptions{Env: env, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { br.Close() })
	cfg := engine.Config{Store: st, Node: name, Broker: br, PollEvery: 50 * time.Millisecond, Logger: log}
	set(&cfg)
	eng := engine.New(cfg)
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng, st
}

// On two PostgreSQL nodes: each change has exactly one event whichever
// node made it (a board's creation, which both nodes apply, included),
// and one node at a time, under the lease, delivers each once.
func TestTwoNodesPostgres(t *testing.T) {
	dsn, env := pgCluster(t)
	attempts := make(chan string, 100)
	a := startPG(t, dsn, env, "a", attempts)
	bn := startPG(t, dsn, env, "b", attempts)
	ctx := context.Background()

	var mu sync.Mutex
	seen := map[string]int{}
	rcv := newReceiver(t, http.StatusOK)
	go func() {
		for q := range rcv.hits {
			mu.Lock()
			seen[q.id]++
			mu.Unlock()
		}
	}()
	url, prefix := rcv.srv.URL, ""
	if _, err := a.m.CreateEndpoint(ctx, webhooks.EndpointSpec{URL: &url, Prefix: &prefix,
		Types: []string{webhooks.TypeLeaderChanged, webhooks.TypeBoardCreated}}); err != nil {
		t.Fatal(err)
	}
	if err := bn.m.Load(ctx); err != nil { // node b reads the endpoints now, not at its next poll
		t.Fatal(err)
	}
	board := &podium.Board{ID: "exp", Keys: []podium.KeyDef{{Name: "score", Order: podium.Desc}}, Mode: podium.Best, Public: true}
	if err := board.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.eng.PutBoard(ctx, board); err != nil {
		t.Fatal(err)
	}
	submit := func(n pgNode, player string, score int64) {
		t.Helper()
		for {
			_, err := n.eng.Submit(ctx, []engine.Score{{Board: "exp", Player: player, Keys: []int64{score}}}, true, nil)
			if podium.ErrorCode(err) == podium.ECodeBoardNotFound {
				<-time.After(20 * time.Millisecond) // node b has not followed the board yet: a client's retry
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	submit(a, "alice", 100)
	submit(bn, "bob", 200)
	submit(a, "carol", 50) // not #1: no event

	nodes := map[string]bool{}
	for range 3 { // board.created, two leader.changed
		select {
		case s := <-attempts:
			nodes[s[:1]] = true
		case <-time.After(30 * time.Second):
			eps, _ := a.m.Endpoints(ctx)
			log, err := a.m.Deliveries(ctx, podium.WebhookDeliveryQuery{Endpoint: eps[0].ID, Limit: 10})
			for _, d := range log {
				t.Logf("%s %s %s %d %s", d.Event.Type, d.Event.ID, d.Status, d.Attempts, d.LastError)
			}
			t.Fatalf("a delivery is missing (%v; %v)", nodes, err)
		}
	}
	if len(nodes) != 1 {
		t.Fatalf("deliveries by nodes %v, want one (the lease holder)", nodes)
	}
	ds, err := a.m.Endpoints(ctx)
	if err != nil || len(ds) != 1 {
		t.Fatal(ds, err)
	}
	log, err := a.m.Deliveries(ctx, podium.WebhookDeliveryQuery{Endpoint: ds[0].ID, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if tt := types(log); len(tt) != 3 || tt[0] != "leader.changed" || tt[1] != "leader.changed" || tt[2] != "board.created" {
		t.Fatalf("outbox = %v, want one event per change", tt)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, d := range log {
		if d.Status != podium.WebhookDelivered || seen[d.Event.ID] != 1 {
			t.Fatalf("%s %s: %s, received %d times", d.Event.Type, d.Event.ID, d.Status, seen[d.Event.ID])
		}
	}
}
