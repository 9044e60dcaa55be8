package engine

import (
	"context"
	"slices"
	"time"

	"github.com/podiumhq/podium"
)

// Evidence (replay) uploads, issue 9 §4. The bytes go straight to the
// store (podium.EvidenceStore), which is the authority: nothing about
// evidence is held in memory, so every node sees the same. Expiry is
// absolute: unpublished evidence gets the board's TTL at upload; evidence
// of a published submission is promoted, which fixes its expiry once (the
// board's retention, or never) and nothing moves it again. A background
// loop deletes expired rows in bounded batches; reads hide them at once.

// EvidenceConfig configures the evidence sweeper; zero values mean the
// defaults.
type EvidenceConfig struct {
	// SweepEvery is how often expired evidence is deleted (default 1m;
	// negative: never, tests call SweepEvidence), SweepBatch rows at a
	// time (default 200: a batch may free 200 MiB of content).
	SweepEvery time.Duration
	SweepBatch int
}

func (c *EvidenceConfig) fill() {
	if c.SweepEvery == 0 {
		c.SweepEvery = time.Minute
	}
	if c.SweepBatch <= 0 {
		c.SweepBatch = 200
	}
}

type evidenceState struct {
	cfg   EvidenceConfig
	store podium.EvidenceStore // nil: the store keeps no evidence
	done  chan struct{}
}

func newEvidenceState(st podium.Store, cfg EvidenceConfig) *evidenceState {
	cfg.fill()
	es, _ := st.(podium.EvidenceStore)
	return &evidenceState{cfg: cfg, store: es}
}

var errNoEvidence = podium.Errorf(podium.ECodeUnavailable, "this store keeps no evidence")

func (e *Engine) evidenceStore() (podium.EvidenceStore, error) {
	if e.ev == nil || e.ev.store == nil {
		return nil, errNoEvidence
	}
	return e.ev.store, nil
}

