package review

import (
	"context"
	"slices"

	"github.com/podiumhq/podium"
)

// Reads of moderation: the review queue and a player's history.

// ReviewItem returns one item of the review queue; a missing one is
// ECodeNotFound.
func (m *Module) ReviewItem(ctx context.Context, id string) (*podium.ReviewItem, error) {
	if m.store == nil {
		return nil, errNoReview()
	}
	if !podium.ValidReviewID(id) {
		return nil, podium.Errorf(podium.ECodeNotFound, "no review item %q", id)
	}
	it, err := m.store.ReviewItem(ctx, id)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, podium.Errorf(podium.ECodeNotFound, "no review item %q", id)
	}
	return it, nil
}

// ReviewItems lists items of the review queue.
func (m *Module) ReviewItems(ctx context.Context, f podium.ReviewFilter) ([]podium.ReviewItem, error) {
	if m.store == nil {
		return nil, errNoReview()
	}
	return m.store.ReviewItems(ctx, f)
}

// History returns a player's logged submissions on a board, newest first,
// with a seq below before (0: from the newest), in every period the board
// has entries in (and the current one), but for those past its
// keep_periods. A period whose every entry an admin deleted is not listed. resume is what the store says when it
// stopped looking short of limit rows (podium.ReviewStore.History).
func (m *Module) History(ctx context.Context, board, player string, before uint64, limit int) (rows []podium.HistoryRow, resume uint64, err error) {
	if m.store == nil {
		return nil, 0, errNoReview()
	}
	bs := m.eng.Lookup(board)
	if bs == nil {
		return nil, 0, podium.BoardNotFound(board)
	}
	def, now := bs.Def(), m.host.Now()
	periods := append([]string{podium.PeriodAt(def.Reset, now).ID}, bs.PeriodIDs()...)
	// A period past keep_periods is gone for readers at once, before the
	// sweep deletes its log rows (docs/API.md, "Period retention").
	periods = slices.DeleteFunc(periods, func(p string) bool { return def.PeriodExpired(now, p) })
	slices.Sort(periods)
	return m.store.History(ctx, board, player, slices.Compact(periods), before, limit)
}

// ReviewEvidence returns what the lookup set with SetEvidenceLookup says
// of an item's evidence; ok is false without a lookup.
func (m *Module) ReviewEvidence(ctx context.Context, board, player string, seq uint64, reviewID string) (doc []byte, ok bool, err error) {
	if m.lookup == nil {
		return nil, false, nil
	}
	doc, err = m.lookup(ctx, board, player, seq, reviewID)
	return doc, true, err
}
