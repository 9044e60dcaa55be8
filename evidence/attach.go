package evidence

import (
	"context"
	"slices"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// EvidenceTarget resolves the submission evidence is for: seq, or with
// seq 0 the seq of the player's entry in the board's current period. It
// checks that seq is a logged score of player (ECodeEntryNotFound if not)
// and returns its period and the board's definition too.
func (m *Module) EvidenceTarget(ctx context.Context, board, player string, seq uint64) (uint64, string, engine.BoardInfo, error) {
	bi, err := m.eng.Board(board)
	if err != nil {
		return 0, "", bi, err
	}
	es, err := m.evidenceStore()
	if err != nil {
		return 0, "", bi, err
	}
	if bi.Mode == podium.AggregateMode {
		return 0, "", bi, podium.Errorf(podium.ECodeConflict, "board %q is an aggregate: its entries are computed, not submitted, and carry no evidence", board)
	}
	if seq == 0 {
		page, err := m.eng.Entry(ctx, engine.Query{Board: board, IncludeHidden: true}, player)
		if err != nil {
			return 0, "", bi, err
		}
		for _, en := range page.Entries {
			if en.Player == player {
				seq = en.Seq
			}
		}
		if seq == 0 {
			return 0, "", bi, podium.Errorf(podium.ECodeEntryNotFound, "player %q has no entry on board %q", player, board)
		}
	}
	owner, period, ok, err := es.SubmissionPlayer(ctx, board, seq)
	if err != nil {
		return 0, "", bi, err
	}
	if !ok || owner != player {
		return 0, "", bi, podium.Errorf(podium.ECodeEntryNotFound, "board %q has no submission %d of player %q", board, seq, player)
	}
	return seq, period, bi, nil
}

// Evidence returns the unexpired evidence attached to a submission, nil
// if none.
func (m *Module) Evidence(ctx context.Context, board, player string, seq uint64) (*podium.Evidence, error) {
	es, err := m.evidenceStore()
	if err != nil {
		return nil, err
	}
	return es.Evidence(ctx, board, player, seq, m.host.Now())
}

// EvidenceData returns unexpired evidence with its gzip bytes;
// ECodeNotFound if there is none.
func (m *Module) EvidenceData(ctx context.Context, board, player string, seq uint64) (*podium.Evidence, []byte, error) {
	es, err := m.evidenceStore()
	if err != nil {
		return nil, nil, err
	}
	ev, data, err := es.EvidenceData(ctx, board, player, seq, m.host.Now())
	if err == nil && ev == nil {
		err = podium.Errorf(podium.ECodeNotFound, "submission %d of player %q on board %q has no evidence", seq, player, board)
	}
	return ev, data, err
}

// PlayerContent returns the compressed hash of content the player has
// stored under contentSHA256, ok false if none. Only the player's own
// content is ever looked at.
func (m *Module) PlayerContent(ctx context.Context, player, contentSHA256 string) (string, bool, error) {
	es, err := m.evidenceStore()
	if err != nil {
		return "", false, err
	}
	return es.PlayerContent(ctx, player, contentSHA256)
}

// StoreEvidence attaches evidence to its submission (data nil: content
// the player already stores) and returns it as stored, durably, with what
// the store did. Its expiry is the board's TTL, or, when the submission
// is published already (the player's entry, or one of its kept results),
// the board's retention from now.
func (m *Module) StoreEvidence(ctx context.Context, ev podium.Evidence, data []byte, period string) (podium.Evidence, podium.EvidenceOutcome, error) {
	es, err := m.evidenceStore()
	if err != nil {
		return podium.Evidence{}, 0, err
	}
	bi, err := m.eng.Board(ev.Board)
	if err != nil {
		return podium.Evidence{}, 0, err
	}
	now := m.host.Now()
	ev.CreatedAt, ev.PromotedAt = now, time.Time{}
	ev.ExpiresAt = now.Add(bi.Evidence.TTL())
	// A held submission's evidence (ReviewID) is not published: its
	// approval promotes it (evidence_review.go).
	published := ev.ReviewID == "" && m.published(ctx, ev.Board, period, ev.Player, ev.Seq)
	if published {
		ev.PromotedAt, ev.ExpiresAt = now, bi.Evidence.RetentionEnd(now)
	}
	got, outcome, err := es.PutEvidence(ctx, &ev, data, now)
	if err != nil {
		return got, outcome, err
	}
	if outcome == podium.EvidenceAlready && got.PromotedAt.IsZero() && published {
		// Stored before its submission was published (moderation).
		if ok, err := es.PromoteEvidence(ctx, ev.Board, ev.Player, ev.Seq, now, bi.Evidence.RetentionEnd(now)); err != nil {
			return got, outcome, err
		} else if ok {
			got.PromotedAt, got.ExpiresAt = now, bi.Evidence.RetentionEnd(now)
		}
	}
	return got, outcome, nil
}

// published reports whether a submission is what the player's entry in
// its period shows (its keys, or one of a best_k board's kept results).
// On a shared store this node may not have applied the submission yet: it
// waits up to 2 s for it.
func (m *Module) published(ctx context.Context, board, period, player string, seq uint64) bool {
	for deadline := time.Now().Add(2 * time.Second); ; {
		bi, err := m.eng.Board(board)
		if err != nil {
			return false
		}
		if bi.Seq >= seq || !m.shared || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	page, err := m.eng.Entry(ctx, engine.Query{Board: board, Period: period, IncludeHidden: true}, player)
	if err != nil {
		return false
	}
	for _, en := range page.Entries {
		if en.Player != player {
			continue
		}
		if en.Seq == seq || slices.ContainsFunc(en.Results, func(r podium.Result) bool { return r.Seq == seq }) {
			return true
		}
	}
	return false
}

// PromoteEvidence promotes the evidence of a submission that was just
// published (moderation calls it on approval): its expiry becomes the
// board's retention from now, or never, fixed from then on. It reports
// whether there was unpromoted, unexpired evidence to promote; calling it
// again changes nothing.
func (m *Module) PromoteEvidence(ctx context.Context, board, player string, seq uint64) (bool, error) {
	es, err := m.evidenceStore()
	if err != nil {
		return false, err
	}
	bi, err := m.eng.Board(board)
	if err != nil {
		return false, err
	}
	now := m.host.Now()
	return es.PromoteEvidence(ctx, board, player, seq, now, bi.Evidence.RetentionEnd(now))
}
