package engine

import (
	"context"
	"time"

	"github.com/podiumhq/podium"
)

// Idempotency records kept within a byte budget, their pending answers and
// their expiry (idempotency.go).

// answerBytes estimates the heap of an answer waiting to be stored.
func answerBytes(r *podium.IdempotencyRecord) int64 {
	return int64(len(r.Scope)+len(r.Key)+len(r.RequestHash)+len(r.Body)) + 2*idemRecordBytes
}

// bytes is the estimated heap of the records and the answers waiting to be
// stored.
func (m *Idempotency) bytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytesLocked()
}

func (m *Idempotency) bytesLocked() int64 {
	return int64(len(m.recs))*idemRecordBytes + m.answersBytes
}

// records is the number of records in memory.
func (m *Idempotency) records() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recs)
}

// evictLocked drops the oldest records past the budget; until they would
// have expired, keys missing from memory are looked up in the database.
// Answers not stored yet stay (they are the only copy), counted.
func (m *Idempotency) evictLocked() {
	for m.bytesLocked() > m.budget && m.head < len(m.order) {
		q := m.order[m.head]
		m.head++
		if r, ok := m.recs[q.fp]; !ok || r.created != q.created {
			continue // replaced, expired or forgotten
		}
		delete(m.recs, q.fp)
		m.evictions.Add(1)
		m.evicted = max(m.evicted, q.created)
	}
	m.compactLocked()
}

// compactLocked gives back the queue's consumed front.
func (m *Idempotency) compactLocked() {
	if m.head >= 1024 && m.head*2 >= len(m.order) {
		n := copy(m.order, m.order[m.head:])
		clear(m.order[n:])
		m.order = m.order[:n]
		m.head = 0
	}
}

// stored drops the answers now in the database from memory.
func (m *Idempotency) stored(recs []podium.IdempotencyRecord) {
	if len(recs) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range recs {
		r := &recs[i]
		fp := fingerprint(r.Scope, r.Key)
		if a, ok := m.answers[fp]; ok && a.CreatedAt.Equal(r.CreatedAt) && a.Status == r.Status {
			delete(m.answers, fp)
			m.answersBytes -= answerBytes(&a)
		}
	}
	if len(m.answers) == 0 {
		// A map never shrinks: after a burst (or an outage that queued
		// answers), give its table back.
		m.answers = map[idemFP]podium.IdempotencyRecord{}
	}
	m.evictLocked()
}

func (m *Idempotency) takePending() []podium.IdempotencyRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.pending
	m.pending = nil
	return p
}

func (m *Idempotency) hasPending() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pending) > 0
}

func (m *Idempotency) requeue(recs []podium.IdempotencyRecord) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending = append(recs, m.pending...)
}

// pruneDue returns the cutoff of the next prune, at most once a minute:
// records created before it have expired.
func (m *Idempotency) pruneDue() (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if now.Sub(m.pruned) < time.Minute {
		return time.Time{}, false
	}
	m.pruned = now
	// Not past a request still in flight or an answer not stored yet:
	// storing it after the prune would bring back a record that memory
	// has forgotten. They are pruned the next time.
	cutoff := now.Add(-m.ttl)
	for _, c := range m.inflight {
		if c.rec.CreatedAt.Before(cutoff) {
			cutoff = c.rec.CreatedAt
		}
	}
	for _, a := range m.answers {
		if a.CreatedAt.Before(cutoff) {
			cutoff = a.CreatedAt
		}
	}
	return cutoff, true
}

// pruneBefore forgets the records created before cutoff, once the store
// has deleted them: a record lives until then in both, so a key is never
// claimed again while the store still holds its record (its marker would
// not replace the old one).
func (m *Idempotency) pruneBefore(cutoff time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := podium.Millis(cutoff) // the store's test: created_ms < ms
	m.prunedTo = max(m.prunedTo, ms)
	// The queue is in finishing order, which is creation order give or
	// take the time a request takes: a record behind the front stays a
	// little longer, and is forgotten when a lookup finds it pruned.
	for m.head < len(m.order) {
		q := m.order[m.head]
		if q.created >= ms {
			break
		}
		m.head++
		if r, ok := m.recs[q.fp]; ok && r.created == q.created {
			delete(m.recs, q.fp)
		}
	}
	m.compactLocked()
}

// prune deletes the expired records from the store, then from memory, at
// most once a minute (pruneDue).
func (m *Idempotency) prune() {
	cutoff, ok := m.pruneDue()
	if !ok {
		return
	}
	if _, err := m.store.PruneIdempotency(context.Background(), cutoff); err != nil {
		m.log.Warn("prune idempotency keys", "err", err)
		return
	}
	m.pruneBefore(cutoff)
}
