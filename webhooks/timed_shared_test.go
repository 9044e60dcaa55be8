package webhooks_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/postgres"
	"github.com/podiumhq/podium/webhooks"
)

// startPGClock is a node of a PostgreSQL cluster with the feed and the
// webhooks on the fake clock clk, whose worker runs its rounds (and the
// timed events) every 50 ms.
func startPGClock(t *testing.T, dsn, env, name string, clk *clock, attempts chan<- podium.WebhookDelivery) (*engine.Engine, *webhooks.Module, *postgres.Store) {
	t.Helper()
	m := webhooks.New(webhooks.Config{AllowPrivate: true, Poll: 50 * time.Millisecond,
		Attempted: func(d podium.WebhookDelivery) { attempts <- d }})
	eng, st := startPGNode(t, dsn, env, name, func(c *engine.Config) {
		c.Now, c.Modules = clk.Now, []engine.Module{feed.New(feed.Config{}), m}
	})
	return eng, m, st
}

// On two PostgreSQL nodes whose workers both run: a daily board's period
// end is one period.ended event, delivered once, whose top holds the
// scores both nodes took (the last one, node b's, just before the end).
func TestPeriodEndedTwoNodesPostgres(t *testing.T) {
	dsn, env := pgCluster(t)
	clk := &clock{t: time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)}
	attempts := make(chan podium.WebhookDelivery, 100)
	a, am, st := startPGClock(t, dsn, env, "a", clk, attempts)
	bn, bm, _ := startPGClock(t, dsn, env, "b", clk, attempts)
	ctx := context.Background()

	rcv := newReceiver(t, http.StatusOK)
	url, prefix := rcv.srv.URL, ""
	ep, err := am.CreateEndpoint(ctx, webhooks.EndpointSpec{URL: &url, Prefix: &prefix, Types: []string{webhooks.TypePeriodEnded}})
	if err != nil {
		t.Fatal(err)
	}
	if err := bm.Load(ctx); err != nil { // node b reads the endpoints now, not at its next poll
		t.Fatal(err)
	}
	board := &podium.Board{ID: "daily", Keys: []podium.KeyDef{{Name: "score", Order: podium.Desc}}, Mode: podium.Best,
		Reset: podium.Reset{Every: podium.Daily, TZ: "UTC"}, Public: true}
	if err := board.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.PutBoard(ctx, board); err != nil {
		t.Fatal(err)
	}
	submit := func(n *engine.Engine, player string, score int64) {
		t.Helper()
		for {
			_, err := n.Submit(ctx, []engine.Score{{Board: "daily", Player: player, Keys: []int64{score}}}, true, nil)
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
	clk.Add(59*time.Minute + 59*time.Second)
	submit(bn, "carol", 300) // the period's last second, on node b
	clk.Add(time.Second + webhooks.DefaultTimedGrace)

	var d podium.WebhookDelivery
	select {
	case d = <-attempts:
	case <-time.After(30 * time.Second):
		t.Fatal("no period.ended delivered")
	}
	var p periodEvent
	if err := json.Unmarshal(d.Event.Payload, &p); err != nil || d.Event.Type != webhooks.TypePeriodEnded || p.Period != "2026-12-01" ||
		p.Total != 3 || len(p.Top) != 3 || p.Top[0].Player != "carol" || p.Top[2].Player != "alice" {
		t.Fatalf("period.ended = %s %s (%v)", d.Event.Type, d.Event.Payload, err)
	}
	// Both nodes look again; then both stop (their workers are joined).
	for _, m := range []*webhooks.Module{am, bm} {
		if _, err := m.EmitDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	bn.Close()
	if got := stored(t, st, ep.ID); len(got) != 1 || got[0].Attempts != 1 || got[0].Status != podium.WebhookDelivered {
		t.Fatalf("%d period.ended events (want 1, delivered once): %v", len(got), types(got))
	}
}
