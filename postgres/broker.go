package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/podiumhq/podium"
)

// BrokerOptions configures a Broker. Zero values mean the defaults.
type BrokerOptions struct {
	// Env names the deployment, as in the Redis keyspace: nodes of one
	// deployment share a channel, and several deployments may share a
	// database (default "default").
	Env string
	// Timeout bounds dialling, each publish and each check that the
	// listening connection is alive (default 2s): a database that does
	// not answer must not hold up a commit.
	Timeout time.Duration
	// Queue is how many notices may wait to be published (default 4096);
	// while the database is slow or down, more are dropped (the nodes
	// poll).
	Queue  int
	Logger *slog.Logger
}

// ChannelVersion is the version of the channel's name and payload, as the
// Redis keyspace has one.
const ChannelVersion = "v1"

var envRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// Channel returns the LISTEN/NOTIFY channel of a deployment:
// podium:{env}:v1:notices, the name the Redis keyspace gives its notices
// channel. Notifications are per database, not per schema, so the env
// keeps deployments that share a database apart. env is 1 to 32
// characters of [a-z0-9_-], starting with a letter or digit.
//   - payload: a podium.Notice as JSON, under NOTIFY's 8000 bytes (its
//     log rows are left out when they would not fit)
//   - written by: every node, after each commit and metadata change
//   - read by: every node (one listening connection each)
func Channel(env string) (string, error) {
	if !envRe.MatchString(env) {
		return "", fmt.Errorf("postgres: env %q must be 1 to 32 characters of [a-z0-9_-]", env)
	}
	return "podium:" + env + ":" + ChannelVersion + ":notices", nil
}

// Broker is a podium.Broker on PostgreSQL's LISTEN/NOTIFY. Publishing
// never blocks a commit: notices go through a bounded queue to one
// publishing goroutine, which sends them with pg_notify on a connection of
// its own, outside any write transaction (a NOTIFY inside a commit's
// transaction takes a database-wide lock until that commit ends, which
// would serialise every node's commits; docs/BENCHMARKS.md). Notices are
// dropped while the database is unreachable. A subscription holds one
// dedicated connection that LISTENs, and reconnects with backoff. Err
// reports the state.
type Broker struct {
	pool    *pgxpool.Pool   // the publisher and the pinger
	listen  *pgx.ConnConfig // a subscription's connection
	channel string
	timeout time.Duration
	log     *slog.Logger
	out     chan podium.Notice

	pubErr atomic.Pointer[error] // nil while the database answers
	subErr atomic.Pointer[error] // nil while every subscription listens
	// pinged is closed once the first ping has answered (either way), when
	// Err stops saying "not connected yet".
	pinged     chan struct{}
	pingedOnce sync.Once
	dropped    atomic.Uint64
	listens    atomic.Uint64 // successful LISTENs (tests watch reconnects)

	stop     chan struct{}
	done     sync.WaitGroup
	closeOne sync.Once
}

var _ podium.Broker = (*Broker)(nil)

// NewBroker returns a broker on the database dsn names (as Open takes it).
// It does not wait for the database: a node starts, and serves, while it
// is down.
func NewBroker(dsn string, opts BrokerOptions) (*Broker, error) {
	if opts.Env == "" {
		opts.Env = "default"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Second
	}
	if opts.Queue <= 0 {
		opts.Queue = 4096
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	channel, err := Channel(opts.Env)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	cfg.MaxConns = 2 // the publisher and the pinger
	cfg.ConnConfig.ConnectTimeout = opts.Timeout
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "podium"
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	b := &Broker{
		pool: pool, listen: cfg.ConnConfig.Copy(), channel: channel, timeout: opts.Timeout, log: opts.Logger,
		out: make(chan podium.Notice, opts.Queue), stop: make(chan struct{}),
	}
	unknown := errNotConnected
	b.pubErr.Store(&unknown)
	b.pinged = make(chan struct{})
	b.done.Add(2)
	go b.publishLoop()
	go b.pingLoop()
	return b, nil
}

// Pinged is closed once the broker has tried its database for the first
// time: Err then tells whether it answers. A server waits for it before it
// serves, so that its first /readyz is not "not connected yet".
func (b *Broker) Pinged() <-chan struct{} { return b.pinged }

// Channel returns the broker's channel.
func (b *Broker) Channel() string { return b.channel }

// Publish queues a notice for every node. It never blocks; a notice that
// finds the queue full is dropped and counted.
func (b *Broker) Publish(_ context.Context, n podium.Notice) error {
	select {
	case b.out <- n:
		return nil
	default:
		b.dropped.Add(1)
		return errors.New("postgres: publish queue full; notice dropped")
	}
}

// Dropped returns how many notices were dropped (queue full or database
// down).
func (b *Broker) Dropped() uint64 { return b.dropped.Load() }

// sqlNotify sends one notification per payload, in one statement: one
// implicit transaction, so the database-wide notify lock is taken once
// per batch.
const sqlNotify = "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p"

func (b *Broker) publishLoop() {
	defer b.done.Done()
	batch := make([]podium.Notice, 0, 64)
	payloads := make([]string, 0, cap(batch))
	for {
		select {
		case <-b.stop:
			return
		case n := <-b.out:
			batch = append(batch[:0], n)
		}
	more:
		for len(batch) < cap(batch) {
			select {
			case n := <-b.out:
				batch = append(batch, n)
			default:
				break more
			}
		}
		if b.pubErr.Load() != nil {
			b.dropped.Add(uint64(len(batch)))
			continue
		}
		payloads = payloads[:0]
		for _, n := range batch {
			msg := notifyPayload(n)
			payloads = append(payloads, string(msg))
		}
		ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
		_, err := b.pool.Exec(ctx, sqlNotify, b.channel, payloads)
		cancel()
		if err != nil {
			b.dropped.Add(uint64(len(batch)))
			b.failed(&b.pubErr, err)
		}
	}
}

// pingLoop tells whether the database answers, so that Err is current
// even when nothing is published.
func (b *Broker) pingLoop() {
	defer b.done.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
		err := b.pool.Ping(ctx)
		cancel()
		if err != nil {
			b.failed(&b.pubErr, err)
		} else {
			b.worked(&b.pubErr)
		}
		b.pingedOnce.Do(func() { close(b.pinged) })
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
	}
}

