package webhooks_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/league"
	"github.com/podiumhq/podium/sqlite"
	"github.com/podiumhq/podium/tournament"
	"github.com/podiumhq/podium/webhooks"
)

// clock is a fake clock the engine and the module read.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is an engine with the feed and the webhooks modules over a store.
type env struct {
	t        *testing.T
	eng      *engine.Engine
	m        *webhooks.Module
	tour     *tournament.Module
	lg       *league.Module
	store    podium.WebhookStore
	clk      *clock
	attempts chan podium.WebhookDelivery
	bounded  chan int // the pending deliveries each round's budget check left
	reg      *prometheus.Registry
}

func open(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func start(t *testing.T, st podium.Store, c webhooks.Config) *env {
	t.Helper()
	e := &env{t: t, clk: &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}, attempts: make(chan podium.WebhookDelivery, 100),
		bounded: make(chan int, 1), reg: prometheus.NewRegistry()}
	c.Attempted = func(d podium.WebhookDelivery) { e.attempts <- d }
	c.Bounded = func(n int) {
		select { // the latest only: a test that waits reads the store
		case e.bounded <- n:
		default:
		}
	}
	if c.Backoff.Base == 0 {
		c.Backoff = webhooks.Backoff{Base: time.Second, Max: time.Minute, Window: time.Hour}
	}
	c.Poll = time.Hour // the tests wake the worker themselves (Poke, commits)
	e.m = webhooks.New(c)
	e.tour = tournament.New(tournament.Config{SettleEvery: -1})
	e.lg = league.New(league.Config{SettleEvery: -1})
	e.eng = engine.New(engine.Config{Store: st, Now: e.clk.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registerer: e.reg,
		Modules: []engine.Module{feed.New(feed.Config{}), e.tour, e.lg, e.m}})
	if err := e.eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.eng.Close() })
	e.store, _ = st.(podium.WebhookStore)
	return e
}

func (e *env) board(id string) {
	e.t.Helper()
	b := &podium.Board{ID: id, Keys: []podium.KeyDef{{Name: "score", Order: podium.Desc}}, Mode: podium.Best,
		Reset: podium.Reset{Every: podium.Never, TZ: "UTC"}, Public: true}
	if err := b.Normalize(); err != nil {
		e.t.Fatal(err)
	}
	if _, _, err := e.eng.PutBoard(context.Background(), b); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) submit(board, player string, score int64) {
	e.t.Helper()
	if _, err := e.eng.Submit(context.Background(), []engine.Score{{Board: board, Player: player, Keys: []int64{score}}}, true, nil); err != nil {
		e.t.Fatalf("submit: %v", err)
	}
}

func (e *env) endpoint(url, prefix string, types ...string) podium.WebhookEndpoint {
	e.t.Helper()
	ep, err := e.m.CreateEndpoint(context.Background(), webhooks.EndpointSpec{URL: &url, Types: types, Prefix: &prefix})
	if err != nil {
		e.t.Fatalf("CreateEndpoint: %v", err)
	}
	return ep
}

// log is an endpoint's delivery log, oldest first.
func (e *env) log(ep string) []podium.WebhookDelivery {
	e.t.Helper()
	ds, err := e.m.Deliveries(context.Background(), podium.WebhookDeliveryQuery{Endpoint: ep, Limit: webhooks.MaxPage})
	if err != nil {
		e.t.Fatal(err)
	}
	for i, j := 0, len(ds)-1; i < j; i, j = i+1, j-1 {
		ds[i], ds[j] = ds[j], ds[i]
	}
	return ds
}

// next waits for the next stored attempt to ep.
func (e *env) next(ep string) podium.WebhookDelivery {
	e.t.Helper()
	for {
		select {
		case d := <-e.attempts:
			if d.Endpoint == ep {
				return d
			}
		case <-time.After(30 * time.Second):
			e.t.Fatalf("no attempt to %s", ep)
		}
	}
}

// wait waits for n stored attempts.
func (e *env) wait(n int) {
	e.t.Helper()
	for range n {
		select {
		case <-e.attempts:
		case <-time.After(30 * time.Second):
			e.t.Fatal("an attempt is missing")
		}
	}
}

// receiver records what it is sent and answers with the statuses of
// answer in turn (the last one repeats).
type receiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []request
	hits chan request
}

type request struct {
	id, ts, sig string
	body        []byte
}

