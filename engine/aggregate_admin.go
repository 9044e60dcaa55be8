package engine

import (
	"github.com/podiumhq/podium"
)

// Board changes around aggregates: what a PUT or DELETE of a board may do
// to the aggregates that read it.
//
// An aggregate's definition is checked against its sources when it is put
// (they exist, have the same number of keys in the same orders and the
// same cadence, best_k_sum sources keep enough results, no cycle, at most
// podium.MaxAggregateDepth levels); then every entry is recomputed
// (aggRecomputeAll), so a changed definition never leaves old values
// behind. A source cannot be deleted (409) nor changed so that an
// aggregate reading it would no longer be valid (409): the aggregate would
// be silently wrong.

// aggDefs returns the definitions of the aggregate boards, from memory. A
// check of a board change needs no others: a plain board's depth is 0, and
// the sources a new aggregate names are looked up one by one (aggCheckPut).
// In shared mode the caller holds the board's lock and has applied every
// definition committed before it (metaCaughtUp): another node's aggregate
// over the board, made under that lock, is then known here (this read the
// whole boards table from the database on every PUT, a cost in the number
// of boards).
func (e *Engine) aggDefs() map[string]*podium.Board {
	list := e.kind(aggBoards)
	defs := make(map[string]*podium.Board, len(list)+1)
	for _, bs := range list {
		def := bs.def.Load()
		defs[def.ID] = def
	}
	return defs
}

// aggCheckPut checks a board about to be stored (normalized) against the
// aggregates: its own definition if it is one, and every aggregate that
// reads it.
func (e *Engine) aggCheckPut(b *podium.Board) error {
	defs := e.aggDefs()
	if b.Aggregate != nil {
		for i, s := range b.Aggregate.Sources {
			src := defs[s.Board]
			if src == nil {
				if bs := e.board(s.Board); bs != nil {
					src = bs.def.Load()
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
	if d := aggDepth(defs, b.ID, map[string]bool{}); d > podium.MaxAggregateDepth {
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
			if d := aggDepth(defs, a.ID, map[string]bool{}); d > podium.MaxAggregateDepth {
				return podium.Errorf(podium.ECodeConflict, "board %q is a source of aggregate %q, which would then read itself or nest more than %d aggregates deep", b.ID, a.ID, podium.MaxAggregateDepth)
			}
		}
	}
	return nil
}

// aggCheckDelete refuses to delete a board that an aggregate reads.
func (e *Engine) aggCheckDelete(id string) error {
	for _, a := range e.aggDefs() {
		if a.Aggregate != nil && a.ID != id && a.Aggregate.HasSource(id) {
			return podium.Errorf(podium.ECodeConflict, "board %q is a source of aggregate %q; delete the aggregate or take the board out of its sources first", id, a.ID)
		}
	}
	return nil
}

// aggPutLocks lists the boards a PUT of board id must lock besides it in
// shared mode: the sources of the aggregate it defines, so that none is
// deleted or changed while the definition is checked against it.
func aggPutLocks(u *podium.BoardUpdate, cur *podium.Board) []string {
	a := u.Aggregate
	if a == nil && cur != nil && u.Mode == nil {
		a = cur.Aggregate
	}
	if a == nil {
		return nil
	}
	var ids []string
	for _, s := range a.Sources {
		if podium.ValidBoardID(s.Board) && s.Board != u.ID {
			ids = append(ids, s.Board)
		}
	}
	return ids
}

// aggAfterPut recomputes an aggregate board after a PUT stored it, before
// the PUT is answered (UpdateBoard, when applyPutBoard set o.aggPut).
func (e *Engine) aggAfterPut(id string) error {
	err := e.aggRecomputeAll(id)
	if err == nil {
		return nil
	}
	if podium.ErrorCode(err) == podium.ECodeInternal {
		e.log.Error("recompute aggregate", "board", id, "err", err)
		return podium.Errorf(podium.ECodeUnavailable, "the board was saved, but its aggregate entries could not be computed; PUT it again to retry")
	}
	return podium.Errorf(podium.ErrorCode(err), "the board was saved, but its aggregate entries could not be computed: %s. PUT it again to retry", podium.ErrorMessage(err))
}
