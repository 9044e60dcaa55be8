package storetest

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// Webhooks (podium.WebhookStore). The contract:
//   - endpoints read back as stored (types in order, never nil; times to
//     the millisecond); a put replaces; a delete removes the endpoint and
//     its deliveries and says whether there was one;
//   - an event is stored with the batch it rides in, or not at all; an
//     event whose id is stored is kept as it is (its payload, time and
//     seq), and gets a delivery for an endpoint that has none of it;
//   - seq grows with each stored event; the queue is an endpoint's
//     pending deliveries by seq; the log is newest first, by status, in
//     pages before a seq;
//   - a redelivery makes the selected deliveries pending, due now, with
//     attempts 0 and a window from now;
//   - the backlog counts each endpoint's pending deliveries; a drop marks
//     an endpoint's oldest pending ones (by seq) dropped, up to a limit,
//     and a delivery's outcome stored after its drop is refused;
//   - a prune deletes, up to a limit each, ended deliveries last updated
//     before a time, then events made before it that no delivery refers
//     to; a pending delivery and its event are never pruned.

func webhookStore(t *testing.T, s podium.Store) podium.WebhookStore {
	t.Helper()
	ws, ok := s.(podium.WebhookStore)
	if !ok {
		t.Fatalf("%T is not a podium.WebhookStore", s)
	}
	return ws
}

func webhookEvent(id string, atMS int64, endpoints ...string) podium.WebhookEvent {
	return podium.WebhookEvent{ID: id, Type: "leader.changed", Board: "a", At: at(atMS),
		Payload: json.RawMessage(`{"board":"a","id":"` + id + `"}`), Endpoints: endpoints}
}

// webhookDepth is the number of pending deliveries, every endpoint's.
func webhookDepth(s podium.WebhookStore) (int, error) {
	backlog, err := s.WebhookBacklog(ctx)
	n := 0
	for _, k := range backlog {
		n += k
	}
	return n, err
}

func webhookQueue(t *testing.T, s podium.WebhookStore, endpoint string) []string {
	t.Helper()
	ds, err := s.WebhookQueue(ctx, endpoint, 100)
	if err != nil {
		t.Fatalf("WebhookQueue: %v", err)
	}
	var ids []string
	for i, d := range ds {
		if d.Status != podium.WebhookPending || d.Endpoint != endpoint {
			t.Fatalf("WebhookQueue returned %+v", d)
		}
		if i > 0 && d.Event.Seq <= ds[i-1].Event.Seq {
			t.Fatalf("WebhookQueue not by seq: %d after %d", d.Event.Seq, ds[i-1].Event.Seq)
		}
		ids = append(ids, d.Event.ID)
	}
	return ids
}

func webhookLog(t *testing.T, s podium.WebhookStore, q podium.WebhookDeliveryQuery) []podium.WebhookDelivery {
	t.Helper()
	ds, err := s.WebhookDeliveries(ctx, q)
	if err != nil {
		t.Fatalf("WebhookDeliveries: %v", err)
	}
	return ds
}

func deliveryIDs(ds []podium.WebhookDelivery) []string {
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.Event.ID)
	}
	return ids
}

