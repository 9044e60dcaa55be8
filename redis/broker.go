package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/podiumhq/podium"
)

// Options configures a Broker. Zero values mean the defaults.
type Options struct {
	// Env names the deployment in the keyspace (default "default").
	Env string
	// Timeout bounds each command and the dial (default 500ms): a Redis
	// that does not answer must not hold up a commit.
	Timeout time.Duration
	// Queue is how many notices may wait to be published (default 4096);
	// when Redis is slow or down, more are dropped (the nodes poll).
	Queue  int
	Logger *slog.Logger
}

// Broker is a podium.Broker on Redis publish/subscribe. Publishing never
// blocks a commit: notices go through a bounded queue to one publishing
// goroutine, and are dropped while Redis is unreachable. The broker
// reconnects by itself and reports its state through Err.
type Broker struct {
	rdb *goredis.Client
	ks  Keyspace
	log *slog.Logger
	out chan podium.Notice

	err      atomic.Pointer[error] // nil while Redis answers
	dropped  atomic.Uint64
	stop     chan struct{}
	done     sync.WaitGroup
	closeOne sync.Once
}

var _ podium.Broker = (*Broker)(nil)

// Open returns a broker on the Redis at url (redis://[user:pass@]host:port/db
// or rediss:// for TLS). It does not wait for Redis: a node starts, and
// serves, while Redis is down.
func Open(url string, opts Options) (*Broker, error) {
	if opts.Env == "" {
		opts.Env = "default"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 500 * time.Millisecond
	}
	if opts.Queue <= 0 {
		opts.Queue = 4096
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ks, err := NewKeyspace(opts.Env)
	if err != nil {
		return nil, err
	}
	// A failed publish is dropped, not retried: the nodes poll.
	o, err := parseURL(url, opts.Timeout, opts.Timeout)
	if err != nil {
		return nil, err
	}
	o.PoolSize = 4 // one publisher, one pinger, tools
	o.ContextTimeoutEnabled = true
	b := &Broker{rdb: goredis.NewClient(o), ks: ks, log: opts.Logger, out: make(chan podium.Notice, opts.Queue), stop: make(chan struct{})}
	unknown := errors.New("not connected yet")
	b.err.Store(&unknown)
	b.done.Add(2)
	go b.publishLoop(opts.Timeout)
	go b.pingLoop(opts.Timeout)
	return b, nil
}

// Keyspace returns the broker's keyspace.
func (b *Broker) Keyspace() Keyspace { return b.ks }

// Publish queues a notice for every node. It never blocks; a notice that
// finds the queue full is dropped and counted.
func (b *Broker) Publish(_ context.Context, n podium.Notice) error {
	select {
	case b.out <- n:
		return nil
	default:
		b.dropped.Add(1)
		return errors.New("redis: publish queue full; notice dropped")
	}
}

// Dropped returns how many notices were dropped (queue full or Redis down).
func (b *Broker) Dropped() uint64 { return b.dropped.Load() }

func (b *Broker) publishLoop(timeout time.Duration) {
	defer b.done.Done()
	batch := make([]podium.Notice, 0, 64)
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
		if b.Err() != nil {
			b.dropped.Add(uint64(len(batch)))
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		_, err := b.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for _, n := range batch {
				msg, _ := json.Marshal(n)
				p.Publish(ctx, b.ks.Notices(), msg)
			}
			return nil
		})
		cancel()
		if err != nil {
			b.dropped.Add(uint64(len(batch)))
			b.failed(err)
		}
	}
}

// pingLoop tells whether Redis answers, so that Err is current even when
// nothing is published.
func (b *Broker) pingLoop(timeout time.Duration) {
	defer b.done.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		err := b.rdb.Ping(ctx).Err()
		cancel()
		if err != nil {
			b.failed(err)
		} else {
			b.worked()
		}
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
	}
}

func (b *Broker) failed(err error) {
	if old := b.err.Swap(&err); old == nil {
		b.log.Warn("redis: unreachable; nodes fall back to polling the database", "err", err)
	}
}

func (b *Broker) worked() {
	if old := b.err.Swap(nil); old != nil {
		b.log.Info("redis: reachable again")
	}
}

// Err is nil while Redis answers, else the last failure.
func (b *Broker) Err() error {
	if p := b.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Subscribe calls fn for every notice until ctx ends. It resubscribes after
// any failure, with backoff; notices published meanwhile are lost to this
// node, which is why nodes also poll.
func (b *Broker) Subscribe(ctx context.Context, fn func(podium.Notice)) error {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		ps := b.rdb.Subscribe(ctx, b.ks.Notices())
		_, err := ps.Receive(ctx) // the subscription's confirmation
		if err == nil {
			backoff = 100 * time.Millisecond
			err = b.receive(ctx, ps, fn)
		}
		ps.Close()
		if ctx.Err() != nil {
			break
		}
		b.failed(err)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
	return nil
}

func (b *Broker) receive(ctx context.Context, ps *goredis.PubSub, fn func(podium.Notice)) error {
	quiet := 0
	for {
		// The loop ends with ctx even while Redis answers: a wait that
		// times out pings and goes on, so an error alone never came once
		// the pongs kept arriving, and a node's Close waited for ever.
		if err := ctx.Err(); err != nil {
			return err
		}
		// A bounded wait, so that a connection that died without a word
		// (a partition) is noticed: after a quiet spell, ping through the
		// subscription; a ping that gets no pong ends it.
		msg, err := ps.ReceiveTimeout(ctx, 2*time.Second)
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			if quiet++; quiet > 1 {
				return fmt.Errorf("redis: the subscription stopped answering: %w", err)
			}
			if err := ps.Ping(ctx); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		quiet = 0
		m, ok := msg.(*goredis.Message)
		if !ok {
			continue // a pong or a subscription confirmation
		}
		var n podium.Notice
		if err := json.Unmarshal([]byte(m.Payload), &n); err != nil {
			b.log.Warn("redis: a notice that is not podium's", "channel", m.Channel, "err", err)
			continue
		}
		fn(n)
	}
}

// Name is "redis", for messages.
func (b *Broker) Name() string { return "redis" }

// Close stops the broker's goroutines and closes its connections.
func (b *Broker) Close() error {
	var err error
	b.closeOne.Do(func() {
		close(b.stop)
		b.done.Wait()
		err = b.rdb.Close()
	})
	return err
}
