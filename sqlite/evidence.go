package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

var _ podium.EvidenceStore = (*Store)(nil)

// evidenceRows is the Store's evidence uploads (podium.EvidenceStore).
type evidenceRows struct{ *Store }

// Evidence uploads (podium.EvidenceStore): content once per player in
// evidence_content, attachments in evidence (migration 0080). The writes
// go through the one write connection, so an upload and the sweeper never
// interleave.

func scanEvidence(r rowScanner, extra ...any) (*podium.Evidence, error) {
	var (
		ev                podium.Evidence
		seq, created      int64 // seq: a PendingEvidenceSeq is negative as int64
		expires, promoted sql.NullInt64
	)
	dest := append([]any{&ev.Board, &ev.Player, &seq, &ev.ContentSHA256, &ev.CompressedSHA256, &ev.Bytes, &ev.InflatedBytes,
		&ev.Events, &created, &expires, &promoted}, extra...)
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	ev.Seq, ev.CreatedAt = uint64(seq), podium.FromMillis(created)
	if expires.Valid {
		ev.ExpiresAt = podium.FromMillis(expires.Int64)
	}
	if promoted.Valid {
		ev.PromotedAt = podium.FromMillis(promoted.Int64)
	}
	return &ev, nil
}

// SubmissionPlayer returns the player and period of a logged submission.
func (s evidenceRows) SubmissionPlayer(ctx context.Context, board string, seq uint64) (string, string, bool, error) {
	var player, period string
	err := s.r.QueryRowContext(ctx, "SELECT player, period FROM submissions WHERE board = ? AND seq = ? AND substr(rec, 1, 1) = x'00'", board, int64(seq)).Scan(&player, &period)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("submission player: %w", err)
	}
	return player, period, true, nil
}