// EvidenceTarget resolves the submission evidence is for: seq, or with
// seq 0 the seq of the player's entry in the board's current period. It
// checks that seq is a logged score of player (ECodeEntryNotFound if not)
// and returns its period and the board's definition too.
func (e *Engine) EvidenceTarget(ctx context.Context, board, player string, seq uint64) (uint64, string, BoardInfo, error) {
	bi, err := e.Board(board)
	if err != nil {
		return 0, "", bi, err
	}
	es, err := e.evidenceStore()
	if err != nil {
		return 0, "", bi, err
	}
	if bi.Mode == podium.AggregateMode {
		return 0, "", bi, podium.Errorf(podium.ECodeConflict, "board %q is an aggregate: its entries are computed, not submitted, and carry no evidence", board)
	}
	if seq == 0 {
		page, err := e.Entry(ctx, Query{Board: board, IncludeHidden: true}, player)
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
func (e *Engine) Evidence(ctx context.Context, board, player string, seq uint64) (*podium.Evidence, error) {
	es, err := e.evidenceStore()
	if err != nil {
		return nil, err
	}
	return es.Evidence(ctx, board, player, seq, e.now())
}

// EvidenceData returns unexpired evidence with its gzip bytes;
// ECodeNotFound if there is none.
func (e *Engine) EvidenceData(ctx context.Context, board, player string, seq uint64) (*podium.Evidence, []byte, error) {
	es, err := e.evidenceStore()
	if err != nil {
		return nil, nil, err
	}
	ev, data, err := es.EvidenceData(ctx, board, player, seq, e.now())
	if err == nil && ev == nil {
		err = podium.Errorf(podium.ECodeNotFound, "submission %d of player %q on board %q has no evidence", seq, player, board)
	}
	return ev, data, err
}

// PlayerContent returns the compressed hash of content the player has
// stored under contentSHA256, ok false if none. Only the player's own
// content is ever looked at.
func (e *Engine) PlayerContent(ctx context.Context, player, contentSHA256 string) (string, bool, error) {
	es, err := e.evidenceStore()
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
func (e *Engine) StoreEvidence(ctx context.Context, ev podium.Evidence, data []byte, period string) (podium.Evidence, podium.EvidenceOutcome, error) {
	es, err := e.evidenceStore()
	if err != nil {
		return podium.Evidence{}, 0, err
	}
	bi, err := e.Board(ev.Board)
	if err != nil {
		return podium.Evidence{}, 0, err
	}
	now := e.now()
	ev.CreatedAt, ev.PromotedAt = now, time.Time{}
	ev.ExpiresAt = now.Add(bi.Evidence.TTL())
	// A held submission's evidence (ReviewID) is not published: its
	// approval promotes it (evidence_review.go).
	published := ev.ReviewID == "" && e.published(ctx, ev.Board, period, ev.Player, ev.Seq)
	if published {
		ev.PromotedAt, ev.ExpiresAt = now, retentionEnd(now, bi.Evidence)
	}
	got, outcome, err := es.PutEvidence(ctx, &ev, data, now)
	if err != nil {
		return got, outcome, err
	}
	if outcome == podium.EvidenceAlready && got.PromotedAt.IsZero() && published {
		// Stored before its submission was published (moderation).
		if ok, err := es.PromoteEvidence(ctx, ev.Board, ev.Player, ev.Seq, now, retentionEnd(now, bi.Evidence)); err != nil {
			return got, outcome, err
		} else if ok {
			got.PromotedAt, got.ExpiresAt = now, retentionEnd(now, bi.Evidence)
		}
	}
	return got, outcome, nil
}

func retentionEnd(now time.Time, p *podium.EvidencePolicy) time.Time {
	if r := p.Retention(); r > 0 {
		return now.Add(r)
	}
	return time.Time{}
}

// published reports whether a submission is what the player's entry in
// its period shows (its keys, or one of a best_k board's kept results).
// On a shared store this node may not have applied the submission yet: it
// waits up to 2 s for it.
func (e *Engine) published(ctx context.Context, board, period, player string, seq uint64) bool {
	for deadline := time.Now().Add(2 * time.Second); ; {
		bi, err := e.Board(board)
		if err != nil {
			return false
		}
		if bi.Seq >= seq || e.sh == nil || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	page, err := e.Entry(ctx, Query{Board: board, Period: period, IncludeHidden: true}, player)
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
func (e *Engine) PromoteEvidence(ctx context.Context, board, player string, seq uint64) (bool, error) {
	es, err := e.evidenceStore()
	if err != nil {
		return false, err
	}
	bi, err := e.Board(board)
	if err != nil {
		return false, err
	}
	now := e.now()
	return es.PromoteEvidence(ctx, board, player, seq, now, retentionEnd(now, bi.Evidence))
}

// SweepEvidence deletes expired evidence in batches of SweepBatch, at most
// max batches, and returns how many attachments went.
func (e *Engine) SweepEvidence(ctx context.Context, max int) (int, error) {
	if e.ev == nil || e.ev.store == nil {
		return 0, nil
	}
	total := 0
	for range max {
		n, err := e.ev.store.SweepEvidence(ctx, e.now(), e.ev.cfg.SweepBatch)
		total += n
		if err != nil || n < e.ev.cfg.SweepBatch {
			return total, err
		}
	}
	return total, nil
}

func (e *Engine) evidenceLoop() {
	defer close(e.ev.done)
	t := time.NewTicker(e.ev.cfg.SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			if _, err := e.SweepEvidence(context.Background(), 10); err != nil {
				e.log.Warn("sweep expired evidence", "err", err)
			}
		}
	}
}

func (e *Engine) startEvidence() {
	if e.ev.store == nil || e.ev.cfg.SweepEvery < 0 {
		return
	}
	e.ev.done = make(chan struct{})
	go e.evidenceLoop()
}

func (e *Engine) evidenceStopped() {
	if e.ev.done != nil {
		<-e.ev.done
	}
}
