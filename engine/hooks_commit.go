package engine

import "github.com/podiumhq/podium"

// Hooks around a group's commit: a module with rows of its own in the
// group's transaction (feed events, tournament joins, held submissions)
// keeps them in the group's slot while the group is computed, hands them
// to the store as parts, and hears how the commit ended.
//
// Several groups may share one transaction (the committer merges what
// queued up while it was busy): PartMaker.Parts gets every group of the
// transaction, so that a module writes one part for all of them, as the
// log is one statement for all of them. The parts of a transaction are in
// registration order (a store writes a fencing part first).

// PartMaker gives the store a module's rows of the groups sharing one
// transaction (nil or empty: none).
type PartMaker interface {
	Parts(store podium.Store, gs []*Group) []podium.Part
}

// Finisher hears that a group was committed and applied (err nil), or
// failed (err: nothing of it was applied).
type Finisher interface {
	Finished(g *Group, err error)
}

// EventSink takes the activity events modules emit in a group (Group.Emit).
type EventSink interface {
	Event(g *Group, ev podium.FeedEvent)
}

// Slot returns what module m keeps with this group, nil at first. Like
// SetSlot, for the writer and, once the group is handed off, the committer.
func (g *Group) Slot(m Module) any { return g.slots[m] }

// SetSlot keeps v with this group for module m.
func (g *Group) SetSlot(m Module, v any) {
	if g.slots == nil {
		g.slots = map[Module]any{}
	}
	g.slots[m] = v
}

// Emit adds an activity event to the group, for the EventSinks (the feed).
func (g *Group) Emit(ev podium.FeedEvent) {
	for _, s := range g.e.hooks.sinks {
		s.Event(g, ev)
	}
}

// seal sets the parts of b, the batch of the groups gs that share one
// transaction: the PartMakers', in registration order.
func (e *Engine) seal(b *podium.Batch, gs []*Group) {
	clear(b.Parts)
	b.Parts = b.Parts[:0]
	for _, pm := range e.hooks.parts {
		b.Parts = append(b.Parts, pm.Parts(e.store, gs)...)
	}
}

// finished tells the Finishers how a group's commit ended.
func (h *hooks) finished(g *Group, err error) {
	for _, f := range h.finishers {
		f.Finished(g, err)
	}
}
