package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/webhooks"
)

// timedEnv is an engine with the feed, the contests and the webhooks
// over a store, on a fake clock.
type timedEnv struct {
	*env
	ctf *ctf.Module
}

func startTimed(t *testing.T, st podium.Store, clk *clock) *timedEnv {
	t.Helper()
	e := &env{t: t, clk: clk, attempts: make(chan podium.WebhookDelivery, 100)}
	e.m = webhooks.New(webhooks.Config{AllowPrivate: true, Poll: time.Hour, // the tests call EmitDue, and commits wake the worker
		Backoff:   webhooks.Backoff{Base: time.Second, Max: time.Minute, Window: time.Hour},
		Attempted: func(d podium.WebhookDelivery) { e.attempts <- d }})
	c := ctf.NewModule(ctf.ModuleConfig{})
	e.eng = engine.New(engine.Config{Store: st, Now: clk.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Modules: []engine.Module{feed.New(feed.Config{}), c, e.m}})
	if err := e.eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.eng.Close() })
	e.store, _ = st.(podium.WebhookStore)
	return &timedEnv{env: e, ctf: c}
}

func (e *timedEnv) daily(id string) {
	e.t.Helper()
	b := &podium.Board{ID: id, Keys: []podium.KeyDef{{Name: "score", Order: podium.Desc}}, Mode: podium.Best,
		Reset: podium.Reset{Every: podium.Daily, TZ: "UTC"}, Public: true}
	if err := b.Normalize(); err != nil {
		e.t.Fatal(err)
	}
	if _, _, err := e.eng.PutBoard(context.Background(), b); err != nil {
		e.t.Fatal(err)
	}
}

