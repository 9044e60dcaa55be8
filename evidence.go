package podium

import (
	"context"
	"strconv"
	"time"
)

// Evidence (a replay or proof file) attached to one submission: one gzip
// member of JSON Lines, stored in the database of record (issue 9 §4;
// package evidence validates it). A player's identical content is stored
// once and shared by the submissions it is attached to.
type Evidence struct {
	Board  string
	Player string
	Seq    uint64 // the submission it is attached to
	// ReviewID names the held submission (review item) it is attached to
	// while that is pending: Seq is then PendingEvidenceSeq(ReviewID).
	// PutEvidence takes it and returns it as given; reads by seq leave it
	// empty.
	ReviewID string
	// ContentSHA256 is the hex SHA-256 of the inflated bytes,
	// CompressedSHA256 that of the gzip bytes as stored.
	ContentSHA256    string
	CompressedSHA256 string
	Bytes            int64 // compressed
	InflatedBytes    int64
	Events           int
	CreatedAt        time.Time
	// ExpiresAt is when it is deleted; zero: kept for ever. Fixed at the
	// upload (the TTL of unpublished evidence) and once more at promotion
	// (the board's retention); reads never move it.
	ExpiresAt time.Time
	// PromotedAt is when its submission was published, zero before.
	PromotedAt time.Time
}

// Evidence defaults and bounds.
const (
	DefaultEvidenceTTL = 7 * 24 * time.Hour
	// MaxEvidenceBytes bounds a board's max_bytes: it must fit the
	// per-player byte budget, which admits no upload larger than itself.
	MaxEvidenceBytes         = 3 << 20
	MaxEvidenceInflatedBytes = 64 << 20
	MaxEvidenceEvents        = 1_000_000
	MaxEvidenceLineBytes     = 1 << 20
	minEvidenceTTL           = 60          // seconds
	maxEvidenceTTL           = 365 * 86400 // unpublished evidence is short-lived
	maxEvidenceRetention     = 100 * 365 * 86400
)

// EvidencePolicy is a board's evidence setting (board field "evidence").
// Zero fields mean the defaults of package evidence and DefaultEvidenceTTL.
type EvidencePolicy struct {
	MaxBytes         int64 `json:"max_bytes,omitempty"`
	MaxInflatedBytes int64 `json:"max_inflated_bytes,omitempty"`
	MaxEvents        int   `json:"max_events,omitempty"`
	MaxLineBytes     int   `json:"max_line_bytes,omitempty"`
	// TTLSeconds is how long evidence of a submission never published is
	// kept; RetentionSeconds how long it is kept from its promotion (0:
	// for ever).
	TTLSeconds       int64 `json:"ttl_seconds,omitempty"`
	RetentionSeconds int64 `json:"retention_seconds,omitempty"`
	// Public lets everyone who may read the board download its evidence;
	// otherwise only admins and the owning player may.
	Public bool `json:"public,omitempty"`
}

// Normalize checks the bounds of p (ECodeInvalid naming the field).
func (p *EvidencePolicy) Normalize() error {
	for _, c := range []struct {
		name   string
		v, max int64
	}{{"evidence.max_bytes", p.MaxBytes, MaxEvidenceBytes}, {"evidence.max_inflated_bytes", p.MaxInflatedBytes, MaxEvidenceInflatedBytes},
		{"evidence.max_events", int64(p.MaxEvents), MaxEvidenceEvents}, {"evidence.max_line_bytes", int64(p.MaxLineBytes), MaxEvidenceLineBytes}} {
		if c.v < 0 || c.v > c.max {
			return Errorf(ECodeInvalid, "%s must be 0 (the default) to %d", c.name, c.max)
		}
	}
	for _, c := range []struct {
		name     string
		v, limit int64
	}{{"evidence.ttl_seconds", p.TTLSeconds, maxEvidenceTTL}, {"evidence.retention_seconds", p.RetentionSeconds, maxEvidenceRetention}} {
		if c.v != 0 && (c.v < minEvidenceTTL || c.v > c.limit) {
			return Errorf(ECodeInvalid, "%s must be 0 (the default) or %d to %d", c.name, minEvidenceTTL, c.limit)
		}
	}
	return nil
}

// TTL is how long unpublished evidence is kept.
func (p *EvidencePolicy) TTL() time.Duration {
	if p == nil || p.TTLSeconds == 0 {
		return DefaultEvidenceTTL
	}
	return time.Duration(p.TTLSeconds) * time.Second
}

// Retention is how long promoted evidence is kept, 0 for ever.
func (p *EvidencePolicy) Retention() time.Duration {
	if p == nil {
		return 0
	}
	return time.Duration(p.RetentionSeconds) * time.Second
}

