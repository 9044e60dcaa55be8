package ctf

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
)

// memStore is a contest.Store in memory, for benchmarks that measure the
// service's own work (a database adds its constant per solve) and that
// load tens of thousands of solves at once (load).
type memStore struct {
	mu       sync.Mutex
	contests map[string]*memContest
}

type memContest struct {
	head     contest.Stored
	chals    []contest.Challenge
	solves   []contest.Solve
	solved   map[[2]string]bool
	attempts []contest.Attempt
	snaps    map[int64]contest.Snapshot
}

var _ contest.Store = (*memStore)(nil)

func newMemStore() *memStore { return &memStore{contests: map[string]*memContest{}} }

func (m *memStore) Contests(ctx context.Context) ([]contest.Stored, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []contest.Stored
	for _, c := range m.contests {
		out = append(out, c.head)
	}
	slices.SortFunc(out, func(a, b contest.Stored) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

func (m *memStore) LoadContest(ctx context.Context, id string) (*contest.Stored, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.contests[id]
	if c == nil {
		return nil, nil
	}
	h := c.head
	return &h, nil
}

func (m *memStore) PutContest(ctx context.Context, c *contest.Contest) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	mc := m.contests[c.ID]
	if mc == nil {
		mc = &memContest{solved: map[[2]string]bool{}, snaps: map[int64]contest.Snapshot{}}
		m.contests[c.ID] = mc
	}
	mc.head.Contest = *c
	mc.head.Version++
	return nil
}

func (m *memStore) Challenges(ctx context.Context, id string) ([]contest.Challenge, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.contests[id]; c != nil {
		return slices.Clone(c.chals), nil
	}
	return nil, nil
}

func (m *memStore) PutChallenge(ctx context.Context, ch *contest.Challenge) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.contests[ch.Contest]
	if c == nil {
		return podium.Errorf(podium.ECodeNotFound, "contest %q does not exist", ch.Contest)
	}
	c.chals = slices.DeleteFunc(c.chals, func(x contest.Challenge) bool { return x.ID == ch.ID })
	c.chals = append(c.chals, *ch)
	slices.SortFunc(c.chals, func(a, b contest.Challenge) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), cmp.Compare(a.ID, b.ID))
	})
	c.head.Version++
	return nil
}

func (m *memStore) Solves(ctx context.Context, id string, after uint64, fn func(*contest.Solve) error) error {
	m.mu.Lock()
	c := m.contests[id]
	var ss []contest.Solve
	if c != nil && after < uint64(len(c.solves)) {
		ss = slices.Clone(c.solves[after:])
	}
	m.mu.Unlock()
	for i := range ss {
		if err := fn(&ss[i]); err != nil {
			return err
		}
	}
	return nil
}

func (m *memStore) Attempt(ctx context.Context, id string, after uint64, ref contest.AttemptRef, catchUp func(*contest.Solve) error,
	decide func(last uint64, prior *contest.Attempt) (*contest.Attempt, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.contests[id]
	if c == nil {
		return podium.Errorf(podium.ECodeNotFound, "contest %q does not exist", id)
	}
	for i := after; i < uint64(len(c.solves)); i++ {
		sv := c.solves[i]
		if err := catchUp(&sv); err != nil {
			return err
		}
	}
	var prior *contest.Attempt
	if ref.Idem != "" {
		for i := range c.attempts {
			if c.attempts[i].Key == ref.Key && c.attempts[i].Idem == ref.Idem {
				p := c.attempts[i]
				prior = &p
			}
		}
	}
	a, err := decide(c.head.Seq, prior)
	if err != nil || a.ID != 0 {
		return err
	}
	if a.Result == contest.ResultSolved {
		if c.solved[[2]string{a.Team, a.Challenge}] {
			return podium.Errorf(podium.ECodeConflict, "team %q has already solved %q", a.Team, a.Challenge)
		}
		c.solved[[2]string{a.Team, a.Challenge}] = true
		c.solves = append(c.solves, contest.Solve{Contest: id, Seq: a.Seq, Challenge: a.Challenge, Team: a.Team, At: a.At})
		c.head.Seq = a.Seq
	}
	a.ID = int64(len(c.attempts) + 1)
	c.attempts = append(c.attempts, *a)
	return nil
}

// load appends solves as if judged (for setting up large contests).
func (m *memStore) load(id string, ss []contest.Solve) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.contests[id]
	for _, sv := range ss {
		sv.Seq = c.head.Seq + 1
		c.solved[[2]string{sv.Team, sv.Challenge}] = true
		c.solves = append(c.solves, sv)
		c.head.Seq = sv.Seq
	}
}

func (m *memStore) DeleteContest(ctx context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.contests[id]
	delete(m.contests, id)
	return ok, nil
}

func (m *memStore) DeleteChallenge(ctx context.Context, id, ch string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.contests[id]
	if c == nil {
		return podium.Errorf(podium.ECodeNotFound, "contest %q does not exist", id)
	}
	c.chals = slices.DeleteFunc(c.chals, func(x contest.Challenge) bool { return x.ID == ch })
	c.head.Version++
	return nil
}

func (m *memStore) Attempts(ctx context.Context, id string, after int64, limit int) ([]contest.Attempt, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []contest.Attempt
	if c := m.contests[id]; c != nil {
		for _, a := range c.attempts {
			if a.ID > after && len(out) < limit {
				out = append(out, a)
			}
		}
	}
	return out, nil
}

func (m *memStore) PutSnapshot(ctx context.Context, id string, at time.Time, seq uint64, doc []byte) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.contests[id]
	if c == nil {
		return false, podium.Errorf(podium.ECodeNotFound, "contest %q does not exist", id)
	}
	k := podium.Millis(at)
	if _, ok := c.snaps[k]; ok {
		return false, nil
	}
	c.snaps[k] = contest.Snapshot{At: podium.FromMillis(k), Seq: seq, Doc: doc}
	return true, nil
}

func (m *memStore) SnapshotAt(ctx context.Context, id string, at time.Time) (contest.Snapshot, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var best contest.Snapshot
	ok := false
	if c := m.contests[id]; c != nil {
		for k, s := range c.snaps {
			if k <= podium.Millis(at) && (!ok || k > podium.Millis(best.At)) {
				best, ok = s, true
			}
		}
	}
	return best, ok, nil
}

func (m *memStore) SnapshotTimes(ctx context.Context, id string) ([]time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []time.Time
	if c := m.contests[id]; c != nil {
		for k := range c.snaps {
			out = append(out, podium.FromMillis(k))
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out, nil
}
