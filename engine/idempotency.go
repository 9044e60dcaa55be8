package engine

import (
	"bytes"
	"context"
	"encoding/json"
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

// marker is the record stored with the claimed request's writes: status
// 0 (no answer yet) and, as its body, what the writer knows of the answer
// before the commit (each item's seq, period and whether it improved, or
// its error), so that a retry after a crash that lost the answer can say
// exactly what happened (see Reconstruct).
func (c *Claim) marker(now time.Time, results []Result) podium.IdempotencyRecord {
	r := c.entry.rec
	r.CreatedAt = now
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
func (e *Engine) Reconstruct(ctx context.Context, rec podium.IdempotencyRecord, scores []Score) []Result {
	var m markerBody
	if json.Unmarshal(rec.Body, &m) != nil || m.V != 1 || len(m.Results) != len(scores) {
		m.Results = make([]markerResult, len(scores)) // an old marker: only the state is known
	}
	out := make([]Result, len(scores))
	for i, sc := range scores {
		mr := m.Results[i]
		if mr.Code != "" {
			out[i].Err = podium.Errorf(mr.Code, "%s", mr.Message)
			continue
		}
		if mr.Held != "" { // review.go: the same pending answer
			out[i] = Result{Board: sc.Board, Period: mr.Period, Player: sc.Player, Reconstructed: true,
				Held: &podium.ReviewItem{ID: mr.Held, Board: sc.Board, Period: mr.Period, Player: sc.Player, Reason: mr.Reason, Status: podium.ReviewPending}}
			continue
		}
		page, err := e.Entry(ctx, Query{Board: sc.Board, Period: mr.Period, IncludeHidden: true}, sc.Player)
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
