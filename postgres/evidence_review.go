package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/podiumhq/podium"
)

// Evidence of held submissions: an attachment under the item's
// podium.PendingEvidenceSeq in the evidence table, moved to the approval's
// log row in the approval's transaction by podium_evidence_follow
// (migration 0091; docs/ARCHITECTURE.md, "Evidence of held submissions").

// evidenceTarget checks, in PutEvidence's transaction, what ev is for: a
// logged score of its player, or (ReviewID set) a pending item of its
// board and player. The item's row is locked FOR SHARE until the upload
// commits: a decision (podium_review_decide updates the row) waits for
// it, then moves what it stored; an upload after the decision waits for
// the decision and finds the item decided.
func evidenceTarget(ctx context.Context, tx pgx.Tx, ev *podium.Evidence) error {
	if ev.ReviewID == "" {
		var owner string
		err := tx.QueryRow(ctx, "SELECT player FROM submissions WHERE board = $1 AND seq = $2 AND kind = 0", ev.Board, int64(ev.Seq)).Scan(&owner)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && owner != ev.Player) {
			return podium.Errorf(podium.ECodeEntryNotFound, "board %q has no submission %d of player %q", ev.Board, ev.Seq, ev.Player)
		}
		return err
	}
	if ev.Seq != podium.PendingEvidenceSeq(ev.ReviewID) {
		return podium.Errorf(podium.ECodeInvalid, "the evidence of held submission %q must be stored under its pending seq", ev.ReviewID)
	}
	var board, player, status string
	err := tx.QueryRow(ctx, "SELECT board, player, status FROM review_items WHERE id = $1 FOR SHARE", ev.ReviewID).Scan(&board, &player, &status)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && (board != ev.Board || player != ev.Player)) {
		return podium.Errorf(podium.ECodeNotFound, "board %q has no held submission %s of player %q", ev.Board, ev.ReviewID, ev.Player)
	}
	if err != nil {
		return err
	}
	if status != podium.ReviewPending {
		return podium.ErrDecided
	}
	return nil
}

// followEvidence queues the move of approved items' evidence to the log
// rows their approvals wrote, after podium_review_decide in the same
// transaction.
func (w *writer) followEvidence(pb *pgconn.Batch, decs []podium.ReviewDecision) {
	type row struct {
		B string `json:"b"`
		P string `json:"p"`
		F int64  `json:"f"`
		T int64  `json:"t"`
		N int64  `json:"n"`
		E *int64 `json:"e"`
	}
	var rows []row
	for i := range decs {
		d := &decs[i]
		if d.Evidence == nil || d.Status != podium.ReviewApproved || d.Seq == 0 {
			continue
		}
		rows = append(rows, row{B: d.Evidence.Board, P: d.Evidence.Player, F: int64(podium.PendingEvidenceSeq(d.ID)),
			T: int64(d.Seq), N: podium.Millis(d.At), E: nullMillis(d.Evidence.Expires)})
	}
	if len(rows) > 0 {
		w.jsonRows(pb, "SELECT podium_evidence_follow($1::jsonb)", rows)
	}
}
