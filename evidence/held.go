package evidence

import (
	"context"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Evidence of held submissions (the gap between issue 9 §4 and §5). A
// held submission has no seq, so its evidence is attached under the
// item's podium.PendingEvidenceSeq, with the board's TTL; the stores
// check in the upload's transaction that the item is pending. Its
// approval's batch (ReviewDecision.Evidence, set by the review module)
// moves the attachment to the approved seq and promotes it, in the
// transaction that logs the approval, so no crash can leave an approved
// item with its evidence behind. A rejected item's evidence keeps its TTL (the
// moderator's record) and is swept with the rest.

// HeldEvidenceTarget resolves the held submission evidence is uploaded
// for: review item id of player on board, which must be pending. It
// returns the seq the evidence is stored under and the board. An unknown
// item, or one of another board or player, is ECodeNotFound (alike, so
// nothing is learnt of other players' items); a decided one
// ECodeConflict.
func (m *Module) HeldEvidenceTarget(ctx context.Context, board, player, id string) (uint64, engine.BoardInfo, error) {
	bi, err := m.eng.Board(board)
	if err != nil {
		return 0, bi, err
	}
	if _, err := m.evidenceStore(); err != nil {
		return 0, bi, err
	}
	it, err := m.HeldItem(ctx, board, player, id)
	if err != nil {
		return 0, bi, err
	}
	switch it.Status {
	case podium.ReviewPending:
		return podium.PendingEvidenceSeq(id), bi, nil
	case podium.ReviewApproved:
		return 0, bi, podium.Errorf(podium.ECodeConflict, "held submission %s was approved as seq %d: upload its evidence with seq=%d", id, it.Seq, it.Seq)
	}
	return 0, bi, podium.Errorf(podium.ECodeConflict, "held submission %s was rejected: it takes no more evidence", id)
}

// HeldItem returns review item id if it is of player on board, else
// ECodeNotFound.
func (m *Module) HeldItem(ctx context.Context, board, player, id string) (*podium.ReviewItem, error) {
	it, err := m.items.ReviewItem(ctx, id)
	if podium.ErrorCode(err) == podium.ECodeNotFound || (err == nil && (it.Board != board || it.Player != player)) {
		return nil, podium.Errorf(podium.ECodeNotFound, "board %q has no held submission %s of player %q", board, id, player)
	}
	return it, err
}

// ItemEvidence returns the unexpired evidence of a review item, nil if
// none: an approved item's is at its seq (where the approval moved it, or
// where it was uploaded after), else under its pending seq, with ReviewID
// set (a pending or rejected item's, or an approved item's the move left
// behind).
func (m *Module) ItemEvidence(ctx context.Context, it *podium.ReviewItem) (*podium.Evidence, error) {
	ev, _, err := m.itemEvidence(ctx, it, false)
	return ev, err
}

// ItemEvidenceData is ItemEvidence with the gzip bytes; ECodeNotFound if
// there is none.
func (m *Module) ItemEvidenceData(ctx context.Context, it *podium.ReviewItem) (*podium.Evidence, []byte, error) {
	ev, data, err := m.itemEvidence(ctx, it, true)
	if err == nil && ev == nil {
		err = podium.Errorf(podium.ECodeNotFound, "held submission %s has no evidence", it.ID)
	}
	return ev, data, err
}

func (m *Module) itemEvidence(ctx context.Context, it *podium.ReviewItem, withData bool) (*podium.Evidence, []byte, error) {
	es, err := m.evidenceStore()
	if err != nil {
		return nil, nil, err
	}
	now := m.host.Now()
	read := func(seq uint64) (*podium.Evidence, []byte, error) {
		if withData {
			return es.EvidenceData(ctx, it.Board, it.Player, seq, now)
		}
		ev, err := es.Evidence(ctx, it.Board, it.Player, seq, now)
		return ev, nil, err
	}
	if it.Status == podium.ReviewApproved && it.Seq > 0 {
		if ev, data, err := read(it.Seq); err != nil || ev != nil {
			return ev, data, err
		}
	}
	ev, data, err := read(podium.PendingEvidenceSeq(it.ID))
	if ev != nil {
		ev.ReviewID = it.ID
	}
	return ev, data, err
}