func newReceiver(t *testing.T, answer ...int) *receiver {
	r := &receiver{hits: make(chan request, 100)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		q := request{req.Header.Get(webhooks.HeaderID), req.Header.Get(webhooks.HeaderTimestamp), req.Header.Get(webhooks.HeaderSignature), body}
		r.mu.Lock()
		n := len(r.got)
		r.got = append(r.got, q)
		r.mu.Unlock()
		w.WriteHeader(answer[min(n, len(answer)-1)])
		r.hits <- q
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func types(ds []podium.WebhookDelivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Event.Type)
	}
	return out
}

// Exactly one outbox event per change, to the endpoints that subscribe
// to its type and whose prefix its board has; none without them.
func TestOutboxOnePerChange(t *testing.T) {
	e := start(t, open(t), webhooks.Config{AllowPrivate: true})
	e.board("weekly-1")
	e.board("daily-1")
	e.submit("weekly-1", "alice", 10) // before any endpoint: nothing
	if n, _ := depth(e.store); n != 0 {
		t.Fatalf("outbox depth %d without endpoints", n)
	}
	rcv := newReceiver(t, http.StatusNoContent)
	all := e.endpoint(rcv.srv.URL, "", webhooks.TypeLeaderChanged, webhooks.TypePersonalBest)
	leaders := e.endpoint(rcv.srv.URL, "weekly-", webhooks.TypeLeaderChanged)

	e.submit("weekly-1", "bob", 20)   // bob: personal best, #1
	e.submit("weekly-1", "alice", 15) // alice: personal best only
	e.submit("weekly-1", "alice", 12) // not a best: nothing
	e.submit("daily-1", "carol", 5)   // personal best, #1 on a board the prefix leaves out
	e.wait(6)
	got := e.log(all.ID)
	want := []string{"personal_best", "leader.changed", "personal_best", "personal_best", "leader.changed"}
	if tt := types(got); len(tt) != len(want) {
		t.Fatalf("endpoint all got %v, want %v", tt, want)
	}
	for i, d := range got {
		if d.Event.Type != want[i] || d.Status != podium.WebhookDelivered || d.Attempts != 1 {
			t.Fatalf("delivery %d = %s %s after %d attempts, want %s delivered once", i, d.Event.Type, d.Status, d.Attempts, want[i])
		}
	}
	if tt := types(e.log(leaders.ID)); len(tt) != 1 || tt[0] != webhooks.TypeLeaderChanged {
		t.Fatalf("endpoint leaders got %v", tt)
	}
	var data struct {
		Board    string `json:"board"`
		Leader   struct{ Player string }
		Previous *struct{ Player string }
	}
	if err := json.Unmarshal(got[1].Event.Payload, &data); err != nil || data.Board != "weekly-1" ||
		data.Leader.Player != "bob" || data.Previous == nil || data.Previous.Player != "alice" {
		t.Fatalf("leader.changed data = %s (%v)", got[1].Event.Payload, err)
	}
	// One event, delivered to both endpoints under one id.
	if got[1].Event.ID != e.log(leaders.ID)[0].Event.ID {
		t.Fatal("the two endpoints' deliveries of one event have different ids")
	}
}

// A receiver that answers 500 and then 200 gets the event twice under one
// id, the second time once the backoff has passed; it verifies both with
// the published snippet.
func TestRetryThenDelivered(t *testing.T) {
	e := start(t, open(t), webhooks.Config{AllowPrivate: true})
	e.board("b")
	rcv := newReceiver(t, http.StatusInternalServerError, http.StatusOK)
	ep := e.endpoint(rcv.srv.URL, "", webhooks.TypeLeaderChanged)
	e.submit("b", "alice", 1)

	first := <-rcv.hits
	d := e.next(ep.ID)
	if d.Status != podium.WebhookPending || d.Attempts != 1 || d.LastStatus != 500 || d.LastError == "" || !d.Next.After(e.clk.Now()) {
		t.Fatalf("after a 500: %+v", d)
	}
	e.m.Poke() // not due yet: no attempt
	e.clk.Add(2 * time.Minute)
	e.m.Poke()
	second := <-rcv.hits
	d = e.next(ep.ID)
	if d.Status != podium.WebhookDelivered || d.Attempts != 2 || d.LastStatus != 200 || d.LastError != "" {
		t.Fatalf("after a 200: %+v", d)
	}
	if first.id != second.id || first.id != d.Event.ID || string(first.body) != string(second.body) {
		t.Fatalf("a retry changed the event: %q %q", first.id, second.id)
	}
	for _, q := range []request{first, second} {
		if err := webhooks.Verify(ep.Secret, q.id, q.ts, q.sig, q.body, e.clk.Now(), time.Hour); err != nil {
			t.Fatalf("Verify: %v", err)
		}
	}
	var body struct {
		ID, Type, Timestamp string
		Data                json.RawMessage
	}
	if err := json.Unmarshal(second.body, &body); err != nil || body.ID != d.Event.ID || body.Type != webhooks.TypeLeaderChanged ||
		body.Timestamp != "2026-12-01T12:00:00.000Z" {
		t.Fatalf("body = %s", second.body)
	}
}

