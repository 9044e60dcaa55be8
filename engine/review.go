package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/podiumhq/podium"
)

// Moderation (podium/review.go): held submissions, frozen players and
// decisions.
//
// A submission is held in computeScore, on the writer, after its effect is
// computed: it is then stored as a review item in the group's batch (no
// seq, no log row, no entry change, no stream event, no feed event), and
// its answer says pending. An approval is an op of the writer: it reads
// the item where no other decision can interleave (after a barrier on a
// store of its own; under the board's lock on a shared store), checks that
// it is still pending, and submits the held score as a Score carrying the
// decision, which is stored in the same transaction as the log row it
// writes. A rejection goes the same way and stores only the decision. The
// stores refuse to decide an item that is not pending (podium.ErrDecided),
// a second fence behind the locks.
//
// Freezes are kept in memory, loaded at start and followed on the change
// feed (a ChangePlayer change for the player): a writer catches up with
// the feed before it computes (begin), so a freeze committed on one node
// holds the next submission on any node.

// EvidenceLookup returns what is known of the evidence of one submission
// (board, player, and the seq of its log row; 0 for a held submission,
// which has none yet), as a JSON object, or nil for none. The review queue
// shows what it returns as "evidence". Without a lookup (the default), the
// queue shows ItemEvidence (evidence_review.go): the evidence uploaded for
// the held item, which its approval moves to the approved seq.
type EvidenceLookup func(ctx context.Context, board, player string, seq uint64, reviewID string) ([]byte, error)

// SetEvidenceLookup sets the lookup the review queue uses (nil: none).
// Call it before Start.
func (e *Engine) SetEvidenceLookup(f EvidenceLookup) { e.rv.evidence = f }

type reviewState struct {
	store    podium.ReviewStore // nil: the store keeps no review queue
	evidence EvidenceLookup

	mu     sync.RWMutex
	frozen map[string]podium.Freeze
}

func newReviewState(st podium.Store) *reviewState {
	rs, _ := st.(podium.ReviewStore)
	return &reviewState{store: rs, frozen: map[string]podium.Freeze{}}
}

func errNoReview() error {
	return podium.Errorf(podium.ECodeUnavailable, "this store keeps no review queue")
}

// newReviewID returns "rv_" and 16 random hex digits.
func newReviewID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "rv_" + hex.EncodeToString(b[:])
}

// loadFreezes reads every freeze (at start, and after missed changes).
func (e *Engine) loadFreezes(ctx context.Context) error {
	if e.rv.store == nil {
		return nil
	}
	list, err := e.rv.store.Freezes(ctx)
	if err != nil {
		return err
	}
	m := make(map[string]podium.Freeze, len(list))
	for _, f := range list {
		m[f.Player] = f
	}
	e.rv.mu.Lock()
	e.rv.frozen = m
	e.rv.mu.Unlock()
	return nil
}

// refreshFreeze reloads one player's freeze (a ChangePlayer change).
func (e *Engine) refreshFreeze(ctx context.Context, player string) error {
	if e.rv.store == nil {
		return nil
	}
	f, err := e.rv.store.LoadFreeze(ctx, player)
	if err != nil {
		return err
	}
	e.rv.mu.Lock()
	defer e.rv.mu.Unlock()
	if f == nil {
		delete(e.rv.frozen, player)
	} else {
		e.rv.frozen[player] = *f
	}
	return nil
}

// Frozen returns a player's freeze, nil if the player is not frozen.
func (e *Engine) Frozen(player string) *podium.Freeze {
	e.rv.mu.RLock()
	defer e.rv.mu.RUnlock()
	if f, ok := e.rv.frozen[player]; ok {
		return &f
	}
	return nil
}

// Freeze freezes a player: every new submission of theirs is held. Freezing
// a frozen player again replaces the reason.
func (e *Engine) Freeze(ctx context.Context, player, by, reason string) (podium.Freeze, error) {
	if e.rv.store == nil {
		return podium.Freeze{}, errNoReview()
	}
	if err := podium.ValidPlayerRef(player); err != nil {
		return podium.Freeze{}, err
	}
	if err := podium.ValidNote(reason, false); err != nil {
		return podium.Freeze{}, err
	}
	f := podium.Freeze{Player: player, By: by, Reason: reason, At: e.now().UTC().Truncate(time.Millisecond)}
	if err := e.rv.store.PutFreeze(ctx, &f); err != nil {
		return podium.Freeze{}, err
	}
	e.rv.mu.Lock()
	e.rv.frozen[player] = f
	e.rv.mu.Unlock()
	if e.sh != nil {
		e.publishChange()
	}
	return f, nil
}

