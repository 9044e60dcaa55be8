package engine

import (
	"context"
	"errors"

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

func (f fallback) Close() error {
	var errs []error
	for _, b := range f {
		errs = append(errs, b.Close())
	}
	return errors.Join(errs...)
}