// errNotConnected is the state of a new broker before its first ping: a
// first success is a connection, not a recovery, and a first failure is
// worth the warning.
var errNotConnected = errors.New("not connected yet")

func (b *Broker) failed(state *atomic.Pointer[error], err error) {
	if old := state.Swap(&err); old == nil || *old == errNotConnected {
		b.log.Warn("postgres broker: database unreachable; nodes fall back to polling", "err", err)
	}
}

func (b *Broker) worked(state *atomic.Pointer[error]) {
	old := state.Swap(nil)
	switch {
	case old == nil:
	case *old == errNotConnected:
		b.log.Debug("postgres broker: connected")
	default:
		b.log.Info("postgres broker: database reachable again")
	}
}

// Err is nil while the database answers and subscriptions listen, else
// the last failure.
func (b *Broker) Err() error {
	if p := b.pubErr.Load(); p != nil {
		return *p
	}
	if p := b.subErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Subscribe calls fn for every notice on the channel until ctx ends or the
// broker is closed. It listens on a connection of its own and reconnects
// after any failure, with backoff; notices sent meanwhile are lost to this
// node, which is why nodes also poll.
func (b *Broker) Subscribe(ctx context.Context, fn func(podium.Notice)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-b.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		listened, err := b.listenOnce(ctx, fn)
		if ctx.Err() != nil {
			break
		}
		if listened {
			backoff = 100 * time.Millisecond
		}
		b.failed(&b.subErr, fmt.Errorf("listen: %w", err))
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
	b.subErr.Store(nil)
	return nil
}

// quietWait is how long a subscription waits for a notification before it
// checks that its connection is alive: a connection that died without a
// word (a partition) is noticed within about this long plus the timeout.
const quietWait = 2 * time.Second

// listenOnce connects, listens and delivers notices until the connection
// fails or ctx ends. listened says whether LISTEN succeeded.
func (b *Broker) listenOnce(ctx context.Context, fn func(podium.Notice)) (listened bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, b.timeout)
	conn, err := pgx.ConnectConfig(cctx, b.listen)
	cancel()
	if err != nil {
		return false, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), b.timeout)
		conn.Close(cctx)
		cancel()
	}()
	cctx, cancel = context.WithTimeout(ctx, b.timeout)
	_, err = conn.Exec(cctx, "LISTEN "+pgx.Identifier{b.channel}.Sanitize())
	cancel()
	if err != nil {
		return false, err
	}
	b.listens.Add(1)
	b.worked(&b.subErr)
	for {
		wctx, cancel := context.WithTimeout(ctx, quietWait)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return true, ctx.Err()
		case err != nil && pgconn.Timeout(err):
			// Quiet: check the connection, within the timeout.
			pctx, cancel := context.WithTimeout(ctx, b.timeout)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return true, err
			}
			continue
		case err != nil:
			return true, err
		}
		var notice podium.Notice
		if err := json.Unmarshal([]byte(n.Payload), &notice); err != nil {
			b.log.Warn("postgres broker: a notification that is not podium's", "channel", n.Channel, "err", err)
			continue
		}
		fn(notice)
	}
}

// Name is "postgres", for messages.
func (b *Broker) Name() string { return "postgres" }

// Close stops the broker's goroutines, ends its subscriptions and closes
// its connections.
func (b *Broker) Close() error {
	b.closeOne.Do(func() {
		close(b.stop)
		b.done.Wait()
		b.pool.Close()
	})
	return nil
}

// maxPayload keeps a notice under NOTIFY's limit of 8000 bytes.
const maxPayload = 7900

// notifyPayload is n as JSON, without its log rows when they would make it
// too large for NOTIFY (the other nodes then read them from the log).
func notifyPayload(n podium.Notice) []byte {
	msg, _ := json.Marshal(n)
	if len(msg) > maxPayload {
		n.Rows = nil
		msg, _ = json.Marshal(n)
	}
	return msg
}
