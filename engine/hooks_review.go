package engine

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
)

// Hooks of moderation (the review module, package review): holding a score
// instead of applying it, a decision riding on the score that applies a
// held one, and work of a module that runs on the writer alone.
//
// In computeScore, for a score a client sent (not one a module submits
// with a Rider, nor an internal one of Group.SubmitInternal: a
// settlement's credit), once podium.Apply has computed
// what it does to the player's entry and before any Effect derives from
// it, each Holder in registration order may hold it: the first that
// returns an item wins, and the core then logs nothing of the score (no
// seq, no log row, no entry change, no Gate's Logged, no feed event) and
// answers Result.Held. The Holder keeps the item in the group's slot and
// writes it through its PartMaker.
//
// A score a module submits with Exclusive.Submit carries a Rider: its
// Admit runs with the core's checks, once the score's period is known
// (before the tournament's), and its Logged once the score is logged
// (after the Gates' Logged, before a tournament join), so that what it
// records (an approval) goes in the same group as the log row.

// Holder may hold a score instead of applying it.
type Holder interface {
	// Hold returns the item the score is held as, nil to let it go on.
	// (a is passed by value: the score's entry stays on the stack.)
	Hold(g *Group, c *Candidate, a Applied) *podium.ReviewItem
}

// Applied is what a score does to its player's entry, as a Holder sees it.
type Applied struct {
	PID     uint32          // the player's interned id
	Meta    json.RawMessage // the score's meta, as sent
	Next    podium.Entry    // the entry after the score
	Changed bool            // false: the entry stays as it is
}

// Rider rides on a score a module submits (Exclusive.Submit): the core
// never asks a Holder about the score.
type Rider interface {
	// Admit refuses the score in period, the period it would go in.
	Admit(period string) error
	// Logged hears that the score is logged in g with seq.
	Logged(g *Group, seq uint64)
}

// hold asks the Holders about a score; nil: it goes on.
func (h *hooks) hold(g *Group, c *Candidate, a Applied) *podium.ReviewItem {
	for _, x := range h.holders {
		if it := x.Hold(g, c, a); it != nil {
			return it
		}
	}
	return nil
}

// Exclusive is what a function run by Engine.Exclusive does its writes
// with: on the writer, with no group of this node in flight.
type Exclusive struct{ e *Engine }

// Exclusive runs fn on the writer once every group handed to the commit
// is applied, as a board change runs, and returns its error. Unlike Steps
// it is one piece of work; its writes go through x, which knows how this
// engine commits (a store of its own, or a shared one).
func (e *Engine) Exclusive(ctx context.Context, fn func(x Exclusive) error) error {
	var err error
	o := &op{kind: opFunc, p: func() { err = fn(Exclusive{e}) }}
	if serr := e.send(ctx, o); serr != nil {
		return serr
	}
	return err
}

// Locked runs fn where no other write to board can interleave: at once on
// a store of its own (the writer is alone, and nothing can have changed
// since the function began), and in shared mode inside a transaction that
// holds the board's lock and has caught up with it, after check (nil:
// none; its error is returned) and followed, if fn succeeds, by telling the
// other nodes that the change feed moved. commit stores a batch (its
// parts, made by the store) in that transaction, with the SignalSinks'
// parts for the signals ss the batch's change causes (hooks_signal.go).
func (x Exclusive) Locked(board string, check func() error, fn func(commit func(b *podium.Batch, ss ...Signal) error) error) error {
	e, ctx := x.e, context.Background()
	if e.sh == nil {
		return fn(func(b *podium.Batch, ss ...Signal) error {
			return e.commitSignalled(func(b *podium.Batch) error { return e.store.Commit(ctx, b) }, b, ss)
		})
	}
	return e.sh.lockedMeta(ctx, board, func(tx podium.WriteTx) error {
		if check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		return fn(func(b *podium.Batch, ss ...Signal) error {
			return e.commitSignalled(func(b *podium.Batch) error { return tx.Commit(ctx, b) }, b, ss)
		})
	})
}

// Submit applies one score as a group of its own, carrying rider, and
// answers once it is committed and applied (a single submit: the score's
// error is the error). In shared mode check (nil: none) runs once the
// group's boards are locked and caught up with, before the group is
// computed, and its error fails the group; on a store of its own nothing
// can have changed since the function began.
func (x Exclusive) Submit(s Score, rider Rider, check func() error) (Result, error) {
	e := x.e
	s.rider = rider
	o := &op{kind: opScores, single: true, scores: []Score{s}, results: make([]Result, 1), done: make(chan struct{})}
	if e.sh == nil {
		e.computeGroup([]*op{o})
		e.pl.barrier()
	} else {
		var checks []func() error
		if check != nil {
			checks = append(checks, check)
		}
		e.sh.groupChecked(context.Background(), []*op{o}, checks...)
	}
	<-o.done
	if o.err != nil {
		return Result{}, o.err
	}
	return o.results[0], nil
}

// NthOther returns the n-th best visible entry (1-based, by rank) of a
// period of the board, not counting player pid's own entry: ok is false
// when there are fewer others (or no such period in memory). Entries of
// groups not yet applied are not counted.
func (bs *BoardState) NthOther(period string, pid uint32, n int) (en rank.Entry, ok bool) {
	bs.mu.RLock()
	defer bs.mu.RUnlock()
	ps := bs.periods[period]
	if ps == nil {
		return en, false
	}
	at := n // the 1-based rank of the n-th best other visible entry
	if cur, ok := ps.idx.Get(pid); ok && !cur.Hidden {
		if r, _ := ps.idx.Rank(pid, false); r <= n {
			at = n + 1
		}
	}
	return ps.idx.At(at, false)
}

// PeriodIDs returns the ids of the board's periods in memory or known to
// have entries in the store, sorted.
func (bs *BoardState) PeriodIDs() []string {
	var ids []string
	bs.mu.RLock()
	for id := range bs.periods {
		ids = append(ids, id)
	}
	for id := range bs.known {
		ids = append(ids, id)
	}
	bs.mu.RUnlock()
	slices.Sort(ids)
	return slices.Compact(ids)
}