// emit runs EmitDue (the worker, woken by a commit, may run it at the
// same time: the outbox is what the tests look at).
func (e *timedEnv) emit() {
	e.t.Helper()
	if _, err := e.m.EmitDue(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// stored reads an endpoint's deliveries from the store, oldest first
// (also once the engine is closed).
func stored(t *testing.T, st podium.WebhookStore, ep string) []podium.WebhookDelivery {
	t.Helper()
	ds, err := st.WebhookDeliveries(context.Background(), podium.WebhookDeliveryQuery{Endpoint: ep, Limit: webhooks.MaxPage})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(ds)-1; i < j; i, j = i+1, j-1 {
		ds[i], ds[j] = ds[j], ds[i]
	}
	return ds
}

type periodEvent struct {
	Board  string
	Period string
	Start  string
	End    string
	Total  int
	Top    []struct {
		Rank   int
		Player string
		Keys   []int64
	}
}

func decodePeriod(t *testing.T, d podium.WebhookDelivery) periodEvent {
	t.Helper()
	var p periodEvent
	if d.Event.Type != webhooks.TypePeriodEnded {
		t.Fatalf("event %s, want period.ended", d.Event.Type)
	}
	if err := json.Unmarshal(d.Event.Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A daily board's period ends: exactly one period.ended, once the grace
// has passed, with the period's final top 10 (the scores of the new
// period left out); none for a board that never resets.
func TestPeriodEnded(t *testing.T) {
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	e := startTimed(t, open(t), clk)
	rcv := newReceiver(t, http.StatusOK)
	ep := e.endpoint(rcv.srv.URL, "", webhooks.TypePeriodEnded)
	e.daily("daily")
	e.board("forever")
	for i := 1; i <= 12; i++ {
		e.submit("daily", fmt.Sprintf("p%02d", i), int64(i*10))
		e.submit("forever", fmt.Sprintf("p%02d", i), int64(i*10))
	}
	e.emit()
	clk.Add(12 * time.Hour) // midnight: the period ended, the grace has not passed
	e.submit("daily", "late", 1000)
	e.emit()
	if got := e.log(ep.ID); len(got) != 0 {
		t.Fatalf("%d events before the grace passed", len(got))
	}
	clk.Add(webhooks.DefaultTimedGrace)
	e.emit()
	d := e.next(ep.ID)
	if d.Status != podium.WebhookDelivered {
		t.Fatalf("delivery %+v", d)
	}
	fitsSpec(t, d)
	p := decodePeriod(t, d)
	if p.Board != "daily" || p.Period != "2026-12-01" || p.Start != "2026-12-01T00:00:00.000Z" || p.End != "2026-12-02T00:00:00.000Z" ||
		p.Total != 12 || len(p.Top) != 10 {
		t.Fatalf("period.ended data = %s", d.Event.Payload)
	}
	for i, en := range p.Top {
		if want := fmt.Sprintf("p%02d", 12-i); en.Rank != i+1 || en.Player != want || en.Keys[0] != int64((12-i)*10) {
			t.Fatalf("top[%d] = %+v, want %s at rank %d", i, en, want, i+1)
		}
	}
	if !d.Event.At.Equal(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("event time %v, want the period's end", d.Event.At)
	}
	q := <-rcv.hits
	var body struct{ ID, Type string }
	if err := json.Unmarshal(q.body, &body); err != nil || body.ID != d.Event.ID || body.Type != "period.ended" || q.id != d.Event.ID {
		t.Fatalf("body %s, id header %q (%v)", q.body, q.id, err)
	}
	e.emit()
	clk.Add(time.Hour)
	e.emit()
	if got := e.log(ep.ID); len(got) != 1 {
		t.Fatalf("%d events, want one period.ended: %v", len(got), types(got))
	}
}

// Restarts: a node that restarts right after it sent a period's end does
// not send it again; one that was down at a boundary sends it when it
// comes back within the window; one that comes back after the window
// sends nothing of that old period.
func TestPeriodEndedRestart(t *testing.T) {
	st := open(t)
	ws := podium.Store(st).(podium.WebhookStore)
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	e := startTimed(t, st, clk)
	rcv := newReceiver(t, http.StatusOK)
	ep := e.endpoint(rcv.srv.URL, "", webhooks.TypePeriodEnded)
	e.daily("daily")
	e.submit("daily", "ann", 5)
	clk.Add(12*time.Hour + webhooks.DefaultTimedGrace)
	e.emit()
	if p := decodePeriod(t, e.next(ep.ID)); p.Period != "2026-12-01" {
		t.Fatalf("period %s", p.Period)
	}
	if err := e.eng.Close(); err != nil {
		t.Fatal(err)
	}

	clk.Add(time.Minute) // restart: the period that just ended is looked at again, and kept once
	e = startTimed(t, st, clk)
	e.emit()
	if err := e.eng.Close(); err != nil { // joins the worker: whatever it stored is stored
		t.Fatal(err)
	}
	if got := stored(t, ws, ep.ID); len(got) != 1 || got[0].Attempts != 1 {
		t.Fatalf("after a restart: %d events (first attempted %d times), want the one, delivered once", len(got), got[0].Attempts)
	}

	clk.Add(24*time.Hour + 30*time.Minute) // down at the next boundary; back within the window (1h)
	e = startTimed(t, st, clk)
	e.submit("daily", "bob", 7) // in 2026-12-03: not in the event
	e.emit()
	d := e.next(ep.ID)
	if p := decodePeriod(t, d); p.Period != "2026-12-02" || p.Total != 0 || len(p.Top) != 0 {
		t.Fatalf("period.ended after the downtime = %s", d.Event.Payload)
	}
	if err := e.eng.Close(); err != nil {
		t.Fatal(err)
	}

	clk.Add(24*time.Hour + 2*time.Hour) // down at the next boundary; back after the window
	e = startTimed(t, st, clk)
	e.emit()
	if err := e.eng.Close(); err != nil {
		t.Fatal(err)
	}
	if got := stored(t, ws, ep.ID); len(got) != 2 {
		t.Fatalf("%d events after coming back past the window, want 2 (the old period's end is not sent)", len(got))
	}
}

type contestEvent struct {
	Contest string
	Freeze  *string
	End     string
	Teams   int
	Top     []struct {
		Rank   int
		Team   string
		Score  int64
		Solved int
	}
}

// A contest's freeze and end: one event each, with the standings at the
// freeze (the solves after it left out) and at the end (every solve).
func TestContestFrozenEnded(t *testing.T) {
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	e := startTimed(t, open(t), clk)
	rcv := newReceiver(t, http.StatusOK)
	ep := e.endpoint(rcv.srv.URL, "", webhooks.TypeContestFrozen, webhooks.TypeContestEnded)
	ctx := context.Background()
	svc := e.ctf.Service()
	now := clk.Now()
	freeze := now.Add(time.Hour)
	if _, _, err := svc.PutContest(ctx, &contest.Contest{ID: "ctf", Title: "CTF", Start: now.Add(-time.Hour), End: now.Add(2 * time.Hour),
		Freeze: &freeze, Public: true}); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []string{"web", "pwn"} {
		if _, _, err := svc.PutChallenge(ctx, &contest.Challenge{Contest: "ctf", ID: ch, Name: ch,
			Scoring: contest.Scoring{Function: contest.Static, Value: 100}}); err != nil {
			t.Fatal(err)
		}
	}
	solve := func(team, ch string) {
		t.Helper()
		if _, err := svc.Attempt(ctx, "ctf", team, ch, true, "judge", ""); err != nil {
			t.Fatal(err)
		}
	}
	solve("red", "web")
	clk.Add(time.Minute)
	solve("blue", "web")
	e.emit()
	clk.Add(time.Hour + webhooks.DefaultTimedGrace) // past the freeze
	solve("blue", "pwn")                            // after the freeze: not in contest.frozen
	e.emit()
	d := e.next(ep.ID)
	fitsSpec(t, d)
	var c contestEvent
	if err := json.Unmarshal(d.Event.Payload, &c); err != nil || d.Event.Type != webhooks.TypeContestFrozen ||
		c.Contest != "ctf" || c.Freeze == nil || *c.Freeze != "2026-12-01T13:00:00.000Z" || c.Teams != 2 ||
		len(c.Top) != 2 || c.Top[0].Team != "red" || c.Top[0].Score != 100 || c.Top[1].Solved != 1 {
		t.Fatalf("contest.frozen = %s %s (%v)", d.Event.Type, d.Event.Payload, err)
	}
	clk.Add(time.Hour) // past the end
	e.emit()
	d = e.next(ep.ID)
	fitsSpec(t, d)
	if err := json.Unmarshal(d.Event.Payload, &c); err != nil || d.Event.Type != webhooks.TypeContestEnded ||
		c.End != "2026-12-01T14:00:00.000Z" || len(c.Top) != 2 || c.Top[0].Team != "blue" || c.Top[0].Score != 200 || c.Top[0].Rank != 1 {
		t.Fatalf("contest.ended = %s %s (%v)", d.Event.Type, d.Event.Payload, err)
	}
	e.emit()
	clk.Add(time.Hour)
	e.emit()
	if got := e.log(ep.ID); len(got) != 2 {
		t.Fatalf("%d contest events, want 2: %v", len(got), types(got))
	}
}
