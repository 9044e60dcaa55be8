// Package lease holds a podium.Lease while long work runs: it renews the
// lease every third of its life and gives it up at the end. The lease's
// epoch fences the work's commits (the store refuses a commit whose epoch
// is not the current holder's), so a renewal that finds the lease taken
// only logs: the fence then fails the work's commit.
//
// The tournament and league settlements hold their leases this way.
package lease

import (
	"context"
	"log/slog"
	"time"

	"github.com/podiumhq/podium"
)

// Store takes, renews and gives up leases (podium.TourneyStore has these
// methods; both stores implement them).
type Store interface {
	AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (podium.Lease, bool, error)
	ReleaseLease(ctx context.Context, name, holder string, epoch int64) error
}

// Hold renews l (taken for ttl) every ttl/3 until the returned release is
// called, which stops the renewals and gives the lease up. what names the
// work in the log.
func Hold(st Store, l podium.Lease, ttl time.Duration, now podium.Clock, log *slog.Logger, what string) (release func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(ttl / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				ctx, cancel := context.WithTimeout(context.Background(), ttl/3)
				r, ok, err := st.AcquireLease(ctx, l.Name, l.Holder, now(), ttl)
				cancel()
				if err != nil || !ok || r.Epoch != l.Epoch {
					log.Warn(what+" lease not renewed", "err", err, "holder", r.Holder, "epoch", r.Epoch)
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := st.ReleaseLease(ctx, l.Name, l.Holder, l.Epoch); err != nil {
			log.Warn("release the "+what+" lease", "err", err)
		}
	}
}
