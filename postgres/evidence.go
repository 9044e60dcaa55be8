package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/sqlstore"
)

var _ podium.EvidenceStore = (*Store)(nil)

// evidenceRows is the Store's evidence uploads (podium.EvidenceStore).
type evidenceRows struct{ *Store }

// Evidence uploads (podium.EvidenceStore): content once per player in
// evidence_content (bytea; see docs/ARCHITECTURE.md for bytea against a
// large object), attachments in evidence (migration 0080). PutEvidence
// takes a per-player advisory lock, so two nodes attaching for one player
// take turns; the sweeper locks the attachments it deletes (SKIP LOCKED)
// and releases content through its row, whose lock orders it against an
// upload that takes the same content at the same time.

func scanEvidence(r pgx.Row, extra ...any) (*podium.Evidence, error) {
	var (
		ev                podium.Evidence
		seq, created      int64
		expires, promoted *int64
	)
	dest := append([]any{&ev.Board, &ev.Player, &seq, &ev.ContentSHA256, &ev.CompressedSHA256, &ev.Bytes, &ev.InflatedBytes,
		&ev.Events, &created, &expires, &promoted}, extra...)
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	ev.Seq, ev.CreatedAt = uint64(seq), podium.FromMillis(created)
	if expires != nil {
		ev.ExpiresAt = podium.FromMillis(*expires)
	}
	if promoted != nil {
		ev.PromotedAt = podium.FromMillis(*promoted)
	}
	return &ev, nil
}

func nullMillis(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	ms := podium.Millis(t)
	return &ms
}

// SubmissionPlayer returns the player and period of a logged submission.
func (s evidenceRows) SubmissionPlayer(ctx context.Context, board string, seq uint64) (string, string, bool, error) {
	var player, period string
	err := s.pool.QueryRow(ctx, "SELECT player, period FROM submissions WHERE board = $1 AND seq = $2 AND kind = 0", board, int64(seq)).Scan(&player, &period)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("submission player: %w", err)
	}
	return player, period, true, nil
}

// Evidence returns the unexpired evidence of a submission, nil if none.
func (s evidenceRows) Evidence(ctx context.Context, board, player string, seq uint64, now time.Time) (*podium.Evidence, error) {
	ev, err := scanEvidence(s.pool.QueryRow(ctx, sqlstore.Evidence.Postgres, board, player, int64(seq), podium.Millis(now)))
	if errors.Is(err, pgx.ErrNoRows) {
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
	ev, err := scanEvidence(s.pool.QueryRow(ctx, sqlstore.EvidenceData.Postgres, board, player, int64(seq), podium.Millis(now)), &data)
	if errors.Is(err, pgx.ErrNoRows) {
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
	err := s.pool.QueryRow(ctx, sqlstore.PlayerContent.Postgres, player, content).Scan(&comp)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("player content: %w", err)
	}
	return comp, true, nil
}

// PutEvidence attaches evidence to a submission (podium.EvidenceStore).
func (s evidenceRows) PutEvidence(ctx context.Context, ev *podium.Evidence, data []byte, now time.Time) (podium.Evidence, podium.EvidenceOutcome, error) {
	var (
		got     *podium.Evidence
		outcome podium.EvidenceOutcome
	)
	err := inWriteTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('podium.evidence:' || $1::text, 0))", ev.Player); err != nil {
			return err
		}
		if err := evidenceTarget(ctx, tx, ev); err != nil { // evidence_review.go
			return err
		}
		var (
			have    string
			expires *int64
		)
		err := tx.QueryRow(ctx, "SELECT content_sha256, expires_ms FROM evidence WHERE board = $1 AND player = $2 AND seq = $3 FOR UPDATE",
			ev.Board, ev.Player, int64(ev.Seq)).Scan(&have, &expires)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		case expires != nil && *expires <= podium.Millis(now):
			if _, err := dropAttachments(ctx, tx, "board = $1 AND player = $2 AND seq = $3", ev.Board, ev.Player, int64(ev.Seq)); err != nil {
				return err
			}
		case have == ev.ContentSHA256:
			got, err = scanEvidence(tx.QueryRow(ctx, sqlstore.Evidence.Postgres, ev.Board, ev.Player, int64(ev.Seq), podium.Millis(now)))
			outcome = podium.EvidenceAlready
			return err
		default:
			return podium.Errorf(podium.ECodeConflict, "%s already has other evidence", ev.Target())
		}
		tag, err := tx.Exec(ctx, sqlstore.RefContent.Postgres, ev.Player, ev.ContentSHA256)
		if err != nil {
			return err
		}
		outcome = podium.EvidenceReused
		if tag.RowsAffected() == 0 {
			if data == nil {
				return podium.Errorf(podium.ECodeNotFound, "the player's content %s is no longer stored", ev.ContentSHA256)
			}
			outcome = podium.EvidenceStored
			if _, err := tx.Exec(ctx, sqlstore.InsertContent.Postgres, ev.Player, ev.ContentSHA256, ev.CompressedSHA256,
				int64(len(data)), ev.InflatedBytes, ev.Events, data, podium.Millis(ev.CreatedAt)); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, sqlstore.InsertEvidence.Postgres, ev.Board, ev.Player, int64(ev.Seq), ev.ContentSHA256, podium.Millis(ev.CreatedAt),
			nullMillis(ev.ExpiresAt), nullMillis(ev.PromotedAt)); err != nil {
			return err
		}
		got, err = scanEvidence(tx.QueryRow(ctx, sqlstore.Evidence.Postgres, ev.Board, ev.Player, int64(ev.Seq), podium.Millis(now)))
		return err
	})
	if err != nil {
		var pe *podium.Error
		if errors.As(err, &pe) {
			return podium.Evidence{}, 0, pe
		}
		return podium.Evidence{}, 0, fmt.Errorf("put evidence: %w", err)
	}
	got.ReviewID = ev.ReviewID
	return *got, outcome, nil
}

// dropAttachments deletes the attachments that where selects (locking
// them, skipping those another transaction holds), releases their content
// and deletes the content no attachment uses any more. It returns how many
// attachments went.
func dropAttachments(ctx context.Context, tx pgx.Tx, where string, args ...any) (int, error) {
	rows, err := tx.Query(ctx, "DELETE FROM evidence WHERE "+where+" RETURNING player, content_sha256", args...)
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
		if _, err := tx.Exec(ctx, sqlstore.UnrefContent.Postgres, c, r.player, r.content); err != nil {
			return 0, err
		}
		if _, err := tx.Exec(ctx, sqlstore.DeleteUnusedContent.Postgres, r.player, r.content); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// PromoteEvidence fixes the expiry of an unpromoted attachment.
func (s evidenceRows) PromoteEvidence(ctx context.Context, board, player string, seq uint64, now, expires time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, sqlstore.PromoteEvidence.Postgres, podium.Millis(now), nullMillis(expires), board, player, int64(seq), podium.Millis(now))
	if err != nil {
		return false, fmt.Errorf("promote evidence: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// SweepEvidence deletes at most limit expired attachments and the content
// they leave unused.
func (s evidenceRows) SweepEvidence(ctx context.Context, now time.Time, limit int) (int, error) {
	var n int
	err := inWriteTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		n, err = dropAttachments(ctx, tx, `(board, player, seq) IN (SELECT board, player, seq FROM evidence
			WHERE expires_ms IS NOT NULL AND expires_ms <= $1 ORDER BY expires_ms LIMIT $2 FOR UPDATE SKIP LOCKED)`, podium.Millis(now), limit)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sweep evidence: %w", err)
	}
	return n, nil
}
