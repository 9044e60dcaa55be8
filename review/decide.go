package review

import (
	"context"
	"errors"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Decisions. Each runs on the writer alone (engine.Exclusive): a
// rejection stores its decision where no other write to the item's board
// interleaves (Exclusive.Locked), an approval submits the held score as a
// group of its own carrying the decision (Exclusive.Submit, an
// engine.Rider), which records it with the log row it writes.

// Approve applies a pending item through the write path and records the
// decision with its log row. The entry gets the approval's time and a new
// seq: it ties behind what was accepted while it waited. A decided item is
// ErrDecided (ECodeConflict), an item of a period that has ended is
// ECodeConflict, and any error the submission would get now (a board
// deleted or changed) is returned with the item left pending.
func (m *Module) Approve(ctx context.Context, id, by, note string) (*podium.ReviewItem, engine.Result, error) {
	return m.decide(ctx, id, podium.ReviewApproved, by, note)
}

// Reject records that a pending item is not applied; the player's entry
// stays as it is. A decided item is ErrDecided.
func (m *Module) Reject(ctx context.Context, id, by, note string) (*podium.ReviewItem, error) {
	it, _, err := m.decide(ctx, id, podium.ReviewRejected, by, note)
	return it, err
}

func (m *Module) decide(ctx context.Context, id, status, by, note string) (*podium.ReviewItem, engine.Result, error) {
	if m.store == nil {
		return nil, engine.Result{}, errNoReview()
	}
	if !podium.ValidReviewID(id) {
		return nil, engine.Result{}, podium.Errorf(podium.ECodeNotFound, "no review item %q", id)
	}
	if err := podium.ValidNote(note, status == podium.ReviewRejected); err != nil {
		return nil, engine.Result{}, err
	}
	d := podium.ReviewDecision{ID: id, Status: status, By: by, Note: note}
	var (
		it  *podium.ReviewItem
		res engine.Result
	)
	if err := m.eng.Exclusive(ctx, func(x engine.Exclusive) error {
		var err error
		it, res, err = m.decideOn(x, d)
		return err
	}); err != nil {
		return nil, engine.Result{}, err
	}
	return it, res, nil
}

// pendingItem reads a decision's item and checks that it may be decided.
func (m *Module) pendingItem(ctx context.Context, id string) (*podium.ReviewItem, error) {
	it, err := m.store.ReviewItem(ctx, id)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, podium.Errorf(podium.ECodeNotFound, "no review item %q", id)
	}
	if it.Status != podium.ReviewPending {
		return nil, podium.ErrDecided
	}
	return it, nil
}

// decideOn runs a decision on the writer.
func (m *Module) decideOn(x engine.Exclusive, d podium.ReviewDecision) (*podium.ReviewItem, engine.Result, error) {
	ctx := context.Background()
	it, err := m.pendingItem(ctx, d.ID)
	if err != nil {
		return nil, engine.Result{}, err
	}
	recheck := func() error { // as of the lock (shared mode)
		_, err := m.pendingItem(ctx, d.ID)
		return err
	}
	if d.Status == podium.ReviewRejected {
		err := x.Locked(it.Board, recheck, func(commit func(*podium.Batch, ...engine.Signal) error) error {
			return m.commitDecision(d, it, commit)
		})
		if err != nil {
			return nil, engine.Result{}, err
		}
		return it, engine.Result{}, nil
	}
	bs := m.eng.Lookup(it.Board)
	if bs == nil {
		return nil, engine.Result{}, podium.BoardNotFound(it.Board)
	}
	if now := podium.PeriodAt(bs.Def().Reset, m.host.Now()).ID; now != it.Period {
		return nil, engine.Result{}, errPeriodEnded(it.Period, now)
	}
	a := &approval{m: m, d: d, it: it}
	res, err := x.Submit(engine.Score{Board: it.Board, Player: it.Player, Keys: it.Keys, Meta: it.Meta}, a, recheck)
	if err != nil {
		return nil, engine.Result{}, err
	}
	it.Status, it.DecidedAt, it.DecidedBy, it.Note, it.Seq = a.d.Status, a.d.At, a.d.By, a.d.Note, a.d.Seq
	return it, res, nil
}

// commitDecision stores a rejection, and signals it in the same commit.
func (m *Module) commitDecision(d podium.ReviewDecision, it *podium.ReviewItem, commit func(*podium.Batch, ...engine.Signal) error) error {
	d.At = m.host.Now().UTC().Truncate(time.Millisecond)
	b := &podium.Batch{Parts: []podium.Part{m.store.ReviewPart(nil, []podium.ReviewDecision{d})}}
	if err := commit(b, decided(it, &d)); err != nil {
		if errors.Is(err, podium.ErrDecided) {
			return podium.ErrDecided
		}
		m.host.Logger().Error("store a review decision", "id", d.ID, "err", err)
		return podium.Errorf(podium.ECodeUnavailable, "the database could not store the decision; nothing changed, retry later")
	}
	it.Status, it.DecidedAt, it.DecidedBy, it.Note = d.Status, d.At, d.By, d.Note
	return nil
}

func errPeriodEnded(item, now string) error {
	return podium.Errorf(podium.ECodeConflict, "the item was submitted in period %s, which has ended (now %s): it can only be rejected", item, now)
}

// decided is the signal of a decision d of the pending item it.
func decided(it *podium.ReviewItem, d *podium.ReviewDecision) engine.Signal {
	v := *it
	v.Status, v.DecidedAt, v.DecidedBy, v.Note, v.Seq = d.Status, d.At, d.By, d.Note, d.Seq
	return engine.Signal{Kind: podium.SignalReviewDecided, Board: v.Board, Cause: v.ID, At: v.DecidedAt, Value: v}
}

// approval rides on the score that applies an approved item
// (engine.Rider): the score applies only in the period it was submitted
// in, and its decision is recorded, and signalled, in the group that logs
// it.
type approval struct {
	m  *Module
	d  podium.ReviewDecision
	it *podium.ReviewItem // the item, pending
}

// Admit refuses the score once its period has ended.
func (a *approval) Admit(period string) error {
	if period != a.it.Period {
		return errPeriodEnded(a.it.Period, period)
	}
	return nil
}

// Logged records the decision with the log row the score writes.
func (a *approval) Logged(g *engine.Group, seq uint64) {
	a.d.At = g.Now().UTC().Truncate(time.Millisecond)
	a.d.Seq = seq
	a.d.Evidence = a.evidenceFollow(g)
	r := a.m.rows(g)
	r.decisions = append(r.decisions, a.d)
	g.Signal(decided(a.it, &a.d))
}

// evidenceFollow says where an approval's held evidence goes: to the
// approved seq, promoted at the approval's time to the board's retention
// (nil when the store keeps no evidence). The approval's batch carries it,
// so the move commits with the approval; the rest of evidence is a module
// (package evidence).
func (a *approval) evidenceFollow(g *engine.Group) *podium.EvidenceFollow {
	if !a.m.evidence {
		return nil
	}
	var pol *podium.EvidencePolicy
	if bs := g.Board(a.it.Board); bs != nil {
		pol = bs.Def().Evidence
	}
	return &podium.EvidenceFollow{Board: a.it.Board, Player: a.it.Player, Expires: pol.RetentionEnd(a.d.At)}
}
