package engine

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/podiumhq/podium"
)

// idempotency remembers answers to requests sent with an Idempotency-Key.
//
// A first request claims its key; the writer stores a marker for it in the
// same transaction as its writes, so a retry after a crash can never apply
// twice. Once the caller has rendered its answer, Finish keeps it in memory
// and queues it to be stored with the next commit. A concurrent duplicate
// waits for the first to finish.
type idempotency struct {
	ttl time.Duration
	now podium.Clock

	mu      sync.Mutex
	recs    map[string]*idemEntry // scope + "\x00" + key
	pending []podium.IdempotencyRecord
	pruned  time.Time
}

type idemEntry struct {
	rec      podium.IdempotencyRecord
	inflight chan struct{} // closed when the first request finishes
}

func newIdempotency(ttl time.Duration, now podium.Clock) *idempotency {
	return &idempotency{ttl: ttl, now: now, recs: map[string]*idemEntry{}}
}

func idemID(scope, key string) string { return scope + "\x00" + key }

func (m *idempotency) load(recs []podium.IdempotencyRecord) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range recs {
		m.recs[idemID(r.Scope, r.Key)] = &idemEntry{rec: r}
	}
}

// Claim is the right to process a request under an Idempotency-Key. Call
// Finish with the answer once it is committed, or Abort if nothing was.
type Claim struct {
	m     *idempotency
	id    string
	entry *idemEntry
}

// ClaimIdempotency looks up (scope, key). When an earlier request with the
// same body already has an answer it is returned as prior (Status 0 means
// its writes were committed but the answer was lost in a crash: answer from
// the current state without applying again). The same key with another body
// is ECodeConflict. Otherwise the caller gets a claim.
func (e *Engine) ClaimIdempotency(ctx context.Context, scope, key string, hash []byte) (*Claim, *podium.IdempotencyRecord, error) {
	m := e.idem
	id := idemID(scope, key)
	for {
		m.mu.Lock()
		ent := m.recs[id]
		if ent == nil || m.now().Sub(ent.rec.CreatedAt) > m.ttl && ent.inflight == nil {
			ent = &idemEntry{rec: podium.IdempotencyRecord{Scope: scope, Key: key, RequestHash: hash, CreatedAt: m.now()}, inflight: make(chan struct{})}
			m.recs[id] = ent
			m.mu.Unlock()
			return &Claim{m: m, id: id, entry: ent}, nil, nil
		}
		if !bytes.Equal(ent.rec.RequestHash, hash) {
			m.mu.Unlock()
			return nil, nil, podium.Errorf(podium.ECodeConflict, "Idempotency-Key %q was already used with a different request body", key)
		}
		wait := ent.inflight
		if wait == nil {
			rec := ent.rec
			m.mu.Unlock()
			return nil, &rec, nil
		}
		m.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// marker is the record stored with the claimed request's writes.
func (c *Claim) marker(now time.Time) podium.IdempotencyRecord {
	r := c.entry.rec
	r.CreatedAt = now
	return r
}

// Finish records the answer and releases waiting duplicates.
func (c *Claim) Finish(status int, body []byte) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	c.entry.rec.Status = status
	c.entry.rec.Body = body
	m.pending = append(m.pending, c.entry.rec)
	close(c.entry.inflight)
	c.entry.inflight = nil
}

// release ends a claim whose writes were committed but whose answer will
// never come: duplicates then answer from the current state.
func (c *Claim) release() {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	close(c.entry.inflight)
	c.entry.inflight = nil
}

// Abort forgets the claim: nothing was applied.
func (c *Claim) Abort() {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.recs[c.id] == c.entry {
		delete(m.recs, c.id)
	}
	close(c.entry.inflight)
	c.entry.inflight = nil
}

func (m *idempotency) takePending() []podium.IdempotencyRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.pending
	m.pending = nil
	return p
}

func (m *idempotency) hasPending() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pending) > 0
}

func (m *idempotency) requeue(recs []podium.IdempotencyRecord) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending = append(recs, m.pending...)
}

// prune forgets expired answers; it reports true at most once a minute so
// the store is pruned at that pace too.
func (m *idempotency) prune() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if now.Sub(m.pruned) < time.Minute {
		return false
	}
	m.pruned = now
	for id, ent := range m.recs {
		if ent.inflight == nil && now.Sub(ent.rec.CreatedAt) > m.ttl {
			delete(m.recs, id)
		}
	}
	return true
}
