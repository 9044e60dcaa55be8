package aggregate

import (
	"context"

	"github.com/podiumhq/podium"
)

// CheckPut checks a board about to be stored (normalized) against the
// aggregates: its own definition if it is one, and every aggregate that
// reads it. The aggregates' definitions come from memory: a check of a
// board change needs no others (a plain board's depth is 0, and the
// sources a new aggregate names are looked up one by one). In shared mode
// the core holds the board's lock and has applied every definition
// committed before it, so another node's aggregate over the board, made
// under that lock, is known here (this read the whole boards table from the
// database on every PUT, a cost in the number of boards).
func (m *Module) CheckPut(b *podium.Board) error {
	defs := m.eng.AggregateDefs()
	if b.Aggregate != nil {
		for i, s := range b.Aggregate.Sources {
			src := defs[s.Board]
			if src == nil {
				if bs := m.eng.Lookup(s.Board); bs != nil {
					src = bs.Def()
				}
			}
			if src == nil {
				return podium.Errorf(podium.ECodeInvalid, "aggregate.sources[%d]: board %q does not exist", i, s.Board)
			}
			if err := b.ValidateSource(i, src); err != nil {
				return err
			}
		}
	}
	defs[b.ID] = b
	if d := podium.AggregateDepth(defs, b.ID); d > podium.MaxAggregateDepth {
		return podium.Errorf(podium.ECodeInvalid, "aggregate %q would read itself through its sources, or nest more than %d aggregates deep", b.ID, podium.MaxAggregateDepth)
	}
	for _, a := range defs {
		if a.Aggregate == nil || a.ID == b.ID {
			continue
		}
		for i, s := range a.Aggregate.Sources {
			if s.Board != b.ID {
				continue
			}
			if err := a.ValidateSource(i, b); err != nil {
				return podium.Errorf(podium.ECodeConflict, "board %q is a source of aggregate %q, which this change would break (%s); change or delete the aggregate first", b.ID, a.ID, podium.ErrorMessage(err))
			}
			if d := podium.AggregateDepth(defs, a.ID); d > podium.MaxAggregateDepth {
				return podium.Errorf(podium.ECodeConflict, "board %q is a source of aggregate %q, which would then read itself or nest more than %d aggregates deep", b.ID, a.ID, podium.MaxAggregateDepth)
			}
		}
	}
	return nil
}

// CheckDelete refuses to delete a board that an aggregate reads.
func (m *Module) CheckDelete(id string) error {
	for _, a := range m.eng.AggregateDefs() {
		if a.Aggregate != nil && a.ID != id && a.Aggregate.HasSource(id) {
			return podium.Errorf(podium.ECodeConflict, "board %q is a source of aggregate %q; delete the aggregate or take the board out of its sources first", id, a.ID)
		}
	}
	return nil
}

// BoardPut recomputes an aggregate board after a PUT stored it, before the
// PUT is answered.
func (m *Module) BoardPut(ctx context.Context, def *podium.Board) error {
	if def.Aggregate == nil {
		return nil
	}
	err := m.recomputeAll(def.ID)
	if err == nil {
		return nil
	}
	if podium.ErrorCode(err) == podium.ECodeInternal {
		m.log.Error("recompute aggregate", "board", def.ID, "err", err)
		return podium.Errorf(podium.ECodeUnavailable, "the board was saved, but its aggregate entries could not be computed; PUT it again to retry")
	}
	return podium.Errorf(podium.ErrorCode(err), "the board was saved, but its aggregate entries could not be computed: %s. PUT it again to retry", podium.ErrorMessage(err))
}