// RetentionEnd is the expiry that promoting evidence at now fixes: now
// plus the retention, or the zero time (never) without one.
func (p *EvidencePolicy) RetentionEnd(now time.Time) time.Time {
	if r := p.Retention(); r > 0 {
		return now.Add(r)
	}
	return time.Time{}
}

// PendingEvidenceSeq is the seq under which evidence uploaded for a held
// submission (review item id) is stored until the item's approval moves
// it to the log row the approval writes: the 64 bits of the id with the
// top bit set. Log seqs stay below 2^63 (Batch.Check), so the two never
// meet; two items of one player on one board whose ids differ only in
// the top bit would share it (odds 2^-63 a pair). 0 for an invalid id.
func PendingEvidenceSeq(reviewID string) uint64 {
	if !ValidReviewID(reviewID) {
		return 0
	}
	v, err := strconv.ParseUint(reviewID[3:], 16, 64)
	if err != nil {
		return 0
	}
	return v | 1<<63
}

// IsPendingEvidenceSeq reports whether seq is a PendingEvidenceSeq.
func IsPendingEvidenceSeq(seq uint64) bool { return seq&(1<<63) != 0 }

// Target names what ev is attached to, for messages.
func (ev *Evidence) Target() string {
	if ev.ReviewID != "" {
		return "held submission " + ev.ReviewID
	}
	return "submission " + strconv.FormatUint(ev.Seq, 10)
}

// EvidenceOutcome says what PutEvidence did.
type EvidenceOutcome int

// Outcomes of PutEvidence.
const (
	// EvidenceStored: a new attachment with new bytes.
	EvidenceStored EvidenceOutcome = iota
	// EvidenceReused: a new attachment to content the player had stored.
	EvidenceReused
	// EvidenceAlready: the submission already had this content.
	EvidenceAlready
)

// EvidenceStore is the optional Store ability evidence uploads need; both
// stores have it. Every method owns its transaction.
type EvidenceStore interface {
	// SubmissionPlayer returns the player of a logged submission of a
	// board, ok false if the board has no such seq.
	SubmissionPlayer(ctx context.Context, board string, seq uint64) (player, period string, ok bool, err error)
	// Evidence returns the evidence attached to a submission of a player,
	// nil if none or if it expired at or before now.
	Evidence(ctx context.Context, board, player string, seq uint64, now time.Time) (*Evidence, error)
	// PlayerContent returns the compressed SHA-256 of content a player
	// has stored under contentSHA256, ok false if none.
	PlayerContent(ctx context.Context, player, contentSHA256 string) (compressedSHA256 string, ok bool, err error)
	// EvidenceData returns the gzip bytes of evidence that Evidence
	// returns, nil if there is none.
	EvidenceData(ctx context.Context, board, player string, seq uint64, now time.Time) (*Evidence, []byte, error)
	// PutEvidence attaches ev to its submission in one transaction, durably
	// before it returns. data is the gzip bytes, or nil to attach content
	// the player already stores (ECodeNotFound when it is gone). The
	// player's stored content with the same ContentSHA256 is reused (its
	// bytes and compressed hash kept). An unexpired attachment with the
	// same content is EvidenceAlready and changes nothing; with other
	// content ECodeConflict. An expired one is replaced. A submission the
	// board has not logged for ev.Player is ECodeEntryNotFound. It returns
	// the attachment as stored.
	//
	// With ev.ReviewID set, the attachment is for a held submission: Seq
	// must be PendingEvidenceSeq(ReviewID) (else ECodeInvalid), and the
	// item must be pending, for ev.Board and ev.Player (ECodeNotFound if
	// there is no such item, ErrDecided if it was decided), checked in
	// the same transaction, which orders it against the item's decision
	// (a decision in a Batch, ReviewStore.ReviewPart, moves such an attachment on approval).
	PutEvidence(ctx context.Context, ev *Evidence, data []byte, now time.Time) (Evidence, EvidenceOutcome, error)
	// PromoteEvidence fixes the expiry of an unexpired, unpromoted
	// attachment (zero expires: for ever) and records now as its
	// promotion. It reports whether it promoted; an attachment already
	// promoted keeps its expiry.
	PromoteEvidence(ctx context.Context, board, player string, seq uint64, now, expires time.Time) (bool, error)
	// SweepEvidence deletes at most limit attachments that expired at or
	// before now, the oldest first, with the content no attachment uses
	// any more, and returns how many attachments went.
	SweepEvidence(ctx context.Context, now time.Time, limit int) (int, error)
}
