package engine

import (
	"context"

	"github.com/podiumhq/podium"
)

// Evidence of held submissions (the gap between issue 9 §4 and §5). A
// held submission has no seq, so its evidence is attached under the
// item's podium.PendingEvidenceSeq, with the board's TTL; the stores
// check in the upload's transaction that the item is pending. Its
// approval's batch (ReviewDecision.Evidence, set in approve) moves the
// attachment to the approved seq and promotes it, in the transaction that
// logs the approval, so no crash can leave an approved item with its
// evidence behind. A rejected item's evidence keeps its TTL (the
// moderator's record) and is swept with the rest.

// HeldEvidenceTarget resolves the held submission evidence is uploaded
// for: review item id of player on board, which must be pending. It
// returns the seq the evidence is stored under and the board. An unknown
// item, or one of another board or player, is ECodeNotFound (alike, so
// nothing is learnt of other players' items); a decided one
// ECodeConflict.
func (e *Engine) HeldEvidenceTarget(ctx context.Context, board, player, id string) (uint64, BoardInfo, error) {
	bi, err := e.Board(board)
	if err != nil {
		return 0, bi, err
	}
	if _, err := e.evidenceStore(); err != nil {
		return 0, bi, err
	}
	it, err := e.HeldItem(ctx, board, player, id)
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
func (e *Engine) HeldItem(ctx context.Context, board, player, id string) (*podium.ReviewItem, error) {
	it, err := e.ReviewItem(ctx, id)
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
func (e *Engine) ItemEvidence(ctx context.Context, it *podium.ReviewItem) (*podium.Evidence, error) {
	ev, _, err := e.itemEvidence(ctx, it, false)
	return ev, err
}

// ItemEvidenceData is ItemEvidence with the gzip bytes; ECodeNotFound if
// there is none.
func (e *Engine) ItemEvidenceData(ctx context.Context, it *podium.ReviewItem) (*podium.Evidence, []byte, error) {
	ev, data, err := e.itemEvidence(ctx, it, true)
	if err == nil && ev == nil {
		err = podium.Errorf(podium.ECodeNotFound, "held submission %s has no evidence", it.ID)
	}
	return ev, data, err
}

func (e *Engine) itemEvidence(ctx context.Context, it *podium.ReviewItem, withData bool) (*podium.Evidence, []byte, error) {
	es, err := e.evidenceStore()
	if err != nil {
		return nil, nil, err
	}
	now := e.now()
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

// evidenceFollow says where an approval's held evidence goes: to the
// approved seq, promoted at the approval's time to the board's retention
// (nil when the store keeps no evidence). On the writer.
func (e *Engine) evidenceFollow(s *Score) *podium.EvidenceFollow {
	if e.ev == nil || e.ev.store == nil {
		return nil
	}
	var pol *podium.EvidencePolicy
	if bs := e.board(s.Board); bs != nil {
		pol = bs.def.Load().Evidence
	}
	return &podium.EvidenceFollow{Board: s.Board, Player: s.Player, Expires: retentionEnd(s.approval.At, pol)}
}
