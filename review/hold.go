package review

import (
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// The write path: holding a score (Hold, engine/hooks_review.go), and the
// group's rows (held items and approvals) as this module's part of the
// group's transaction.

// rows are what the module keeps with a group (Group.Slot).
type rows struct {
	held      []podium.ReviewItem     // held submissions
	decisions []podium.ReviewDecision // approvals
}

func (m *Module) rows(g *engine.Group) *rows {
	if r, ok := g.Slot(m).(*rows); ok {
		return r
	}
	r := &rows{}
	g.SetSlot(m, r)
	return r
}

// Hold holds a score, as a pending review item, when the player is frozen
// or the board's review setting matches the entry it produces. On the
// writer.
func (m *Module) Hold(g *engine.Group, c *engine.Candidate, a engine.Applied) *podium.ReviewItem {
	reason := m.holdReason(c, &a)
	if reason == "" {
		return nil
	}
	it := podium.ReviewItem{ID: newReviewID(), Board: c.Def.ID, Period: c.Period, Player: c.Player,
		Keys: append([]int64(nil), c.Keys...), SubmittedAt: g.Now().UTC().Truncate(time.Millisecond),
		Reason: reason, Status: podium.ReviewPending}
	if podium.StoredMeta(a.Meta) != nil {
		it.Meta = append([]byte(nil), a.Meta...)
	}
	r := m.rows(g)
	r.held = append(r.held, it)
	g.Signal(engine.Signal{Kind: podium.SignalReviewHeld, Board: it.Board, Cause: it.ID, At: it.SubmittedAt, Value: it})
	return &it
}

// holdReason says why a score must be held, "" if it may go on: the player
// is frozen, or the board's review setting matches the entry it produces
// (a.Next, with a.Changed false when the entry stays as it is).
func (m *Module) holdReason(c *engine.Candidate, a *engine.Applied) string {
	if m.store == nil {
		return ""
	}
	if m.isFrozen(c.Player) {
		return podium.ReasonFrozen
	}
	def := c.Def
	r := def.Review
	if r == nil {
		return ""
	}
	switch r.Hold {
	case podium.HoldAll:
		return podium.HoldAll
	case podium.HoldThreshold:
		if a.Changed && podium.CompareKeys(def.Orders(), a.Next.Keys, r.Threshold) < 0 {
			return podium.HoldThreshold
		}
	case podium.HoldTop:
		if a.Changed && wouldRankIn(c.Board, def, c.Period, a.PID, &a.Next, r.Top) {
			return podium.HoldTop
		}
	}
	return ""
}

// wouldRankIn reports whether next would rank among the first n visible
// entries of the period (0-based rank < n by CompareRank), counting the
// other players' ranked entries; the player's own entry is the one next
// replaces. Entries of groups not yet applied are not counted.
func wouldRankIn(bs *engine.BoardState, def *podium.Board, period string, pid uint32, next *podium.Entry, n int) bool {
	nth, ok := bs.NthOther(period, pid, n)
	if !ok {
		return true // fewer than n others: any entry is in the top n
	}
	k := len(def.Keys)
	return podium.CompareRank(def.Orders(), next.Keys, next.At.UnixMilli(), next.Seq, nth.Keys[:k], nth.At, nth.Seq) < 0
}

// Parts is the review part of the groups sharing one transaction: their
// held items and approvals (none: no part).
func (m *Module) Parts(_ podium.Store, gs []*engine.Group) []podium.Part {
	if m.store == nil {
		return nil
	}
	var held []podium.ReviewItem
	var decisions []podium.ReviewDecision
	for _, g := range gs {
		if r, ok := g.Slot(m).(*rows); ok {
			if len(gs) == 1 {
				held, decisions = r.held, r.decisions
				break
			}
			held = append(held, r.held...)
			decisions = append(decisions, r.decisions...)
		}
	}
	if len(held) == 0 && len(decisions) == 0 {
		return nil
	}
	return []podium.Part{m.store.ReviewPart(held, decisions)}
}
