package tournament

import (
	"context"

	"github.com/podiumhq/podium"
)

// The rules of changing or deleting a tournament or points board
// (engine.BoardGuard). The module is registered after the aggregates, so
// that a DELETE hears the aggregates' refusal first, as before the module
// was one; a PUT cannot be refused by both (see CheckPut).

// CheckPut refuses a change of a points board's settings while it has
// entries: they were credited under the old ones. The aggregates' guard,
// which runs first, cannot refuse such a PUT as well: a points board is a
// sum or best board (never an aggregate), and with entries its ranking and
// cadence, all an aggregate's sources are checked on, cannot change.
func (m *Module) CheckPut(b *podium.Board) error {
	bs := m.eng.Lookup(b.ID)
	if bs == nil {
		return nil
	}
	return updateAllowed(bs.Def(), b, bs.HasEntries())
}

// updateAllowed refuses a change of a points board's settings while it
// has entries.
func updateAllowed(old, next *podium.Board, hasEntries bool) error {
	if !hasEntries || old.Points == nil && next.Points == nil {
		return nil
	}
	if old.Points == nil || next.Points == nil || *old.Points != *next.Points {
		return podium.Errorf(podium.ECodeConflict, "board %q has entries: its points settings cannot change", next.ID)
	}
	return nil
}

// CheckDelete refuses to delete a tournament whose settlement has
// credited points: its payouts would go with it while the points stayed on
// the points boards, which podium check could then never reconcile. The
// way out takes the points back first: remove the entries (or hide the
// players) and settle again, which pays every unranked player 0.
func (m *Module) CheckDelete(id string) error {
	bs := m.eng.Lookup(id)
	if bs == nil || bs.Def().Tournament == nil {
		return nil
	}
	ts, err := m.tourneyStore()
	if err != nil {
		return nil // a store without tournaments keeps no payouts
	}
	pays, err := ts.Payouts(context.Background(), id)
	if err != nil {
		return m.host.StoreFailed("read payouts", err)
	}
	var players, points int64
	for _, p := range pays {
		if p.Points != 0 {
			players++
			points += p.Points
		}
	}
	if players > 0 {
		return podium.Errorf(podium.ECodeConflict, "tournament %q has credited %d points to %d players on its points boards; "+
			"remove its entries and settle it again (which takes the points back) before deleting it", id, points, players)
	}
	return nil
}