// Unfreeze ends a player's freeze; held items stay held. A player not
// frozen is ECodeNotFound.
func (e *Engine) Unfreeze(ctx context.Context, player string) error {
	if e.rv.store == nil {
		return errNoReview()
	}
	if err := e.rv.store.DeleteFreeze(ctx, player); err != nil {
		return err
	}
	e.rv.mu.Lock()
	delete(e.rv.frozen, player)
	e.rv.mu.Unlock()
	if e.sh != nil {
		e.publishChange()
	}
	return nil
}

// holdReason says why a score must be held, "" if it may go on: the player
// is frozen, or the board's review setting matches the entry it produces
// (next, with changed false when the entry stays as it is). On the writer.
func (e *Engine) holdReason(bs *BoardState, def *podium.Board, period string, pid uint32, player string, next *podium.Entry, changed bool) string {
	if e.rv.store == nil {
		return ""
	}
	e.rv.mu.RLock()
	_, frozen := e.rv.frozen[player]
	e.rv.mu.RUnlock()
	if frozen {
		return podium.ReasonFrozen
	}
	r := def.Review
	if r == nil {
		return ""
	}
	switch r.Hold {
	case podium.HoldAll:
		return podium.HoldAll
	case podium.HoldThreshold:
		if changed && podium.CompareKeys(def.Orders(), next.Keys, r.Threshold) < 0 {
			return podium.HoldThreshold
		}
	case podium.HoldTop:
		if changed && e.wouldRankIn(bs, def, period, pid, next, r.Top) {
			return podium.HoldTop
		}
	}
	return ""
}

// wouldRankIn reports whether next would rank among the first n visible
// entries of the period (0-based rank < n by CompareRank), counting the
// other players' ranked entries; the player's own entry is the one next
// replaces. Entries of groups not yet applied are not counted.
func (e *Engine) wouldRankIn(bs *BoardState, def *podium.Board, period string, pid uint32, next *podium.Entry, n int) bool {
	bs.mu.RLock()
	defer bs.mu.RUnlock()
	ps := bs.periods[period]
	if ps == nil {
		return true
	}
	at := n // the 1-based rank of the n-th best other visible entry
	if cur, ok := ps.idx.Get(pid); ok && !cur.Hidden {
		if r, _ := ps.idx.Rank(pid, false); r <= n {
			at = n + 1
		}
	}
	nth, ok := ps.idx.At(at, false)
	if !ok {
		return true // fewer than n others: any entry is in the top n
	}
	k := len(def.Keys)
	return podium.CompareRank(def.Orders(), next.Keys, next.At.UnixMilli(), next.Seq, nth.Keys[:k], nth.At, nth.Seq) < 0
}

// holdScore stores a score as a pending review item instead of applying it.
func (e *Engine) holdScore(g *Group, def *podium.Board, period string, s *Score, reason string, res *Result) {
	it := podium.ReviewItem{ID: newReviewID(), Board: def.ID, Period: period, Player: s.Player,
		Keys: append([]int64(nil), s.Keys...), SubmittedAt: g.now.UTC().Truncate(time.Millisecond),
		Reason: reason, Status: podium.ReviewPending}
	if hasMeta(s.Meta) {
		it.Meta = append([]byte(nil), s.Meta...)
	}
	g.rows.review = append(g.rows.review, it)
	*res = Result{Board: def.ID, Period: period, Player: s.Player, Held: &it}
}

// ReviewItem returns one item of the review queue; a missing one is
// ECodeNotFound.
func (e *Engine) ReviewItem(ctx context.Context, id string) (*podium.ReviewItem, error) {
	if e.rv.store == nil {
		return nil, errNoReview()
	}
	if !podium.ValidReviewID(id) {
		return nil, podium.Errorf(podium.ECodeNotFound, "no review item %q", id)
	}
	it, err := e.rv.store.ReviewItem(ctx, id)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, podium.Errorf(podium.ECodeNotFound, "no review item %q", id)
	}
	return it, nil
}

