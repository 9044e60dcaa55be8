package engine

import (
	"slices"
	"time"

	"github.com/podiumhq/podium"
)

// Signals: a module announces a change of its own (a score held for
// review, a held score decided) so that other modules can store something
// about it in the same commit (the webhooks module's outbox rows), without
// either module importing the other. A signal is not an activity event
// (Group.Emit): the feed never hears it, so nothing of it reaches the
// public feed.
//
// In a group, Group.Signal hands it at once, on the writer, to each
// SignalSink in registration order; a sink keeps what it makes of it in
// the group's slot and stores it through its PartMaker, so that it
// commits with the group or not at all (Finisher hears which). Outside a
// group, a module's own batch (the commit Exclusive.Locked hands it)
// carries the signals its change causes: each sink adds its parts to that
// batch and hears, once the transaction has committed, that they are
// stored.

// Signal is a change a module announces.
type Signal struct {
	// Kind names what happened: the signalling module's constant, agreed
	// through package podium (podium.SignalReviewHeld, ...).
	Kind string
	// Board is the board the change is about.
	Board string
	// Cause identifies the change among those of its kind on the board,
	// the same on every node that could store it (a review item's id).
	Cause string
	// At is when the change happened.
	At time.Time
	// Value is what the kind says it carries (a podium.ReviewItem for the
	// review kinds); a sink must not change it.
	Value any
}

// SignalSink takes the signals modules announce.
type SignalSink interface {
	// Signal hears a signal announced in group g, on the writer (a sink
	// must not keep s).
	Signal(g *Group, s *Signal)
	// SignalParts returns the sink's parts for signals stored by a batch
	// outside any group, and stored (nil: none), which the core calls
	// once that batch has committed.
	SignalParts(store podium.Store, ss []Signal) (parts []podium.Part, stored func())
}

// Signal announces a change in this group, for the SignalSinks.
func (g *Group) Signal(s Signal) {
	for _, x := range g.e.hooks.signals {
		x.Signal(g, &s)
	}
}

// commitSignalled stores b with the sinks' parts for ss through commit,
// which writes a batch and commits its transaction (Exclusive.Locked's),
// and tells the sinks once it has.
func (e *Engine) commitSignalled(commit func(*podium.Batch) error, b *podium.Batch, ss []Signal) error {
	if len(ss) == 0 || len(e.hooks.signals) == 0 {
		return commit(b)
	}
	nb := *b // the caller's batch stays as it is
	nb.Parts = slices.Clip(b.Parts)
	var stored []func()
	for _, x := range e.hooks.signals {
		parts, done := x.SignalParts(e.store, ss)
		nb.Parts = append(nb.Parts, parts...)
		if done != nil {
			stored = append(stored, done)
		}
	}
	if err := commit(&nb); err != nil {
		return err
	}
	for _, f := range stored {
		f()
	}
	return nil
}