// A receiver that hangs holds its own endpoint only: another endpoint's
// delivery goes through meanwhile.
func TestHangingEndpoint(t *testing.T) {
	e := start(t, open(t), webhooks.Config{AllowPrivate: true, Timeout: time.Minute})
	e.board("b")
	release := make(chan struct{})
	hung := make(chan struct{}, 10)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hung <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	fast := newReceiver(t, http.StatusOK)
	s := e.endpoint(slow.URL, "", webhooks.TypeLeaderChanged)
	f := e.endpoint(fast.srv.URL, "", webhooks.TypeLeaderChanged)
	e.submit("b", "alice", 1)
	<-hung
	if d := e.next(f.ID); d.Status != podium.WebhookDelivered {
		t.Fatalf("fast endpoint: %+v", d)
	}
	e.submit("b", "bob", 2)
	if d := e.next(f.ID); d.Status != podium.WebhookDelivered {
		t.Fatalf("fast endpoint, second event: %+v", d)
	}
	if ds := e.log(s.ID); len(ds) != 2 || ds[0].Status != podium.WebhookPending || ds[0].Attempts != 0 {
		t.Fatalf("slow endpoint's log = %+v", ds)
	}
}

// The timeout ends an attempt to a receiver that hangs; it is retried.
func TestTimeoutRetried(t *testing.T) {
	e := start(t, open(t), webhooks.Config{AllowPrivate: true, Timeout: 50 * time.Millisecond})
	e.board("b")
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	ep := e.endpoint(slow.URL, "", webhooks.TypeLeaderChanged)
	e.submit("b", "alice", 1)
	if d := e.next(ep.ID); d.Status != podium.WebhookPending || d.Attempts != 1 || d.LastStatus != 0 {
		t.Fatalf("after a timeout: %+v", d)
	}
}

// Past the retry window a delivery fails, and the next event of the
// endpoint goes (per-endpoint order: it waited behind the first).
func TestWindowThenFailed(t *testing.T) {
	e := start(t, open(t), webhooks.Config{AllowPrivate: true})
	e.board("b")
	rcv := newReceiver(t, http.StatusServiceUnavailable)
	ep := e.endpoint(rcv.srv.URL, "", webhooks.TypeLeaderChanged)
	e.submit("b", "alice", 1)
	e.submit("b", "bob", 2)
	first := e.next(ep.ID)
	if first.Status != podium.WebhookPending {
		t.Fatalf("first attempt: %+v", first)
	}
	if ds := e.log(ep.ID); ds[1].Attempts != 0 {
		t.Fatalf("the second event was tried while the first waits: %+v", ds[1])
	}
	for i := 0; ; i++ {
		e.clk.Add(time.Hour + time.Minute)
		e.m.Poke()
		d := e.next(ep.ID)
		if d.Event.ID != first.Event.ID {
			t.Fatalf("attempt of %s before %s failed", d.Event.ID, first.Event.ID)
		}
		if d.Status == podium.WebhookFailed {
			break
		}
		if i > 3 {
			t.Fatalf("still pending after %d attempts", d.Attempts)
		}
	}
	if d := e.next(ep.ID); d.Event.ID == first.Event.ID || d.Attempts != 1 {
		t.Fatalf("next attempt: %+v", d)
	}
	// A manual redelivery makes the failed one pending, first in line.
	n, err := e.m.Redeliver(context.Background(), podium.WebhookRedelivery{Endpoint: ep.ID, Event: first.Event.ID})
	if n != 1 || err != nil {
		t.Fatalf("Redeliver = %d, %v", n, err)
	}
	if d := e.next(ep.ID); d.Event.ID != first.Event.ID || d.Attempts != 1 || d.Status != podium.WebhookPending {
		t.Fatalf("after a redelivery: %+v", d)
	}
}

