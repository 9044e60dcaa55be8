package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/podiumhq/podium"
)

// Evidence of held submissions: an attachment under the item's
// podium.PendingEvidenceSeq in the evidence table, moved to the approval's
// log row in the approval's transaction (docs/ARCHITECTURE.md,
// "Evidence of held submissions").

// evidenceTarget checks, in PutEvidence's transaction, what ev is for: a
// logged score of its player, or (ReviewID set) a pending item of its
// board and player. The one write connection orders it against the
// item's decision.
func evidenceTarget(ctx context.Context, tx *sql.Tx, ev *podium.Evidence) error {
	if ev.ReviewID == "" {
		var owner string
		err := tx.QueryRowContext(ctx, "SELECT player FROM submissions WHERE board = ? AND seq = ? AND substr(rec, 1, 1) = x'00'", ev.Board, int64(ev.Seq)).Scan(&owner)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && owner != ev.Player) {
			return podium.Errorf(podium.ECodeEntryNotFound, "board %q has no submission %d of player %q", ev.Board, ev.Seq, ev.Player)
		}
		if err != nil {
			return fmt.Errorf("put evidence: %w", err)
		}
		return nil
	}
	if ev.Seq != podium.PendingEvidenceSeq(ev.ReviewID) {
		return podium.Errorf(podium.ECodeInvalid, "the evidence of held submission %q must be stored under its pending seq", ev.ReviewID)
	}
	var board, player, status string
	err := tx.QueryRowContext(ctx, "SELECT board, player, status FROM review_items WHERE id = ?", ev.ReviewID).Scan(&board, &player, &status)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && (board != ev.Board || player != ev.Player)) {
		return podium.Errorf(podium.ECodeNotFound, "board %q has no held submission %s of player %q", ev.Board, ev.ReviewID, ev.Player)
	}
	if err != nil {
		return fmt.Errorf("put evidence: %w", err)
	}
	if status != podium.ReviewPending {
		return podium.ErrDecided
	}
	return nil
}

// followEvidence moves the evidence of an approved item to the log row
// its approval wrote, promoted, in the approval's transaction. Only an
// expired attachment can be in the way (a board deleted and made again
// restarts its seqs; deleting it expired its evidence): it goes first.
// An unexpired one there would be left alone, and the item's evidence
// stays under its pending seq, where reads of the item still find it.
func followEvidence(ctx context.Context, tx *sql.Tx, d *podium.ReviewDecision) error {
	f, now, to := d.Evidence, podium.Millis(d.At), int64(d.Seq)
	if _, err := dropAttachments(ctx, tx, "board = ? AND player = ? AND seq = ? AND expires_ms IS NOT NULL AND expires_ms <= ?",
		f.Board, f.Player, to, now); err != nil {
		return fmt.Errorf("move evidence of %s: %w", d.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE evidence SET seq = ?, promoted_ms = ?, expires_ms = ?
		WHERE board = ? AND player = ? AND seq = ? AND (expires_ms IS NULL OR expires_ms > ?)
		AND NOT EXISTS (SELECT 1 FROM evidence WHERE board = ? AND player = ? AND seq = ?)`,
		to, now, nullMillis(f.Expires), f.Board, f.Player, int64(podium.PendingEvidenceSeq(d.ID)), now, f.Board, f.Player, to); err != nil {
		return fmt.Errorf("move evidence of %s: %w", d.ID, err)
	}
	return nil
}
