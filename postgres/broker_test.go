package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/pgtest"
)

// inbox collects the notices a subscription receives.
type inbox struct {
	mu sync.Mutex
	ns []podium.Notice
}

func (b *inbox) add(n podium.Notice) { b.mu.Lock(); b.ns = append(b.ns, n); b.mu.Unlock() }

func (b *inbox) has(board string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range b.ns {
		if n.Board == board {
			return true
		}
	}
	return false
}

func (b *inbox) all() []podium.Notice {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]podium.Notice(nil), b.ns...)
}

// logs records the messages a broker logs.
type logs struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logs) Enabled(context.Context, slog.Level) bool { return true }
func (l *logs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.msgs = append(l.msgs, r.Message)
	l.mu.Unlock()
	return nil
}
func (l *logs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logs) WithGroup(string) slog.Handler      { return l }

func (l *logs) said(part string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		if strings.Contains(m, part) {
			return true
		}
	}
	return false
}

func testEnv() string {
	var b [4]byte
	rand.Read(b[:])
	return "test-" + hex.EncodeToString(b[:])
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newBroker(t testing.TB, dsn string, opts BrokerOptions) *Broker {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLog()
	}
	b, err := NewBroker(dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// subscribe runs b.Subscribe until the test ends and returns its inbox
// once it listens.
func subscribe(t *testing.T, b *Broker) *inbox {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var in inbox
	done := make(chan struct{})
	go func() { b.Subscribe(ctx, in.add); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "the subscription to listen", func() bool { return b.listens.Load() >= 1 })
	return &in
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// publishUntil publishes a notice for board until in has it: a broker
// whose database just came back may drop the first ones.
func publishUntil(t *testing.T, b *Broker, in *inbox, board string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !in.has(board) {
		if time.Now().After(deadline) {
			t.Fatalf("the notice for %s never arrived", board)
		}
		b.Publish(ctx, podium.Notice{Node: "n", Board: board, Seq: 1})
		time.Sleep(20 * time.Millisecond)
	}
}

// A notice published by one broker reaches the subscribers of another on
// the same deployment, whole, and not those of another deployment on the
// same database.
func TestBrokerDeliversNotices(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	env, otherEnv := testEnv(), testEnv()
	pub := newBroker(t, dsn, BrokerOptions{Env: env})
	sub := newBroker(t, dsn, BrokerOptions{Env: env})
	other := newBroker(t, dsn, BrokerOptions{Env: otherEnv})
	if want := "podium:" + env + ":v1:notices"; sub.Channel() != want {
		t.Fatalf("channel %q, want %q", sub.Channel(), want)
	}
	got, stray := subscribe(t, sub), subscribe(t, other)
	waitFor(t, "the publisher to connect", func() bool { return pub.Err() == nil })
	sent := podium.Notice{Node: "a", Board: "b1", Seq: 7, Change: 3,
		Rows: []podium.Row{{Seq: 7, Period: "all", Player: "p", Keys: []int64{1, -2}, At: 1700000000123, Meta: json.RawMessage(`{"x":1}`)}}}
	if err := pub.Publish(ctx, sent); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the notice", func() bool { return len(got.all()) > 0 })
	if ns := got.all(); len(ns) != 1 || !reflect.DeepEqual(ns[0], sent) {
		t.Fatalf("received %+v, want %+v", ns, sent)
	}
	// A notice on the other deployment arrives after any of ours would
	// have: the other subscriber must then hold only its own.
	otherPub := newBroker(t, dsn, BrokerOptions{Env: otherEnv})
	publishUntil(t, otherPub, stray, "theirs")
	for _, n := range stray.all() {
		if n.Board != "theirs" {
			t.Fatalf("another deployment received %+v", n)
		}
	}
	// Err also covers the broker's publishing pool, which the subscriber
	// pings on a goroutine of its own: under load its first ping may not
	// have answered yet ("not connected yet"), so wait for it, as for pub.
	waitFor(t, "the subscriber's Err to clear while listening", func() bool { return sub.Err() == nil })
}

// A listening connection that the server ends (pg_terminate_backend) is
// noticed, logged and replaced; notices flow again.
func TestBrokerListenerTerminated(t *testing.T) {
	t.Parallel()
	name := testEnv() // also the sessions' application_name
	dsn := pgtest.WithParam(t, pgtest.DSN(t), "application_name", name)
	var log logs
	b := newBroker(t, dsn, BrokerOptions{Env: name, Logger: slog.New(&log)})
	in := subscribe(t, b)
	publishUntil(t, b, in, "before")
	admin, err := pgx.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var killed int
	err = admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND query LIKE 'LISTEN %'`, name).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("terminated %d listening sessions (%v), want 1", killed, err)
	}
	waitFor(t, "the subscription to listen again", func() bool { return b.listens.Load() >= 2 })
	if !log.said("unreachable") {
		t.Error("the lost listening connection was not logged")
	}
	publishUntil(t, b, in, "after")
	waitFor(t, "Err to clear", func() bool { return b.Err() == nil })
}

// A first start logs no recovery: the database was never unreachable
// (issue 18 item 27). A broker whose database is down from the start warns
// that it is unreachable.
func TestBrokerFirstConnectIsNoRecovery(t *testing.T) {
	t.Parallel()
	var log logs
	b := newBroker(t, pgtest.DSN(t), BrokerOptions{Env: testEnv(), Logger: slog.New(&log)})
	subscribe(t, b)
	waitFor(t, "Err to clear", func() bool { return b.Err() == nil })
	if log.said("reachable again") || log.said("unreachable") {
		log.mu.Lock()
		t.Errorf("a first start logged %q", log.msgs)
		log.mu.Unlock()
	}
	var down logs
	d := newBroker(t, "postgres://nobody@127.0.0.1:1/none?sslmode=disable", BrokerOptions{Env: testEnv(), Logger: slog.New(&down)})
	waitFor(t, "the first ping to fail", func() bool { return down.said("unreachable") })
	if err := d.Err(); err == nil || err.Error() == "not connected yet" {
		t.Errorf("Err of a broker whose database is down = %v", err)
	}
}

// A database that stops answering without closing anything (a partition)
// is noticed by the publisher and the listener, publishing neither blocks
// nor fails the caller meanwhile, and the broker recovers by itself.
func TestBrokerSurvivesPartition(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := pgtest.NewProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	dsn = pgtest.WithParam(t, pgtest.WithParam(t, dsn, "host", "127.0.0.1"), "port", strconv.Itoa(p.Port()))
	b := newBroker(t, dsn, BrokerOptions{Env: testEnv(), Timeout: 300 * time.Millisecond, Queue: 64})
	defer p.Thaw() // before the broker closes
	in := subscribe(t, b)
	publishUntil(t, b, in, "before")
	p.Freeze()
	listens := b.listens.Load()
	// Both the pinger and, after its quiet wait, the listener notice.
	waitFor(t, "the listener to notice the partition", func() bool { return b.subErr.Load() != nil && b.pubErr.Load() != nil })
	if b.Err() == nil {
		t.Error("Err is nil while partitioned")
	}
	for i := range 10_000 {
		if err := b.Publish(ctx, podium.Notice{Board: "during", Seq: uint64(i)}); err != nil && !strings.Contains(err.Error(), "queue full") {
			t.Fatalf("Publish while partitioned: %v", err)
		}
	}
	if b.Dropped() == 0 {
		t.Error("no notice counted as dropped while partitioned")
	}
	p.Thaw()
	waitFor(t, "the subscription to listen again", func() bool { return b.listens.Load() > listens })
	waitFor(t, "Err to clear", func() bool { return b.Err() == nil })
	publishUntil(t, b, in, "after")
}

func TestChannel(t *testing.T) {
	for _, env := range []string{"", "Prod", "a b", "-x", strings.Repeat("a", 33), "a:b"} {
		if _, err := Channel(env); err == nil {
			t.Errorf("Channel(%q) succeeded", env)
		}
		if env == "" {
			continue // NewBroker takes "" as "default"
		}
		if b, err := NewBroker("postgres://127.0.0.1:1/x", BrokerOptions{Env: env}); err == nil {
			b.Close()
			t.Errorf("NewBroker with env %q succeeded", env)
		}
	}
	if c, err := Channel(strings.Repeat("a", 32)); err != nil || len(c) > 63 {
		t.Errorf("Channel of the longest env = %q (%d bytes, PostgreSQL keeps 63), %v", c, len(c), err)
	}
}

// TestNotifyPayloadFits: a notice whose rows would pass NOTIFY's 8000
// bytes goes without them (the nodes read the log), never fails.
func TestNotifyPayloadFits(t *testing.T) {
	n := podium.Notice{Board: "b", Seq: 500}
	for i := 0; i < 200; i++ {
		n.Rows = append(n.Rows, podium.Row{Seq: uint64(301 + i), Period: "all", Player: strings.Repeat("p", 40), Keys: []int64{int64(i)}, At: 1})
	}
	msg := notifyPayload(n)
	var got podium.Notice
	if err := json.Unmarshal(msg, &got); err != nil || len(msg) > 8000 || got.Rows != nil || got.Seq != 500 || got.Board != "b" {
		t.Fatalf("%d bytes: %+v %v", len(msg), got, err)
	}
	n.Rows = n.Rows[:3]
	if err := json.Unmarshal(notifyPayload(n), &got); err != nil || len(got.Rows) != 3 {
		t.Fatalf("small rows dropped: %+v %v", got, err)
	}
}
