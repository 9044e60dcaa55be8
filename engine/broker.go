package engine

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/podiumhq/podium"
)

// Fallback combines brokers in order of preference: a notice is published
// through the first one that is up (Err is nil), and notices are received
// from all of them, so a node that cannot reach the preferred broker
// (Redis) still reaches the others through the next (PostgreSQL's
// LISTEN/NOTIFY). Its Err is nil while any broker is up.
func Fallback(brokers ...podium.Broker) podium.Broker {
	if len(brokers) == 1 {
		return brokers[0]
	}
	return fallback(brokers)
}

type fallback []podium.Broker

func (f fallback) Publish(ctx context.Context, n podium.Notice) error {
	var errs []error
	for _, b := range f {
		if b.Err() != nil {
			continue
		}
		err := b.Publish(ctx, n)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return errors.New("no broker is up")
	}
	return errors.Join(errs...)
}

func (f fallback) Subscribe(ctx context.Context, fn func(podium.Notice)) error {
	errs := make(chan error, len(f))
	for _, b := range f {
		go func() { errs <- b.Subscribe(ctx, fn) }()
	}
	var all []error
	for range f {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

func (f fallback) Err() error {
	var errs []error
	for _, b := range f {
		err := b.Err()
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Detail says which of the brokers are down and what takes over, "" when
// all are up: a fallback that works still deserves a word in /readyz.
func (f fallback) Detail() string {
	var down, up []string
	for i, b := range f {
		if err := b.Err(); err != nil {
			down = append(down, brokerName(b, i)+" unreachable ("+truncate(err.Error(), 120)+")")
		} else {
			up = append(up, brokerName(b, i))
		}
	}
	if len(down) == 0 {
		return ""
	}
	msg := strings.Join(down, "; ")
	if len(up) > 0 {
		return msg + "; notices go through " + strings.Join(up, ", ")
	}
	return msg + "; changes from other nodes arrive by polling"
}

// brokerName is a broker's name for messages (redis, postgres).
func brokerName(b podium.Broker, i int) string {
	if n, ok := b.(interface{ Name() string }); ok {
		return n.Name()
	}
	return "broker " + strconv.Itoa(i+1)
}

func (f fallback) Close() error {
	var errs []error
	for _, b := range f {
		errs = append(errs, b.Close())
	}
	return errors.Join(errs...)
}
