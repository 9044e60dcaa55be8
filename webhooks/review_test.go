package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/review"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/webhooks"
)

// faultyStore is the SQLite store whose commits can be made to fail, as a
// full disk would.
type faultyStore struct {
	*sqlite.Store
	fail atomic.Bool
}

var errDiskFull = errors.New("disk full (injected)")

func (f *faultyStore) Commit(ctx context.Context, b *podium.Batch) error {
	if f.fail.Load() {
		return errDiskFull
	}
	return f.Store.Commit(ctx, b)
}

func (f *faultyStore) CommitDeferred(ctx context.Context, b *podium.Batch) (uint64, error) {
	if f.fail.Load() {
		return 0, errDiskFull
	}
	return f.Store.CommitDeferred(ctx, b)
}

// reviewBoard makes board id, whose review holds every submission, on eng.
func reviewBoard(t *testing.T, eng *engine.Engine, id string) {
	t.Helper()
	b := &podium.Board{ID: id, Keys: []podium.KeyDef{{Name: "score", Order: podium.Desc}}, Mode: podium.Best,
		Public: true, Review: &podium.Review{Hold: podium.HoldAll}}
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := eng.PutBoard(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// hold submits a score that the board holds, and returns its item.
func hold(t *testing.T, eng *engine.Engine, board, player string, score int64) *podium.ReviewItem {
	t.Helper()
	for {
		res, err := eng.Submit(context.Background(), []engine.Score{{Board: board, Player: player, Keys: []int64{score}}}, true, nil)
		if podium.ErrorCode(err) == podium.ECodeBoardNotFound {
			<-time.After(20 * time.Millisecond) // another node has not followed the board yet: a client's retry
			continue
		}
		if err != nil || res[0].Held == nil {
			t.Fatalf("submit = %+v, %v; want held", res, err)
		}
		return res[0].Held
	}
}

// reviewEvent is a review event's data.
type reviewEvent struct {
	ID, Board, Period, Player string
	Keys                      []int64
	Meta                      json.RawMessage
	SubmittedAt               string `json:"submitted_at"`
	Reason, Status            string
	Decision                  *struct {
		By, At, Reason string
		Seq            uint64
	}
}

// checkReviewEvent checks that d is the event of type typ about item id,
// under the id derived from them, and returns its data.
func checkReviewEvent(t *testing.T, d podium.WebhookDelivery, typ, board, id string) reviewEvent {
	t.Helper()
	if d.Event.Type != typ || d.Event.Board != board || d.Event.ID != webhooks.EventID(typ, board, id) {
		t.Fatalf("event %s %s on %q, want %s of item %s on %q", d.Event.Type, d.Event.ID, d.Event.Board, typ, id, board)
	}
	fitsSpec(t, d)
	var data reviewEvent
	if err := json.Unmarshal(d.Event.Payload, &data); err != nil || data.ID != id || data.Board != board {
		t.Fatalf("%s data = %s (%v)", typ, d.Event.Payload, err)
	}
	return data
}

// On SQLite: a held score, an approval and a rejection are one event each,
// in their commit; a commit that fails stores none, and without an
// endpoint that takes them nothing is stored.
func TestReviewEvents(t *testing.T) {
	ctx := context.Background()
	fs := &faultyStore{Store: open(t)}
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	m := webhooks.New(webhooks.Config{AllowPrivate: true, Poll: time.Hour})
	rv := review.New()
	eng := engine.New(engine.Config{Store: fs, Now: clk.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Modules: []engine.Module{rv, m}})
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	reviewBoard(t, eng, "ms:expert")

	// No endpoint takes review events: a hold and its decisions store nothing.
	url, prefix := "http://127.0.0.1:9/", ""
	other, err := m.CreateEndpoint(ctx, webhooks.EndpointSpec{URL: &url, Prefix: &prefix, Types: []string{webhooks.TypeBoardDeleted}})
	if err != nil {
		t.Fatal(err)
	}
	it := hold(t, eng, "ms:expert", "zed", 1)
	if _, _, err := rv.Approve(ctx, it.ID, "admin", ""); err != nil {
		t.Fatal(err)
	}
	if n, err := depth(fs); err != nil || n != 0 {
		t.Fatalf("outbox depth %d (%v) without an endpoint for review events", n, err)
	}

	ep, err := m.CreateEndpoint(ctx, webhooks.EndpointSpec{URL: &url, Prefix: &prefix,
		Types: []string{webhooks.TypeReviewHeld, webhooks.TypeReviewDecided}})
	if err != nil {
		t.Fatal(err)
	}
	log := func() []podium.WebhookDelivery {
		t.Helper()
		ds, err := m.Deliveries(ctx, podium.WebhookDeliveryQuery{Endpoint: ep.ID, Limit: webhooks.MaxPage})
		if err != nil {
			t.Fatal(err)
		}
		for i, j := 0, len(ds)-1; i < j; i, j = i+1, j-1 { // oldest first
			ds[i], ds[j] = ds[j], ds[i]
		}
		return ds
	}

	// A held score whose commit fails: no event.
	fs.fail.Store(true)
	if _, err := eng.Submit(ctx, []engine.Score{{Board: "ms:expert", Player: "eve", Keys: []int64{9}}}, true, nil); err == nil {
		t.Fatal("a submission succeeded while commits fail")
	}
	fs.fail.Store(false)
	if got := log(); len(got) != 0 {
		t.Fatalf("a failed hold stored %v", types(got))
	}

	dave := hold(t, eng, "ms:expert", "dave", 38001)
	carol := hold(t, eng, "ms:expert", "carol", 45000)
	got := log()
	if len(got) != 2 {
		t.Fatalf("two holds stored %v", types(got))
	}
	d := checkReviewEvent(t, got[0], webhooks.TypeReviewHeld, "ms:expert", dave.ID)
	if d.Player != "dave" || len(d.Keys) != 1 || d.Keys[0] != 38001 || d.Status != podium.ReviewPending ||
		d.Decision != nil || d.Reason != podium.HoldAll || string(d.Meta) != "{}" || d.SubmittedAt != "2026-12-01T12:00:00.000Z" {
		t.Fatalf("review.held data = %s", got[0].Event.Payload)
	}
	checkReviewEvent(t, got[1], webhooks.TypeReviewHeld, "ms:expert", carol.ID)

	// A rejection whose commit fails: no event, the item stays pending.
	fs.fail.Store(true)
	if _, err := rv.Reject(ctx, carol.ID, "mods", "spliced replay"); err == nil {
		t.Fatal("a rejection succeeded while commits fail")
	}
	// An approval whose commit fails: no event either.
	if _, _, err := rv.Approve(ctx, dave.ID, "admin", "replay checked"); err == nil {
		t.Fatal("an approval succeeded while commits fail")
	}
	fs.fail.Store(false)
	if got := log(); len(got) != 2 {
		t.Fatalf("failed decisions stored %v", types(got))
	}

	clk.Add(5 * time.Second)
	approved, res, err := rv.Approve(ctx, dave.ID, "admin", "replay checked")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rv.Reject(ctx, carol.ID, "mods", "spliced replay"); err != nil {
		t.Fatal(err)
	}
	if _, err := rv.Reject(ctx, carol.ID, "mods", "again"); !errors.Is(err, podium.ErrDecided) {
		t.Fatalf("a second decision: %v, want ErrDecided", err)
	}
	got = log()
	if len(got) != 4 {
		t.Fatalf("two decisions stored %v after the holds", types(got[2:]))
	}
	d = checkReviewEvent(t, got[2], webhooks.TypeReviewDecided, "ms:expert", dave.ID)
	if d.Status != podium.ReviewApproved || d.Decision == nil || d.Decision.By != "admin" || d.Decision.Reason != "replay checked" ||
		d.Decision.Seq == 0 || d.Decision.Seq != res.Seq || d.Decision.Seq != approved.Seq || d.Decision.At != "2026-12-01T12:00:05.000Z" ||
		!got[2].Event.At.Equal(clk.Now()) {
		t.Fatalf("review.decided (approved) data = %s, at %v; want seq %d", got[2].Event.Payload, got[2].Event.At, res.Seq)
	}
	d = checkReviewEvent(t, got[3], webhooks.TypeReviewDecided, "ms:expert", carol.ID)
	if d.Status != podium.ReviewRejected || d.Decision == nil || d.Decision.By != "mods" || d.Decision.Reason != "spliced replay" ||
		d.Decision.Seq != 0 {
		t.Fatalf("review.decided (rejected) data = %s", got[3].Event.Payload)
	}
	if ds, _ := m.Deliveries(ctx, podium.WebhookDeliveryQuery{Endpoint: other.ID, Limit: webhooks.MaxPage}); len(ds) != 0 {
		t.Fatalf("the endpoint without review types got %v", types(ds))
	}
}

// startReviewPG starts a node of a PostgreSQL cluster with moderation and
// webhooks.
func startReviewPG(t *testing.T, dsn, env, name string) (*engine.Engine, *review.Module, *webhooks.Module) {
	t.Helper()
	m := webhooks.New(webhooks.Config{AllowPrivate: true, Poll: time.Hour})
	rv := review.New()
	eng, _ := startPGNode(t, dsn, env, name, func(c *engine.Config) { c.Modules = []engine.Module{rv, m} })
	return eng, rv, m
}

// On two PostgreSQL nodes: a hold is one review.held on the node that
// holds it; a decision, on either node, is one review.decided, also when
// both nodes decide the same item at once (one wins).
func TestReviewEventsTwoNodesPostgres(t *testing.T) {
	dsn, env := pgCluster(t)
	ea, ra, ma := startReviewPG(t, dsn, env, "a")
	eb, rb, mb := startReviewPG(t, dsn, env, "b")
	ctx := context.Background()
	url, prefix := "http://127.0.0.1:9/", "ms:"
	ep, err := ma.CreateEndpoint(ctx, webhooks.EndpointSpec{URL: &url, Prefix: &prefix,
		Types: []string{webhooks.TypeReviewHeld, webhooks.TypeReviewDecided}})
	if err != nil {
		t.Fatal(err)
	}
	if err := mb.Load(ctx); err != nil { // node b reads the endpoints now, not at its next poll
		t.Fatal(err)
	}
	reviewBoard(t, ea, "ms:expert")

	alice := hold(t, ea, "ms:expert", "alice", 10)
	bob := hold(t, eb, "ms:expert", "bob", 20)
	carol := hold(t, eb, "ms:expert", "carol", 30)
	if _, _, err := rb.Approve(ctx, alice.ID, "admin", ""); err != nil { // held on a, approved on b
		t.Fatal(err)
	}
	if _, err := ra.Reject(ctx, bob.ID, "admin", "no replay"); err != nil { // held on b, rejected on a
		t.Fatal(err)
	}
	// Both nodes decide carol's item at once: one decision, one event.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); _, _, errs[0] = ra.Approve(ctx, carol.ID, "admin", "") }()
	go func() { defer wg.Done(); _, errs[1] = rb.Reject(ctx, carol.ID, "admin", "late") }()
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("two nodes deciding one item: %v, %v; want one to win", errs[0], errs[1])
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, podium.ErrDecided) && podium.ErrorCode(err) != podium.ECodeConflict {
			t.Fatalf("the losing decision: %v, want a conflict", err)
		}
	}

	ds, err := ma.Deliveries(ctx, podium.WebhookDeliveryQuery{Endpoint: ep.ID, Limit: webhooks.MaxPage})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, d := range ds {
		count[d.Event.ID]++
	}
	want := map[string]int{}
	for _, id := range []string{alice.ID, bob.ID, carol.ID} {
		want[webhooks.EventID(webhooks.TypeReviewHeld, "ms:expert", id)] = 1
		want[webhooks.EventID(webhooks.TypeReviewDecided, "ms:expert", id)] = 1
	}
	if len(ds) != len(want) {
		t.Fatalf("outbox = %v, want one event per hold and per decision (%d)", types(ds), len(want))
	}
	for id := range want {
		if count[id] != 1 {
			t.Fatalf("event %s stored %d times, want once (outbox %v)", id, count[id], types(ds))
		}
	}
}
