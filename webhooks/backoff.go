package webhooks

import (
	"math/rand/v2"
	"time"
)

// Backoff says when a failed delivery is tried again: after Base, then
// twice as long each attempt up to Max, each delay jittered to between
// half and all of it (so that the deliveries of an endpoint that came
// back do not all retry at once), and not after Window from the event's
// time: the delivery is then failed. The zero value means the defaults.
type Backoff struct {
	Base   time.Duration // default 5s
	Max    time.Duration // default 1h
	Window time.Duration // default 24h
	// Rand returns a number in [0, 1) (default math/rand/v2's); tests
	// fix it.
	Rand func() float64
}

// Defaults of Backoff.
const (
	DefaultBackoffBase = 5 * time.Second
	DefaultBackoffMax  = time.Hour
	DefaultWindow      = 24 * time.Hour
)

func (b Backoff) withDefaults() Backoff {
	if b.Base <= 0 {
		b.Base = DefaultBackoffBase
	}
	if b.Max <= 0 {
		b.Max = DefaultBackoffMax
	}
	if b.Max < b.Base {
		b.Max = b.Base
	}
	if b.Window <= 0 {
		b.Window = DefaultWindow
	}
	if b.Rand == nil {
		b.Rand = rand.Float64
	}
	return b
}

// Delay is the wait after the attempts-th failed attempt (1 for the
// first), jittered.
func (b Backoff) Delay(attempts int) time.Duration {
	b = b.withDefaults()
	d := b.Base
	for i := 1; i < attempts && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	half := d / 2
	return half + time.Duration(b.Rand()*float64(d-half))
}

// Next returns when to try again after the attempts-th failure at now of
// an event made at born; ok false: the window is over, the delivery
// fails.
func (b Backoff) Next(attempts int, born, now time.Time) (next time.Time, ok bool) {
	b = b.withDefaults()
	deadline := born.Add(b.Window)
	if !now.Before(deadline) {
		return time.Time{}, false
	}
	next = now.Add(b.Delay(attempts))
	if next.After(deadline) {
		next = deadline // one last try at the end of the window
	}
	return next, true
}
