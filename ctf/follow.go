package ctf

import (
	"context"
	"time"

	"github.com/podiumhq/podium"
)

// follow reads what other nodes committed: on every notice naming a
// contest and every Poll. Notices only wake it early; a lost one delays.
func (s *Service) follow(ctx context.Context) {
	if s.poll < 0 && s.broker == nil {
		<-ctx.Done()
		return
	}
	poll := s.poll
	if poll <= 0 {
		poll = time.Second
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	var lastLog time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if s.poll < 0 {
				continue
			}
		case <-s.wake:
		}
		if err := s.Sync(ctx); err != nil && ctx.Err() == nil && time.Since(lastLog) > 10*time.Second {
			s.log.Warn("ctf: cannot follow the other nodes; serving contests from memory", "err", err)
			lastLog = time.Now()
		}
	}
}

// notice wakes the follower for a contest notice from another node.
func (s *Service) notice(n podium.Notice) {
	if n.Contest == "" || n.Node == s.node {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
