package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium"
)

// Idempotency decides requests sent with an Idempotency-Key (Claim), and
// answers a retry whose answer was lost (Reconstruct). Engine.Idempotency
// returns the engine's.
//
// A first request claims its key; the writer stores a marker for it in the
// same transaction as its writes, so a retry after a crash can never apply
// twice. Once the caller has rendered its answer, Finish queues it to be
// stored with the next commit. A concurrent duplicate waits for the first
// to finish.
//
// Memory keeps only what deciding needs: per finished request, a
// fingerprint of its scope and key, a prefix of its body's hash and its
// creation time (idemRecordBytes), never the answer. A retry reads the
// answer from the database (or from the queue of answers not stored yet).
// The records are kept under a byte budget, oldest evicted first; while an
// evicted record may still be stored (until the store prunes it), a key
// missing from memory is looked up in the database before it is
// claimed, so an eviction costs a read, never a second application. A
// record lives until the store prunes it (pruneBefore), in memory too. In
// shared mode the writer's transaction looks every claimed key up anyway
// (checkClaims), so a miss needs no read there.
type Idempotency struct {
	ttl    time.Duration
	now    podium.Clock
	budget int64
	store  podium.Store
	shared bool
	log    *slog.Logger
	reads  entryReader // the entries a reconstructed answer shows (the engine)

	evictions atomic.Int64
	lookups   atomic.Int64

	// mu guards the fields below.
	mu       sync.Mutex
	recs     map[idemFP]idemRec
	order    []idemQueued // recs in the order they were finished, from head
	head     int
	inflight map[idemFP]*Claim
	// answers holds the answers finished but not stored yet, by key;
	// pending the same, queued for the next commit.
	answers      map[idemFP]podium.IdempotencyRecord
	answersBytes int64
	pending      []podium.IdempotencyRecord
	// evicted is the creation (unix ms) of the newest record evicted or
	// left unloaded at start, prunedTo the last cutoff the store pruned
	// before: while evicted >= prunedTo, a key missing from memory may
	// have a record in the store.
	evicted  int64
	prunedTo int64
	pruned   time.Time
}

// idemFP names a (scope, key) in memory: the first 16 bytes of the SHA-256
// of scope, a zero byte and key. Two keys share one with probability
// 2^-128 per pair; a retry reads its answer by its exact scope and key.
type idemFP [16]byte

func fingerprint(scope, key string) idemFP {
	h := sha256.New()
	h.Write([]byte(scope))
	h.Write([]byte{0})
	h.Write([]byte(key))
	var fp idemFP
	copy(fp[:], h.Sum(nil))
	return fp
}

// idemRec is what deciding needs of a finished request.
type idemRec struct {
	req     [16]byte // the first 16 bytes of the SHA-256 of its body
	created int64    // unix ms
}

type idemQueued struct {
	fp      idemFP
	created int64
}

// idemRecordBytes is the estimated heap of one record: its map slot (key
// and value, 40 bytes, at the map's average load) and its place in the
// eviction queue (24 bytes, with the slice's slack).
// BenchmarkIdempotencyMemory measures it.
const idemRecordBytes = 112

// DefaultIdempotencyBytes is the default memory budget of the
// Idempotency-Key records (~600,000 records).
const DefaultIdempotencyBytes = 64 << 20

// entryReader reads a player's entry as it is now (Engine.Entry).
type entryReader interface {
	Entry(ctx context.Context, q Query, player string) (Page, error)
}

func newIdempotency(ttl time.Duration, now podium.Clock, budget int64, store podium.Store, shared bool, log *slog.Logger, reads entryReader) *Idempotency {
	return &Idempotency{ttl: ttl, now: now, budget: budget, store: store, shared: shared, log: log, reads: reads,
		recs: map[idemFP]idemRec{}, inflight: map[idemFP]*Claim{}, answers: map[idemFP]podium.IdempotencyRecord{}}
}

func reqPrefix(hash []byte) (p [16]byte) {
	copy(p[:], hash)
	return p
}