// ReviewItems lists items of the review queue.
func (e *Engine) ReviewItems(ctx context.Context, f podium.ReviewFilter) ([]podium.ReviewItem, error) {
	if e.rv.store == nil {
		return nil, errNoReview()
	}
	return e.rv.store.ReviewItems(ctx, f)
}

// History returns a player's logged submissions on a board, newest first,
// with a seq below before (0: from the newest), in every period the board
// has entries in (and the current one). A period whose every entry an
// admin deleted is not listed. resume is what the store says when it
// stopped looking short of limit rows (podium.ReviewStore.History).
func (e *Engine) History(ctx context.Context, board, player string, before uint64, limit int) (rows []podium.HistoryRow, resume uint64, err error) {
	if e.rv.store == nil {
		return nil, 0, errNoReview()
	}
	bs := e.board(board)
	if bs == nil {
		return nil, 0, errBoardNotFound(board)
	}
	periods := []string{podium.PeriodAt(bs.def.Load().Reset, e.now()).ID}
	bs.mu.RLock()
	for id := range bs.periods {
		periods = append(periods, id)
	}
	for id := range bs.known {
		periods = append(periods, id)
	}
	bs.mu.RUnlock()
	slices.Sort(periods)
	return e.rv.store.History(ctx, board, player, slices.Compact(periods), before, limit)
}

// ReviewEvidence returns what the lookup set with SetEvidenceLookup says
// of an item's evidence; ok is false without a lookup.
func (e *Engine) ReviewEvidence(ctx context.Context, board, player string, seq uint64, reviewID string) (doc []byte, ok bool, err error) {
	if e.rv.evidence == nil {
		return nil, false, nil
	}
	doc, err = e.rv.evidence(ctx, board, player, seq, reviewID)
	return doc, true, err
}

// decideOp is what an opDecide carries.
type decideOp struct {
	dec  podium.ReviewDecision
	item *podium.ReviewItem // the item as decided
}

// Approve applies a pending item through the write path and records the
// decision with its log row. The entry gets the approval's time and a new
// seq: it ties behind what was accepted while it waited. A decided item is
// ErrDecided (ECodeConflict), an item of a period that has ended is
// ECodeConflict, and any error the submission would get now (a board
// deleted or changed) is returned with the item left pending.
func (e *Engine) Approve(ctx context.Context, id, by, note string) (*podium.ReviewItem, Result, error) {
	o, err := e.decide(ctx, id, podium.ReviewApproved, by, note)
	if err != nil {
		return nil, Result{}, err
	}
	return o.decide().item, o.results[0], nil
}

// Reject records that a pending item is not applied; the player's entry
// stays as it is. A decided item is ErrDecided.
func (e *Engine) Reject(ctx context.Context, id, by, note string) (*podium.ReviewItem, error) {
	o, err := e.decide(ctx, id, podium.ReviewRejected, by, note)
	if err != nil {
		return nil, err
	}
	return o.decide().item, nil
}

func (e *Engine) decide(ctx context.Context, id, status, by, note string) (*op, error) {
	if e.rv.store == nil {
		return nil, errNoReview()
	}
	if !podium.ValidReviewID(id) {
		return nil, podium.Errorf(podium.ECodeNotFound, "no review item %q", id)
	}
	if err := podium.ValidNote(note, status == podium.ReviewRejected); err != nil {
		return nil, err
	}
	o := &op{kind: opDecide, p: &decideOp{dec: podium.ReviewDecision{ID: id, Status: status, By: by, Note: note}}}
	if err := e.send(ctx, o); err != nil {
		return nil, err
	}
	return o, nil
}

// pendingItem reads a decision's item and checks that it may be decided.
func (e *Engine) pendingItem(ctx context.Context, d *decideOp) (*podium.ReviewItem, error) {
	it, err := e.rv.store.ReviewItem(ctx, d.dec.ID)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, podium.Errorf(podium.ECodeNotFound, "no review item %q", d.dec.ID)
	}
	if it.Status != podium.ReviewPending {
		return nil, podium.ErrDecided
	}
	return it, nil
}