// Boards made and deleted are events of their own.
func TestBoardEvents(t *testing.T) {
	e := start(t, open(t), webhooks.Config{AllowPrivate: true})
	rcv := newReceiver(t, http.StatusOK)
	ep := e.endpoint(rcv.srv.URL, "", webhooks.TypeBoardCreated, webhooks.TypeBoardDeleted)
	e.board("b")
	if err := e.eng.DeleteBoard(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(time.Millisecond)
	e.board("b") // made again: another event
	e.wait(3)
	got := e.log(ep.ID)
	if tt := types(got); len(tt) != 3 || tt[0] != "board.created" || tt[1] != "board.deleted" || tt[2] != "board.created" {
		t.Fatalf("board events = %v", tt)
	}
	if got[0].Event.ID == got[2].Event.ID {
		t.Fatal("a board made again has its first creation's event id")
	}
}

// The admin's input is checked: SSRF destinations, unknown types, long
// prefixes.
func TestEndpointInput(t *testing.T) {
	e := start(t, open(t), webhooks.Config{})
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		url    string
		types  []string
		prefix string
	}{
		{"Loopback", "http://127.0.0.1:9/", []string{"leader.changed"}, ""},
		{"Metadata", "http://169.254.169.254/latest", []string{"leader.changed"}, ""},
		{"Private", "https://10.0.0.8/hook", []string{"leader.changed"}, ""},
		{"Localhost", "http://localhost:8080/", []string{"leader.changed"}, ""},
		{"Scheme", "file:///etc/passwd", []string{"leader.changed"}, ""},
		{"NoTypes", "https://example.com/", []string{}, ""},
		{"UnknownType", "https://example.com/", []string{"period.started"}, ""},
		{"Twice", "https://example.com/", []string{"leader.changed", "leader.changed"}, ""},
		{"Prefix", "https://example.com/", []string{"leader.changed"}, "UPPER"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.m.CreateEndpoint(ctx, webhooks.EndpointSpec{URL: &c.url, Types: c.types, Prefix: &c.prefix})
			if podium.ErrorCode(err) != podium.ECodeInvalid {
				t.Fatalf("CreateEndpoint = %v, want %s", err, podium.ECodeInvalid)
			}
		})
	}
	url := "https://example.com/hook"
	ep, err := e.m.CreateEndpoint(ctx, webhooks.EndpointSpec{URL: &url, Types: []string{"leader.changed"}})
	if err != nil {
		t.Fatal(err)
	}
	rot, err := e.m.RotateSecret(ctx, ep.ID)
	if err != nil || rot.Secret == ep.Secret || rot.PrevSecret != ep.Secret {
		t.Fatalf("RotateSecret = %+v, %v", rot, err)
	}
	if err := e.m.DeleteEndpoint(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.m.DeleteEndpoint(ctx, ep.ID); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Fatalf("DeleteEndpoint again = %v", err)
	}
}

// A restart replays the log into the indexes and emits nothing: the
// outbox keeps one event per change.
func TestRestartEmitsNothing(t *testing.T) {
	st := open(t)
	e := start(t, st, webhooks.Config{AllowPrivate: true})
	e.board("b")
	rcv := newReceiver(t, http.StatusOK)
	ep := e.endpoint(rcv.srv.URL, "", webhooks.TypeLeaderChanged, webhooks.TypePersonalBest)
	e.submit("b", "alice", 1)
	e.submit("b", "bob", 2)
	e.wait(4)
	if err := e.eng.Close(); err != nil {
		t.Fatal(err)
	}
	again := start(t, st, webhooks.Config{AllowPrivate: true})
	if got := again.log(ep.ID); len(got) != 4 {
		t.Fatalf("after a restart the outbox has %d events, want 4", len(got))
	}
	again.submit("b", "carol", 3) // the restarted node emits the next change, once
	again.wait(2)
	if got := again.log(ep.ID); len(got) != 6 {
		t.Fatalf("after one more change the outbox has %d events, want 6", len(got))
	}
	if n, _ := depth(again.store); n != 0 {
		t.Fatalf("outbox depth %d, want 0", n)
	}
}

