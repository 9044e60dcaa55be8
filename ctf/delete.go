package ctf

import (
	"context"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
)

// Deletes. A deleted contest leaves the map at once on this node and at
// the next Sync on the others (woken by a notice when there is a broker);
// its listeners are told, and its streams end because the contest reads
// as missing. A contest made again under the same id is another
// generation (Generation): its streams start a new chain.

// DeleteContest deletes a contest with its challenges, solves, attempts
// and snapshots. A missing one is ECodeNotFound.
func (s *Service) DeleteContest(ctx context.Context, id string) error {
	if st, err := s.get(id); err == nil {
		// This node's writers of the contest finish first.
		st.wmu.Lock()
		defer st.wmu.Unlock()
	}
	found, err := s.store.DeleteContest(ctx, id)
	if err != nil {
		return err
	}
	s.drop(id, nil) // whatever this node holds of it, also one a Sync loaded meanwhile
	if !found {
		return errNotFound(id)
	}
	s.publish(ctx, id, 0)
	return nil
}

type goneContest struct {
	created int64 // unix ms
	drop    uint64
}

// drop forgets a deleted contest (st, if it is still the one in the
// map; nil: any) and tells the listeners.
func (s *Service) drop(id string, st *state) {
	s.mu.RLock()
	cur := s.contests[id]
	s.mu.RUnlock()
	if cur == nil || st != nil && cur != st {
		return
	}
	created := cur.createdAt() // not under s.mu (the lock order)
	s.mu.Lock()
	removed := s.contests[id] == cur
	if removed {
		delete(s.contests, id)
		s.drops++
		s.gone[id] = goneContest{created: podium.Millis(created), drop: s.drops}
	}
	s.mu.Unlock()
	if removed {
		s.changed(id)
	}
}

// createdAt is the creation time of st's contest.
func (st *state) createdAt() time.Time {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.def.CreatedAt
}

// newCreatedAt is the creation time of a contest made now under id: after
// the creation time of a contest of that id this node deleted, so that
// the two generations differ even within a millisecond.
func (s *Service) newCreatedAt(id string, now time.Time) time.Time {
	s.mu.RLock()
	g, ok := s.gone[id]
	s.mu.RUnlock()
	if ok && podium.Millis(now) <= g.created {
		return podium.FromMillis(g.created + 1)
	}
	return now
}

// Generation numbers a contest's incarnation: it changes when the contest
// is deleted and made again under its id (its creation time, in unix ms).
func Generation(c *contest.Contest) uint64 { return uint64(podium.Millis(c.CreatedAt)) }

// DeleteChallenge deletes a challenge that no team has solved (its
// attempts stay in the audit log). A solved one is ECodeConflict: a solve
// is never taken back, since seqs chain the standings, their snapshots
// and the streams' resume ids; to take a challenge out of a running
// contest, set its value to 0 instead. A missing contest or challenge is
// ECodeNotFound.
func (s *Service) DeleteChallenge(ctx context.Context, id, challenge string) error {
	if !contest.ValidChallengeID(challenge) {
		return podium.Errorf(podium.ECodeInvalid, "challenge id must match [a-z0-9][a-z0-9_.:-]{0,63}")
	}
	if _, err := s.load(ctx, id); err != nil {
		return err
	}
	if err := s.store.DeleteChallenge(ctx, id, challenge); err != nil {
		return err
	}
	s.publish(ctx, id, 0)
	return s.syncOne(ctx, id)
}

// publish tells the other nodes that a contest changed (seq: its last
// solve, for a solve; 0 for a change of definition, challenges or a
// delete), so that they Sync now rather than at their next poll.
func (s *Service) publish(ctx context.Context, id string, seq uint64) {
	if s.broker == nil {
		return
	}
	if err := s.broker.Publish(ctx, podium.Notice{Node: s.node, Contest: id, Seq: seq}); err != nil {
		s.log.Warn("ctf: publish", "err", err)
	}
}

// load returns a contest's state, reading the database when this node
// does not hold it: one made on another node since this node last looked
// can be written to at once.
func (s *Service) load(ctx context.Context, id string) (*state, error) {
	if st, err := s.get(id); err == nil {
		return st, nil
	}
	if !podium.ValidBoardID(id) {
		return nil, errNotFound(id)
	}
	if err := s.syncOne(ctx, id); err != nil {
		return nil, err
	}
	return s.get(id)
}