// applyDecide runs a decision on a store of its own, behind a barrier: no
// other decision or group is in flight.
func (e *Engine) applyDecide(o *op) {
	ctx := context.Background()
	it, err := e.pendingItem(ctx, o.decide())
	if err != nil {
		o.err = err
		return
	}
	if o.decide().dec.Status == podium.ReviewRejected {
		o.err = e.commitDecision(ctx, o, it, func(b *podium.Batch) error { return e.store.Commit(ctx, b) })
		return
	}
	inner, err := e.approvalOp(o, it)
	if err != nil {
		o.err = err
		return
	}
	inner.done = make(chan struct{})
	e.computeGroup([]*op{inner})
	e.barrier()
	e.finishApproval(o, inner, it)
}

// commitDecision stores a rejection.
func (e *Engine) commitDecision(ctx context.Context, o *op, it *podium.ReviewItem, commit func(*podium.Batch) error) error {
	d := o.decide().dec
	d.At = e.now().UTC().Truncate(time.Millisecond)
	if err := commit(&podium.Batch{Parts: []podium.Part{e.rv.store.ReviewPart(nil, []podium.ReviewDecision{d})}}); err != nil {
		if errors.Is(err, podium.ErrDecided) {
			return podium.ErrDecided
		}
		e.log.Error("store a review decision", "id", d.ID, "err", err)
		return podium.Errorf(podium.ECodeUnavailable, "the database could not store the decision; nothing changed, retry later")
	}
	it.Status, it.DecidedAt, it.DecidedBy, it.Note = d.Status, d.At, d.By, d.Note
	o.decide().item = it
	return nil
}

// approvalOp is the score op that applies an approved item.
func (e *Engine) approvalOp(o *op, it *podium.ReviewItem) (*op, error) {
	bs := e.board(it.Board)
	if bs == nil {
		return nil, errBoardNotFound(it.Board)
	}
	def := bs.def.Load()
	if now := podium.PeriodAt(def.Reset, e.now()).ID; now != it.Period {
		return nil, errPeriodEnded(it.Period, now)
	}
	d := o.decide().dec
	sc := Score{Board: it.Board, Player: it.Player, Keys: it.Keys, Meta: it.Meta, approval: &d, approvalPeriod: it.Period}
	return &op{kind: opScores, single: true, scores: []Score{sc}, results: make([]Result, 1)}, nil
}

func errPeriodEnded(item, now string) error {
	return podium.Errorf(podium.ECodeConflict, "the item was submitted in period %s, which has ended (now %s): it can only be rejected", item, now)
}

// finishApproval answers an approval from the score op that applied it.
func (e *Engine) finishApproval(o, inner *op, it *podium.ReviewItem) {
	<-inner.done
	if inner.err != nil {
		o.err = inner.err
		return
	}
	d := inner.scores[0].approval
	it.Status, it.DecidedAt, it.DecidedBy, it.Note, it.Seq = d.Status, d.At, d.By, d.Note, d.Seq
	o.decide().item = it
	o.results = inner.results
}

// sharedDecide runs a decision on a shared store, under the lock of the
// item's board (and of the aggregates an approval moves): decisions of one
// item on several nodes take turns, and the second finds it decided.
func (e *Engine) sharedDecide(ctx context.Context, o *op) {
	it, err := e.pendingItem(ctx, o.decide())
	if err != nil {
		o.err = err
		return
	}
	if o.decide().dec.Status == podium.ReviewRejected {
		o.err = e.lockedMeta(ctx, it.Board, func(tx podium.WriteTx) error {
			it, err := e.pendingItem(ctx, o.decide()) // as of the lock
			if err != nil {
				return err
			}
			return e.commitDecision(ctx, o, it, func(b *podium.Batch) error { return tx.Commit(ctx, b) })
		})
		return
	}
	inner, err := e.approvalOp(o, it)
	if err != nil {
		o.err = err
		return
	}
	inner.done = make(chan struct{})
	e.sharedGroup(ctx, []*op{inner}, func() error {
		_, err := e.pendingItem(ctx, o.decide()) // as of the lock
		return err
	})
	e.finishApproval(o, inner, it)
}

// approve, in computeScore, records an approval's decision with the log
// row it writes.
func (e *Engine) approve(g *Group, s *Score, seq uint64) {
	s.approval.At = g.now.UTC().Truncate(time.Millisecond)
	s.approval.Seq = seq
	s.approval.Evidence = e.evidenceFollow(s) // evidence_review.go
	g.rows.decisions = append(g.rows.decisions, *s.approval)
}