// A tournament's settlement (now the tournament module's, emitted in its
// group) is a tournament.settled event with the winner and the payouts.
func TestTournamentSettled(t *testing.T) {
	e := start(t, open(t), webhooks.Config{AllowPrivate: true})
	rcv := newReceiver(t, http.StatusOK)
	ep := e.endpoint(rcv.srv.URL, "w", webhooks.TypeTournamentSettled)
	now := e.clk.Now()
	b := &podium.Board{ID: "w1", Keys: []podium.KeyDef{{Name: "score", Order: podium.Desc}}, Mode: podium.Best,
		Reset: podium.Reset{Every: podium.Never, TZ: "UTC"}, Public: true,
		Tournament: &podium.Tournament{Start: now.Add(-time.Hour), End: now.Add(time.Hour)}}
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.eng.PutBoard(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	e.submit("w1", "alice", 30)
	e.submit("w1", "bob", 20)
	e.clk.Add(2 * time.Hour)
	if _, err := e.tour.Settle(context.Background(), "w1"); err != nil {
		t.Fatal(err)
	}
	if d := e.next(ep.ID); d.Status != podium.WebhookDelivered || d.Event.Type != webhooks.TypeTournamentSettled {
		t.Fatalf("delivery %+v", d)
	}
	q := <-rcv.hits
	var body struct {
		Type string
		Data struct {
			Board      string
			Winner     struct{ Player string }
			Settlement struct {
				Top []struct {
					Player string
					Rank   int
				}
			}
		}
	}
	if err := json.Unmarshal(q.body, &body); err != nil || body.Type != "tournament.settled" || body.Data.Board != "w1" ||
		body.Data.Winner.Player != "alice" || len(body.Data.Settlement.Top) != 2 || body.Data.Settlement.Top[1].Player != "bob" {
		t.Fatalf("body = %s (%v)", q.body, err)
	}
}

// A league's settlement is a league.settled event with the period's counts
// and the players' outcomes, movers first.
func TestLeagueSettled(t *testing.T) {
	e := start(t, open(t), webhooks.Config{AllowPrivate: true})
	rcv := newReceiver(t, http.StatusOK)
	ep := e.endpoint(rcv.srv.URL, "lg", webhooks.TypeLeagueSettled)
	b := &podium.Board{ID: "lg", Keys: []podium.KeyDef{{Name: "score", Order: podium.Desc}}, Mode: podium.Best,
		Reset: podium.Reset{Every: podium.Daily, TZ: "UTC"}, Public: true,
		League: &podium.League{CohortSize: 3, Tiers: []podium.LeagueTier{{Name: "low", Promote: 1}, {Name: "high", Relegate: 1}}}}
	if err := b.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.eng.PutBoard(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	e.submit("lg", "alice", 10)
	e.submit("lg", "bob", 30)
	e.clk.Add(24 * time.Hour)
	if _, err := e.lg.Settle(context.Background(), "lg"); err != nil {
		t.Fatal(err)
	}
	if d := e.next(ep.ID); d.Status != podium.WebhookDelivered || d.Event.Type != webhooks.TypeLeagueSettled {
		t.Fatalf("delivery %+v", d)
	}
	q := <-rcv.hits
	var body struct {
		Type string
		Data struct {
			Board, Period string
			Settlement    struct {
				Players, Promoted int
				Outcomes          []struct {
					Player, Outcome, Tier string
					Rank                  int
					NextTier              string `json:"next_tier"`
				}
				Truncated int
			}
		}
	}
	s := &body.Data.Settlement
	if err := json.Unmarshal(q.body, &body); err != nil || body.Type != "league.settled" || body.Data.Board != "lg" ||
		body.Data.Period != "2026-12-01" || s.Players != 2 || s.Promoted != 1 || len(s.Outcomes) != 2 || s.Truncated != 0 ||
		s.Outcomes[0].Player != "bob" || s.Outcomes[0].Outcome != "promoted" || s.Outcomes[0].NextTier != "high" ||
		s.Outcomes[1].Player != "alice" || s.Outcomes[1].Outcome != "stayed" || s.Outcomes[1].Rank != 2 {
		t.Fatalf("body = %s (%v)", q.body, err)
	}
}

// A node restarted after a crash delivers at once: the lease its dead
// process left, unexpired, is its own (the holder is the node's name), so
// it does not wait out the TTL. The clock stands still, so with any other
// holder the lease would never expire and nothing would be delivered.
func TestRestartTakesBackItsLease(t *testing.T) {
	st := open(t)
	e := start(t, st, webhooks.Config{AllowPrivate: true})
	// What a process killed while it delivered leaves: the lease, held
	// for another minute, by this node.
	if _, ok, err := podium.TourneyStore(st).AcquireLease(context.Background(), "webhooks", "webhooks/local", e.clk.Now(), time.Minute); err != nil || !ok {
		t.Fatalf("AcquireLease = %v, %v", ok, err)
	}
	e.board("b")
	rcv := newReceiver(t, http.StatusOK)
	ep := e.endpoint(rcv.srv.URL, "", webhooks.TypeLeaderChanged)
	e.submit("b", "alice", 1)
	if d := e.next(ep.ID); d.Status != podium.WebhookDelivered {
		t.Fatalf("delivery = %+v", d)
	}
}

// depth is the number of pending deliveries, every endpoint's.
func depth(s podium.WebhookStore) (int, error) {
	backlog, err := s.WebhookBacklog(context.Background())
	n := 0
	for _, k := range backlog {
		n += k
	}
	return n, err
}