func testWebhooks(t *testing.T, open func(*testing.T) podium.Store) {
	t.Run("Endpoints", func(t *testing.T) {
		ws := webhookStore(t, open(t))
		a := podium.WebhookEndpoint{ID: "wh_a", URL: "https://example.com/a", Types: []string{"leader.changed", "board.created"},
			Prefix: "weekly-", Secret: "whsec_x", CreatedAt: t0, UpdatedAt: t0}
		b := podium.WebhookEndpoint{ID: "wh_b", URL: "https://example.com/b", Secret: "whsec_y", Disabled: true,
			PrevSecret: "whsec_old", PrevUntil: at(5000), CreatedAt: at(1), UpdatedAt: at(2)}
		for _, ep := range []*podium.WebhookEndpoint{&b, &a} {
			if err := ws.PutWebhookEndpoint(ctx, ep); err != nil {
				t.Fatalf("PutWebhookEndpoint: %v", err)
			}
		}
		got, err := ws.WebhookEndpoints(ctx)
		if err != nil {
			t.Fatal(err)
		}
		norm := func(ep podium.WebhookEndpoint) podium.WebhookEndpoint {
			ep.PrevUntil, ep.CreatedAt, ep.UpdatedAt = podium.FromMillis(podium.Millis(ep.PrevUntil)),
				podium.FromMillis(podium.Millis(ep.CreatedAt)), podium.FromMillis(podium.Millis(ep.UpdatedAt))
			if ep.Types == nil {
				ep.Types = []string{}
			}
			return ep
		}
		if want := []podium.WebhookEndpoint{norm(a), norm(b)}; !reflect.DeepEqual(got, want) {
			t.Fatalf("WebhookEndpoints =\n%+v\nwant\n%+v", got, want)
		}
		a.URL, a.Types, a.Disabled = "https://example.com/a2", []string{"personal_best"}, true
		if err := ws.PutWebhookEndpoint(ctx, &a); err != nil {
			t.Fatal(err)
		}
		got, _ = ws.WebhookEndpoints(ctx)
		if len(got) != 2 || !reflect.DeepEqual(got[0], norm(a)) {
			t.Fatalf("after an update: %+v", got)
		}
		if ok, err := ws.DeleteWebhookEndpoint(ctx, "wh_a"); !ok || err != nil {
			t.Fatalf("DeleteWebhookEndpoint = %v, %v", ok, err)
		}
		if ok, err := ws.DeleteWebhookEndpoint(ctx, "wh_a"); ok || err != nil {
			t.Fatalf("DeleteWebhookEndpoint again = %v, %v", ok, err)
		}
		got, _ = ws.WebhookEndpoints(ctx)
		if len(got) != 1 || got[0].ID != "wh_b" {
			t.Fatalf("after a delete: %+v", got)
		}
	})

	t.Run("Outbox", func(t *testing.T) {
		s := open(t)
		ws := webhookStore(t, s)
		a := putBoard(t, s, "a", podium.Never, 1)
		commit(t, s, &podium.Batch{Submissions: []podium.Submission{sub(a, 1, "all", "p", 3)},
			Parts: []podium.Part{ws.WebhookPart([]podium.WebhookEvent{webhookEvent("e1", 1, "x", "y"), webhookEvent("e2", 2, "x")})}})
		commit(t, s, &podium.Batch{Parts: []podium.Part{ws.WebhookPart([]podium.WebhookEvent{webhookEvent("e3", 3, "y")})}})
		if q := webhookQueue(t, ws, "x"); !slices.Equal(q, []string{"e1", "e2"}) {
			t.Fatalf("queue of x = %v", q)
		}
		if q := webhookQueue(t, ws, "y"); !slices.Equal(q, []string{"e1", "e3"}) {
			t.Fatalf("queue of y = %v", q)
		}
		ds, _ := ws.WebhookQueue(ctx, "x", 1)
		if len(ds) != 1 {
			t.Fatalf("WebhookQueue(limit 1) = %d deliveries", len(ds))
		}
		d := ds[0]
		if d.Event.Type != "leader.changed" || d.Event.Board != "a" || !d.Event.At.Equal(msAt(1)) || !d.Born.Equal(msAt(1)) ||
			!d.Next.Equal(msAt(1)) || d.Attempts != 0 || string(d.Event.Payload) != `{"board":"a","id":"e1"}` {
			t.Fatalf("queued delivery = %+v", d)
		}
		// The same id again (a second node, a retried commit): the first
		// is kept, and only a new endpoint gets a delivery.
		again := webhookEvent("e1", 99, "x", "z")
		again.Payload = json.RawMessage(`{"other":true}`)
		commit(t, s, &podium.Batch{Parts: []podium.Part{ws.WebhookPart([]podium.WebhookEvent{again})}})
		if q := webhookQueue(t, ws, "x"); !slices.Equal(q, []string{"e1", "e2"}) {
			t.Fatalf("queue of x after a duplicate = %v", q)
		}
		zs, _ := ws.WebhookQueue(ctx, "z", 10)
		if len(zs) != 1 || zs[0].Event.Seq != d.Event.Seq || string(zs[0].Event.Payload) != `{"board":"a","id":"e1"}` ||
			!zs[0].Event.At.Equal(msAt(1)) {
			t.Fatalf("queue of z = %+v; want e1 as first stored", zs)
		}
		if n, err := webhookDepth(ws); n != 5 || err != nil {
			t.Fatalf("pending deliveries = %d, %v; want 5", n, err)
		}

		// Outcomes: delivered leaves the queue, a retry stays in it.
		d.Status, d.Attempts, d.LastStatus, d.Latency, d.UpdatedAt = podium.WebhookDelivered, 2, 204, 31*time.Millisecond, at(10)
		d.LastError = "status 500: oops"
		if ok, err := ws.SetWebhookDelivery(ctx, &d); !ok || err != nil {
			t.Fatalf("SetWebhookDelivery = %v, %v", ok, err)
		}
		e2 := webhookLog(t, ws, podium.WebhookDeliveryQuery{Endpoint: "x", Limit: 10})[0]
		e2.Attempts, e2.Next, e2.LastError, e2.UpdatedAt = 1, at(60_000), "timeout", at(11)
		if ok, err := ws.SetWebhookDelivery(ctx, &e2); !ok || err != nil {
			t.Fatalf("SetWebhookDelivery = %v, %v", ok, err)
		}
		if q := webhookQueue(t, ws, "x"); !slices.Equal(q, []string{"e2"}) {
			t.Fatalf("queue of x after delivering e1 = %v", q)
		}
		gone := podium.WebhookDelivery{Endpoint: "nobody", Event: podium.WebhookEvent{ID: "e1"}, Status: podium.WebhookDelivered}
		if ok, err := ws.SetWebhookDelivery(ctx, &gone); ok || err != nil {
			t.Fatalf("SetWebhookDelivery of no delivery = %v, %v", ok, err)
		}

		// The log: newest first, by status, in pages.
		log := webhookLog(t, ws, podium.WebhookDeliveryQuery{Endpoint: "x", Limit: 10})
		if ids := deliveryIDs(log); !slices.Equal(ids, []string{"e2", "e1"}) {
			t.Fatalf("log of x = %v", ids)
		}
		if l := log[1]; l.Status != podium.WebhookDelivered || l.Attempts != 2 || l.LastStatus != 204 ||
			l.Latency != 31*time.Millisecond || l.LastError != "status 500: oops" || !l.UpdatedAt.Equal(msAt(10)) {
			t.Fatalf("delivered row = %+v", l)
		}
		if l := log[0]; l.Status != podium.WebhookPending || l.Attempts != 1 || !l.Next.Equal(msAt(60_000)) || l.LastError != "timeout" {
			t.Fatalf("retried row = %+v", l)
		}
		if ids := deliveryIDs(webhookLog(t, ws, podium.WebhookDeliveryQuery{Endpoint: "x", Status: podium.WebhookDelivered, Limit: 10})); !slices.Equal(ids, []string{"e1"}) {
			t.Fatalf("delivered log of x = %v", ids)
		}
		if ids := deliveryIDs(webhookLog(t, ws, podium.WebhookDeliveryQuery{Endpoint: "x", Before: log[0].Event.Seq, Limit: 10})); !slices.Equal(ids, []string{"e1"}) {
			t.Fatalf("log of x before e2 = %v", ids)
		}
		if ids := deliveryIDs(webhookLog(t, ws, podium.WebhookDeliveryQuery{Endpoint: "y", Limit: 1})); !slices.Equal(ids, []string{"e3"}) {
			t.Fatalf("log of y, limit 1 = %v", ids)
		}

		// Redelivery of one event, then of a time range.
		now := at(100_000)
		if n, err := ws.RedeliverWebhooks(ctx, podium.WebhookRedelivery{Endpoint: "x", Event: "e1"}, now); n != 1 || err != nil {
			t.Fatalf("RedeliverWebhooks(e1) = %d, %v", n, err)
		}
		q, _ := ws.WebhookQueue(ctx, "x", 10)
		if len(q) != 2 || q[0].Event.ID != "e1" || q[0].Attempts != 0 || !q[0].Born.Equal(msOf(now)) || !q[0].Next.Equal(msOf(now)) {
			t.Fatalf("queue after redelivering e1 = %+v", q)
		}
		for _, e := range []string{"e1", "e3"} {
			d := podium.WebhookDelivery{Endpoint: "y", Event: podium.WebhookEvent{ID: e}, Status: podium.WebhookFailed, Attempts: 9, UpdatedAt: at(20)}
			if _, err := ws.SetWebhookDelivery(ctx, &d); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := ws.RedeliverWebhooks(ctx, podium.WebhookRedelivery{Endpoint: "y", From: at(2), To: at(4)}, now); n != 1 || err != nil {
			t.Fatalf("RedeliverWebhooks([2, 4)) = %d, %v", n, err)
		}
		if q := webhookQueue(t, ws, "y"); !slices.Equal(q, []string{"e3"}) {
			t.Fatalf("queue of y after a range = %v", q)
		}

		// Deleting an endpoint deletes its deliveries, not the events.
		if ok, err := ws.DeleteWebhookEndpoint(ctx, "x"); ok || err != nil { // no endpoint row, deliveries only
			t.Fatalf("DeleteWebhookEndpoint(x) = %v, %v", ok, err)
		}
		if q := webhookQueue(t, ws, "x"); len(q) != 0 {
			t.Fatalf("queue of x after its delete = %v", q)
		}
		if q := webhookQueue(t, ws, "y"); !slices.Equal(q, []string{"e3"}) {
			t.Fatalf("queue of y after x's delete = %v", q)
		}
	})

	// A commit of many events (a store may write them many rows a
	// statement): every event once, in order, each endpoint's delivery
	// once, even with an id twice in the same part.
	t.Run("ManyInOneCommit", func(t *testing.T) {
		s := open(t)
		ws := webhookStore(t, s)
		var evs []podium.WebhookEvent
		var want []string
		for i := range 150 {
			id := fmt.Sprintf("m%03d", i)
			evs = append(evs, webhookEvent(id, int64(i+1), "x", "y"))
			want = append(want, id)
		}
		dup := webhookEvent("m007", 999, "x", "z")
		dup.Payload = json.RawMessage(`{"second":true}`)
		evs = append(evs, dup)
		commit(t, s, &podium.Batch{Parts: []podium.Part{ws.WebhookPart(evs)}})
		ds, err := ws.WebhookQueue(ctx, "x", 1000)
		if err != nil || len(ds) != 150 {
			t.Fatalf("WebhookQueue(x) = %d deliveries, %v; want 150", len(ds), err)
		}
		for i, d := range ds {
			if d.Event.ID != want[i] || (i > 0 && d.Event.Seq <= ds[i-1].Event.Seq) {
				t.Fatalf("delivery %d of x = %s (seq %d); want %s in seq order", i, d.Event.ID, d.Event.Seq, want[i])
			}
		}
		if string(ds[7].Event.Payload) != `{"board":"a","id":"m007"}` {
			t.Fatalf("m007 = %s; want the first stored", ds[7].Event.Payload)
		}
		if zs, _ := ws.WebhookQueue(ctx, "z", 10); len(zs) != 1 || zs[0].Event.ID != "m007" {
			t.Fatalf("queue of z = %+v; want m007 alone", zs)
		}
		if n, err := webhookDepth(ws); n != 301 || err != nil {
			t.Fatalf("pending deliveries = %d, %v; want 301", n, err)
		}
	})

	t.Run("Budget", func(t *testing.T) {
		s := open(t)
		ws := webhookStore(t, s)
		var evs []podium.WebhookEvent
		for i := range 6 {
			evs = append(evs, webhookEvent(fmt.Sprintf("e%d", i), int64(i), "x", "y"))
		}
		commit(t, s, &podium.Batch{Parts: []podium.Part{ws.WebhookPart(evs[:3])}})
		commit(t, s, &podium.Batch{Parts: []podium.Part{ws.WebhookPart(evs[3:])}})
		if b, err := ws.WebhookBacklog(ctx); err != nil || !maps.Equal(b, map[string]int{"x": 6, "y": 6}) {
			t.Fatalf("WebhookBacklog = %v, %v", b, err)
		}
		// A delivery in flight when its endpoint's oldest are dropped.
		head, _ := ws.WebhookQueue(ctx, "x", 1)
		if n, err := ws.DropWebhooks(ctx, "x", 4, "over budget", at(50)); n != 4 || err != nil {
			t.Fatalf("DropWebhooks(x, 4) = %d, %v", n, err)
		}
		if q := webhookQueue(t, ws, "x"); !slices.Equal(q, []string{"e4", "e5"}) {
			t.Fatalf("queue of x after dropping 4 = %v", q)
		}
		if q := webhookQueue(t, ws, "y"); len(q) != 6 {
			t.Fatalf("queue of y after x's drop = %v", q)
		}
		head[0].Status, head[0].Attempts, head[0].UpdatedAt = podium.WebhookDelivered, 1, at(51)
		if ok, err := ws.SetWebhookDelivery(ctx, &head[0]); ok || err != nil {
			t.Fatalf("SetWebhookDelivery of a dropped delivery = %v, %v; want false", ok, err)
		}
		dropped := webhookLog(t, ws, podium.WebhookDeliveryQuery{Endpoint: "x", Status: podium.WebhookDropped, Limit: 10})
		if ids := deliveryIDs(dropped); !slices.Equal(ids, []string{"e3", "e2", "e1", "e0"}) {
			t.Fatalf("dropped log of x = %v", ids)
		}
		if d := dropped[3]; d.LastError != "over budget" || !d.UpdatedAt.Equal(msAt(50)) || d.Attempts != 0 {
			t.Fatalf("dropped row = %+v", d)
		}
		if n, err := ws.DropWebhooks(ctx, "x", 10, "over budget", at(50)); n != 2 || err != nil {
			t.Fatalf("DropWebhooks(x, 10) = %d, %v; want the 2 left", n, err)
		}
		if b, err := ws.WebhookBacklog(ctx); err != nil || !maps.Equal(b, map[string]int{"y": 6}) {
			t.Fatalf("WebhookBacklog after the drops = %v, %v", b, err)
		}
		// A dropped delivery can be redelivered.
		if n, err := ws.RedeliverWebhooks(ctx, podium.WebhookRedelivery{Endpoint: "x", Event: "e0"}, at(60)); n != 1 || err != nil {
			t.Fatalf("RedeliverWebhooks(dropped e0) = %d, %v", n, err)
		}
		if q := webhookQueue(t, ws, "x"); !slices.Equal(q, []string{"e0"}) {
			t.Fatalf("queue of x after redelivering e0 = %v", q)
		}
	})

	t.Run("Prune", func(t *testing.T) {
		s := open(t)
		ws := webhookStore(t, s)
		var evs []podium.WebhookEvent
		for i := range 5 {
			evs = append(evs, webhookEvent(fmt.Sprintf("e%d", i), int64(i), "x"))
		}
		evs = append(evs, webhookEvent("lone", 5)) // no endpoint took it
		commit(t, s, &podium.Batch{Parts: []podium.Part{ws.WebhookPart(evs)}})
		// e0, e1 delivered long ago, e2 failed long ago, e3 dropped
		// recently, e4 pending.
		for i, st := range []string{podium.WebhookDelivered, podium.WebhookDelivered, podium.WebhookFailed} {
			d := podium.WebhookDelivery{Endpoint: "x", Event: podium.WebhookEvent{ID: evs[i].ID}, Status: st, UpdatedAt: at(10)}
			if ok, err := ws.SetWebhookDelivery(ctx, &d); !ok || err != nil {
				t.Fatalf("SetWebhookDelivery = %v, %v", ok, err)
			}
		}
		if _, err := ws.DropWebhooks(ctx, "x", 1, "over budget", at(1000)); err != nil {
			t.Fatal(err)
		}
		dn, en, err := ws.PruneWebhooks(ctx, at(500), 2)
		if dn != 2 || en != 2 || err != nil {
			t.Fatalf("PruneWebhooks(limit 2) = %d, %d, %v; want 2 deliveries, then 2 of the 3 events left without one", dn, en, err)
		}
		dn, en, err = ws.PruneWebhooks(ctx, at(500), 100)
		if dn != 1 || en != 2 || err != nil {
			t.Fatalf("PruneWebhooks = %d, %d, %v; want the last old delivery and 2 events", dn, en, err)
		}
		if dn, en, err := ws.PruneWebhooks(ctx, at(500), 100); dn != 0 || en != 0 || err != nil {
			t.Fatalf("PruneWebhooks again = %d, %d, %v", dn, en, err)
		}
		log := webhookLog(t, ws, podium.WebhookDeliveryQuery{Endpoint: "x", Limit: 10})
		if ids := deliveryIDs(log); !slices.Equal(ids, []string{"e4", "e3"}) {
			t.Fatalf("log of x after the prune = %v", ids)
		}
		// The pending delivery's event is old, but it is kept while a
		// delivery refers to it; e0, stored again, is a new event.
		commit(t, s, &podium.Batch{Parts: []podium.Part{ws.WebhookPart([]podium.WebhookEvent{webhookEvent("e0", 0, "x")})}})
		q, _ := ws.WebhookQueue(ctx, "x", 10)
		if len(q) != 2 || q[0].Event.ID != "e4" || q[1].Event.ID != "e0" || q[1].Event.Seq <= log[0].Event.Seq+1 {
			t.Fatalf("queue after storing a pruned id again = %+v", q)
		}
	})

	t.Run("Refused", func(t *testing.T) {
		s, other := open(t), open(t)
		ws := webhookStore(t, s)
		a := putBoard(t, s, "a", podium.Never, 1)
		b := &podium.Batch{Submissions: []podium.Submission{sub(a, 1, "all", "p", 3)},
			Parts: []podium.Part{ws.WebhookPart([]podium.WebhookEvent{webhookEvent("e1", 1, "x")}), foreignPart{}}}
		if err := s.Commit(ctx, b); err == nil {
			t.Fatal("a batch with a foreign part was stored")
		}
		if q := webhookQueue(t, ws, "x"); len(q) != 0 {
			t.Fatalf("queue after a refused batch = %v", q)
		}
		b.Parts = []podium.Part{webhookStore(t, other).WebhookPart([]podium.WebhookEvent{webhookEvent("e1", 1, "x")})}
		if err := s.Commit(ctx, b); err == nil {
			t.Fatal("a batch with another store's webhook part was stored")
		}
		big := webhookEvent("e2", 1, "x")
		big.Payload = make(json.RawMessage, podium.MaxWebhookPayload+1)
		b.Parts = []podium.Part{ws.WebhookPart([]podium.WebhookEvent{big})}
		if err := s.Commit(ctx, b); err == nil {
			t.Fatal("a batch with an oversized payload was stored")
		}
		if n, err := webhookDepth(ws); n != 0 || err != nil {
			t.Fatalf("pending deliveries = %d, %v; want 0", n, err)
		}
	})
}

// msAt is at(ms) as a store keeps it, to the millisecond.
func msAt(ms int64) time.Time { return msOf(at(ms)) }

func msOf(t time.Time) time.Time { return podium.FromMillis(podium.Millis(t)) }