// load reads the stored records, newest first, until the budget is full:
// the older ones are then looked up on demand. Expired records not pruned
// yet are loaded too: a record lives until it is pruned, in the store and
// in memory alike (see prune).
func (m *Idempotency) load(ctx context.Context) error {
	var got []idemQueued
	var reqs [][16]byte
	var left int64 // the newest record left out
	err := m.store.IdempotencyIndex(ctx, time.Time{}, func(r *podium.IdempotencyRecord) bool {
		if int64(len(got)+1)*idemRecordBytes > m.budget {
			left = podium.Millis(r.CreatedAt)
			return false
		}
		got = append(got, idemQueued{fingerprint(r.Scope, r.Key), podium.Millis(r.CreatedAt)})
		reqs = append(reqs, reqPrefix(r.RequestHash))
		return true
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(got) - 1; i >= 0; i-- { // oldest first
		m.recs[got[i].fp] = idemRec{req: reqs[i], created: got[i].created}
		m.order = append(m.order, got[i])
	}
	m.evicted = max(m.evicted, left)
	return nil
}

// Claim is the right to process a request under an Idempotency-Key. Call
// Finish with the answer once it is committed, or Abort if nothing was.
type Claim struct {
	m    *Idempotency
	fp   idemFP
	rec  podium.IdempotencyRecord // scope, key, request hash, creation; no answer
	done chan struct{}            // closed when the claim ends
}

func errConflictKey(key string) error {
	return podium.Errorf(podium.ECodeConflict, "Idempotency-Key %q was already used with a different request body", key)
}

// unavailable is the answer when the database could not say whether a
// key was used: nothing is applied.
func (m *Idempotency) unavailable(key string, err error) error {
	m.log.Warn("read an Idempotency-Key record", "err", err)
	return podium.Errorf(podium.ECodeUnavailable, "could not read the record of Idempotency-Key %q from the database; nothing was applied, retry shortly", key)
}

// Claim looks up (scope, key). When an earlier request with the
// same body already has an answer it is returned as prior (Status 0 means
// its writes were committed but the answer was lost in a crash: answer from
// the current state without applying again). The same key with another body
// is ECodeConflict. Otherwise the caller gets a claim. The answer, and a key
// memory no longer holds, are read from the database: if it cannot be
// read, the error is ECodeUnavailable and nothing is claimed.
func (m *Idempotency) Claim(ctx context.Context, scope, key string, hash []byte) (*Claim, *podium.IdempotencyRecord, error) {
	fp := fingerprint(scope, key)
	req := reqPrefix(hash)
	for {
		m.mu.Lock()
		now := m.now()
		if c := m.inflight[fp]; c != nil {
			m.mu.Unlock()
			select {
			case <-c.done:
				continue
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		if a, ok := m.answers[fp]; ok && a.Scope == scope && a.Key == key {
			// Not stored yet (and perhaps evicted from recs already).
			m.mu.Unlock()
			if !bytes.Equal(a.RequestHash, hash) {
				return nil, nil, errConflictKey(key)
			}
			return nil, &a, nil
		}
		if r, ok := m.recs[fp]; ok && r.created < m.prunedTo {
			// The store pruned it; the queue's order let it stay here.
			delete(m.recs, fp)
		}
		if r, ok := m.recs[fp]; ok {
			if r.req != req {
				m.mu.Unlock()
				return nil, nil, errConflictKey(key)
			}
			m.mu.Unlock()
			prior, err := m.lookup(ctx, scope, key)
			if err != nil {
				return nil, nil, m.unavailable(key, err)
			}
			if prior == nil { // pruned meanwhile
				m.forget(fp, r.created)
				continue
			}
			if !bytes.Equal(prior.RequestHash, hash) {
				return nil, nil, errConflictKey(key)
			}
			return nil, prior, nil
		}
		c := &Claim{m: m, fp: fp, rec: podium.IdempotencyRecord{Scope: scope, Key: key, RequestHash: hash, CreatedAt: now}, done: make(chan struct{})}
		m.inflight[fp] = c
		check := !m.shared && m.evicted > 0 && m.evicted >= m.prunedTo
		m.mu.Unlock()
		if !check {
			return c, nil, nil
		}
		// Memory may have evicted this key: the database decides. Only
		// this node stores records, and the claim holds the key, so
		// nothing can store one between the read and the commit.
		prior, err := m.lookup(ctx, scope, key)
		if err != nil {
			c.Abort()
			return nil, nil, m.unavailable(key, err)
		}
		if prior == nil {
			return c, nil, nil
		}
		c.end(podium.Millis(prior.CreatedAt), reqPrefix(prior.RequestHash), nil)
		if !bytes.Equal(prior.RequestHash, hash) {
			return nil, nil, errConflictKey(key)
		}
		return nil, prior, nil
	}
}

// lookup reads a record from the store (nil: none).
func (m *Idempotency) lookup(ctx context.Context, scope, key string) (*podium.IdempotencyRecord, error) {
	m.lookups.Add(1)
	rec, ok, err := m.store.LookupIdempotency(ctx, scope, key)
	if err != nil || !ok {
		return nil, err
	}
	return &rec, nil
}

// forget drops a record that the store no longer holds.
func (m *Idempotency) forget(fp idemFP, created int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.recs[fp]; ok && r.created == created {
		delete(m.recs, fp)
	}
}

// marker is the record stored with the claimed request's writes: status
// 0 (no answer yet) and, as its body, what the writer knows of the answer
// before the commit (each item's seq, period and whether it improved, or
// its error), so that a retry after a crash that lost the answer can say
// exactly what happened (see Reconstruct).
func (c *Claim) marker(results []Result) podium.IdempotencyRecord {
	r := c.rec // created at the claim, as in memory: both expire together
	m := markerBody{V: 1, Results: make([]markerResult, len(results))}
	for i, res := range results {
		if res.Err != nil {
			m.Results[i].Code, m.Results[i].Message = podium.ErrorCode(res.Err), podium.ErrorMessage(res.Err)
			continue
		}
		m.Results[i].Seq, m.Results[i].Period, m.Results[i].Improved = res.Seq, res.Period, res.Improved
		if res.Held != nil { // review.go
			m.Results[i].Held, m.Results[i].Reason = res.Held.ID, res.Held.Reason
		}
	}
	r.Body, _ = json.Marshal(m)
	return r
}

// markerBody is the body of a status-0 idempotency record.
type markerBody struct {
	V       int            `json:"v"`
	Results []markerResult `json:"results"`
}

type markerResult struct {
	Seq      uint64 `json:"seq,omitempty"`
	Period   string `json:"period,omitempty"`
	Improved bool   `json:"improved,omitempty"`
	Code     string `json:"code,omitempty"`
	Message  string `json:"message,omitempty"`
	// Held: the review item a held score became, with its reason.
	Held   string `json:"held,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Reconstruct answers a request whose writes were committed but whose
// answer was lost (a status-0 record: podium stopped between the commit
// and storing the answer), from what the marker recorded and the current
// state: each item's own seq, period and improved flag, or its error, and
// the player's entry as it is now (rank included), with no previous entry.
// Results are marked Reconstructed. scores are the request's, in order.
func (m *Idempotency) Reconstruct(ctx context.Context, rec podium.IdempotencyRecord, scores []Score) []Result {
	var mb markerBody
	if json.Unmarshal(rec.Body, &mb) != nil || mb.V != 1 || len(mb.Results) != len(scores) {
		mb.Results = make([]markerResult, len(scores)) // an old marker: only the state is known
	}
	out := make([]Result, len(scores))
	for i, sc := range scores {
		mr := mb.Results[i]
		if mr.Code != "" {
			out[i].Err = podium.Errorf(mr.Code, "%s", mr.Message)
			continue
		}
		if mr.Held != "" { // review.go: the same pending answer
			out[i] = Result{Board: sc.Board, Period: mr.Period, Player: sc.Player, Reconstructed: true,
				Held: &podium.ReviewItem{ID: mr.Held, Board: sc.Board, Period: mr.Period, Player: sc.Player, Reason: mr.Reason, Status: podium.ReviewPending}}
			continue
		}
		page, err := m.reads.Entry(ctx, Query{Board: sc.Board, Period: mr.Period, IncludeHidden: true}, sc.Player)
		if err != nil {
			out[i].Err = err
			continue
		}
		ev := page.Entries[0]
		for _, en := range page.Entries {
			if en.Player == sc.Player {
				ev = en
			}
		}
		seq, improved := mr.Seq, mr.Improved
		if seq == 0 { // an old marker: the entry's own seq is all there is
			seq, improved = ev.Seq, true
		}
		out[i] = Result{Board: sc.Board, Period: page.Period, Player: sc.Player, Improved: improved, Seq: seq,
			Entry: ev, Reconstructed: true}
	}
	return out
}

// Finish records the answer and releases waiting duplicates.
func (c *Claim) Finish(status int, body []byte) {
	rec := c.rec
	rec.Status, rec.Body = status, body
	c.end(podium.Millis(rec.CreatedAt), reqPrefix(rec.RequestHash), &rec)
}

// release ends a claim whose writes were committed but whose answer will
// never come: duplicates then answer from the current state.
func (c *Claim) release() {
	c.end(podium.Millis(c.rec.CreatedAt), reqPrefix(c.rec.RequestHash), nil)
}

// end turns the claim into a record (with its answer to store, if any)
// and releases waiting duplicates.
func (c *Claim) end(created int64, req [16]byte, answer *podium.IdempotencyRecord) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inflight[c.fp] == c {
		delete(m.inflight, c.fp)
	}
	m.recs[c.fp] = idemRec{req: req, created: created}
	m.order = append(m.order, idemQueued{c.fp, created})
	if answer != nil {
		if old, ok := m.answers[c.fp]; ok {
			m.answersBytes -= answerBytes(&old)
		}
		m.answers[c.fp] = *answer
		m.answersBytes += answerBytes(answer)
		m.pending = append(m.pending, *answer)
	}
	close(c.done)
	m.evictLocked()
}

// Abort forgets the claim: nothing was applied.
func (c *Claim) Abort() {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inflight[c.fp] == c {
		delete(m.inflight, c.fp)
	}
	close(c.done)
}