// Evidence returns the unexpired evidence of a submission, nil if none.
func (s evidenceRows) Evidence(ctx context.Context, board, player string, seq uint64, now time.Time) (*podium.Evidence, error) {
	ev, err := scanEvidence(s.r.QueryRowContext(ctx, sqlstore.Evidence.SQLite, board, player, int64(seq), podium.Millis(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	return ev, nil
}

// EvidenceData returns the unexpired evidence of a submission with its
// bytes.
func (s evidenceRows) EvidenceData(ctx context.Context, board, player string, seq uint64, now time.Time) (*podium.Evidence, []byte, error) {
	var data []byte
	ev, err := scanEvidence(s.r.QueryRowContext(ctx, sqlstore.EvidenceData.SQLite, board, player, int64(seq), podium.Millis(now)), &data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("evidence data: %w", err)
	}
	return ev, data, nil
}

// PlayerContent returns the compressed hash of a player's stored content.
func (s evidenceRows) PlayerContent(ctx context.Context, player, content string) (string, bool, error) {
	var comp string
	err := s.r.QueryRowContext(ctx, sqlstore.PlayerContent.SQLite, player, content).Scan(&comp)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("player content: %w", err)
	}
	return comp, true, nil
}

// PutEvidence attaches evidence to a submission (podium.EvidenceStore).
func (s evidenceRows) PutEvidence(ctx context.Context, ev *podium.Evidence, data []byte, now time.Time) (podium.Evidence, podium.EvidenceOutcome, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return podium.Evidence{}, 0, fmt.Errorf("put evidence: %w", err)
	}
	defer rollback(tx)
	if err := evidenceTarget(ctx, tx, ev); err != nil {
		return podium.Evidence{}, 0, err
	}
	var (
		have    string
		expires sql.NullInt64
	)
	err = tx.QueryRowContext(ctx, "SELECT content_sha256, expires_ms FROM evidence WHERE board = ? AND player = ? AND seq = ?",
		ev.Board, ev.Player, int64(ev.Seq)).Scan(&have, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return podium.Evidence{}, 0, fmt.Errorf("put evidence: %w", err)
	case expires.Valid && expires.Int64 <= podium.Millis(now):
		// Expired but not swept yet: as if it were gone.
		if _, err := dropAttachments(ctx, tx, "board = ? AND player = ? AND seq = ?", ev.Board, ev.Player, int64(ev.Seq)); err != nil {
			return podium.Evidence{}, 0, fmt.Errorf("put evidence: %w", err)
		}
	case have == ev.ContentSHA256:
		got, err := scanEvidence(tx.QueryRowContext(ctx, sqlstore.Evidence.SQLite, ev.Board, ev.Player, int64(ev.Seq), podium.Millis(now)))
		if err != nil {
			return podium.Evidence{}, 0, fmt.Errorf("put evidence: %w", err)
		}
		got.ReviewID = ev.ReviewID
		return *got, podium.EvidenceAlready, nil
	default:
		return podium.Evidence{}, 0, podium.Errorf(podium.ECodeConflict, "%s already has other evidence", ev.Target())
	}
	res, err := tx.ExecContext(ctx, sqlstore.RefContent.SQLite, ev.Player, ev.ContentSHA256)
	if err != nil {
		return podium.Evidence{}, 0, fmt.Errorf("put evidence: %w", err)
	}
	outcome := podium.EvidenceReused
	if n, _ := res.RowsAffected(); n == 0 {
		if data == nil {
			return podium.Evidence{}, 0, podium.Errorf(podium.ECodeNotFound, "the player's content %s is no longer stored", ev.ContentSHA256)
		}
		outcome = podium.EvidenceStored
		if _, err := tx.ExecContext(ctx, sqlstore.InsertContent.SQLite, ev.Player, ev.ContentSHA256, ev.CompressedSHA256,
			int64(len(data)), ev.InflatedBytes, ev.Events, data, podium.Millis(ev.CreatedAt)); err != nil {
			return podium.Evidence{}, 0, fmt.Errorf("put evidence: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, sqlstore.InsertEvidence.SQLite, ev.Board, ev.Player, int64(ev.Seq), ev.ContentSHA256, podium.Millis(ev.CreatedAt),
		nullMillis(ev.ExpiresAt), nullMillis(ev.PromotedAt)); err != nil {
		return podium.Evidence{}, 0, fmt.Errorf("put evidence: %w", err)
	}
	got, err := scanEvidence(tx.QueryRowContext(ctx, sqlstore.Evidence.SQLite, ev.Board, ev.Player, int64(ev.Seq), podium.Millis(now)))
	if err != nil {
		return podium.Evidence{}, 0, fmt.Errorf("put evidence: %w", err)
	}
	got.ReviewID = ev.ReviewID
	if err := s.commitTx(tx); err != nil {
		return podium.Evidence{}, 0, fmt.Errorf("put evidence: %w", err)
	}
	if err := s.durable(ctx); err != nil {
		return podium.Evidence{}, 0, podium.OutcomeUnknown(fmt.Errorf("put evidence: %w", err))
	}
	return *got, outcome, nil
}

func nullMillis(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return podium.Millis(t)
}

// dropAttachments deletes the attachments that where selects, releases
// their content and deletes the content no attachment uses any more. It
// returns how many attachments went.
func dropAttachments(ctx context.Context, tx *sql.Tx, where string, args ...any) (int, error) {
	rows, err := tx.QueryContext(ctx, "DELETE FROM evidence WHERE "+where+" RETURNING player, content_sha256", args...)
	if err != nil {
		return 0, err
	}
	type ref struct{ player, content string }
	counts := map[ref]int{}
	n := 0
	for rows.Next() {
		var r ref
		if err := rows.Scan(&r.player, &r.content); err != nil {
			rows.Close()
			return 0, err
		}
		counts[r]++
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	// In a fixed order, so that two sweepers lock content rows alike.
	refs := make([]ref, 0, len(counts))
	for r := range counts {
		refs = append(refs, r)
	}
	slices.SortFunc(refs, func(a, b ref) int {
		return cmp.Or(strings.Compare(a.player, b.player), strings.Compare(a.content, b.content))
	})
	for _, r := range refs {
		c := counts[r]
		if _, err := tx.ExecContext(ctx, sqlstore.UnrefContent.SQLite, c, r.player, r.content); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, sqlstore.DeleteUnusedContent.SQLite, r.player, r.content); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// PromoteEvidence fixes the expiry of an unpromoted attachment.
func (s evidenceRows) PromoteEvidence(ctx context.Context, board, player string, seq uint64, now, expires time.Time) (bool, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	res, err := s.w.ExecContext(ctx, sqlstore.PromoteEvidence.SQLite, podium.Millis(now), nullMillis(expires), board, player, int64(seq), podium.Millis(now))
	if err != nil {
		return false, fmt.Errorf("promote evidence: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("promote evidence: %w", err)
	}
	if n == 0 {
		return false, nil
	}
	return true, s.durable(ctx)
}

// SweepEvidence deletes at most limit expired attachments and the content
// they leave unused.
func (s evidenceRows) SweepEvidence(ctx context.Context, now time.Time, limit int) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("sweep evidence: %w", err)
	}
	defer rollback(tx)
	n, err := dropAttachments(ctx, tx, `(board, player, seq) IN (SELECT board, player, seq FROM evidence
		WHERE expires_ms IS NOT NULL AND expires_ms <= ? ORDER BY expires_ms LIMIT ?)`, podium.Millis(now), limit)
	if err != nil {
		return 0, fmt.Errorf("sweep evidence: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	if err := s.commitTx(tx); err != nil {
		return 0, fmt.Errorf("sweep evidence: %w", err)
	}
	return n, s.durable(ctx)
}
