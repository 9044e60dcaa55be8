package sessions

import (
	"container/heap"
	"sync"
	"time"

	"github.com/podiumhq/podium"
)

type liveSession struct {
	ses podium.Session
	key *podium.APIKey // the principal requests made with it carry
}

// held is the unexpired sessions this node knows, by token hash and id.
type held struct {
	mu     sync.RWMutex
	byHash map[string]*liveSession
	byID   map[string]*liveSession
	exp    expiryHeap
}

func newHeld() held {
	return held{byHash: map[string]*liveSession{}, byID: map[string]*liveSession{}}
}

// put adds or replaces a session (a refresh replaces its hash).
func (h *held) put(s *podium.Session) {
	ls := &liveSession{ses: *s, key: &podium.APIKey{ID: s.ID, Name: "session " + s.Device, Scopes: []string{},
		Boards: []string{}, CreatedAt: s.CreatedAt, Player: s.Player}}
	h.mu.Lock()
	defer h.mu.Unlock()
	if old := h.byID[s.ID]; old != nil {
		delete(h.byHash, old.ses.Hash)
	}
	h.byID[s.ID], h.byHash[s.Hash] = ls, ls
	heap.Push(&h.exp, expiry{at: s.ExpiresAt, id: s.ID})
}

// remove forgets a session; it reports whether it was held.
func (h *held) remove(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ls := h.byID[id]
	if ls == nil {
		return false
	}
	delete(h.byID, id)
	delete(h.byHash, ls.ses.Hash)
	return true
}

func (h *held) ids() []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]string, 0, len(h.byID))
	for id := range h.byID {
		out = append(out, id)
	}
	return out
}

// lookup returns the principal of an unexpired session by token hash.
func (h *held) lookup(hash string, now time.Time) (*podium.APIKey, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	ls := h.byHash[hash]
	if ls == nil || !now.Before(ls.ses.ExpiresAt) {
		return nil, false
	}
	return ls.key, true
}

// expired pops the sessions that expired at or before now and forgets
// them, returning their ids.
func (h *held) expired(now time.Time) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for h.exp.Len() > 0 && !now.Before(h.exp[0].at) {
		x := heap.Pop(&h.exp).(expiry)
		ls := h.byID[x.id]
		if ls == nil || !ls.ses.ExpiresAt.Equal(x.at) {
			continue // revoked, or refreshed: a later expiry is queued
		}
		delete(h.byID, x.id)
		delete(h.byHash, ls.ses.Hash)
		out = append(out, x.id)
	}
	return out
}

type expiry struct {
	at time.Time
	id string
}

// expiryHeap is a min-heap of expiry times; stale items (a session since
// revoked or refreshed) are skipped when popped.
type expiryHeap []expiry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
