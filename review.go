package podium

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
)

// Moderation (issue 9, section 5): a board may hold submissions for review,
// and an admin may freeze a player so that all of their new submissions are
// held. A held submission is kept in a review queue of its own, outside
// the log: it is not ranked, not streamed and not in the feed until a
// moderator approves it, and approval applies it through the ordinary
// write path (a new log row). Rejection leaves the player's entry as it
// was. Since held submissions never enter the log, podium check and
// rebuild, which replay the log, are untouched by them.

// ScopeReview lets a key read the review queue of its boards and decide
// its items (admin holds it too).
const ScopeReview = "review"

// Hold modes of a board's review setting.
const (
	HoldAll       = "all"       // every submission
	HoldTop       = "top"       // those whose entry would rank in the top Top
	HoldThreshold = "threshold" // those whose entry would be better than Threshold
	HoldNone      = "none"      // in an update: remove the setting
)

// Reasons a submission is held: the board's hold mode, or ReasonFrozen.
const ReasonFrozen = "frozen"

// Review item states.
const (
	ReviewPending  = "pending"
	ReviewApproved = "approved"
	ReviewRejected = "rejected"
)

// Signals of moderation (engine.Signal's Kind), each carrying the item as
// a ReviewItem (a copy) and caused by its ID: an item was held (pending),
// and a held item was decided (its decision set; an approval's Seq too).
// The review module announces them in the commit that stores the change;
// the webhooks module sends them as events of the same names.
const (
	SignalReviewHeld    = "review.held"
	SignalReviewDecided = "review.decided"
)

// Bounds of moderation input.
const (
	MaxReviewTop       = 10000 // review.top
	MaxDecisionReason  = 500   // bytes of a decision's or a freeze's reason
	MaxReviewPageLimit = 100   // items in one page of the queue or a history
)

// Review is a board's review setting. A submission that would not change
// the player's entry (a best board's worse score) is never held by top or
// threshold: it cannot move the board.
type Review struct {
	// Hold is all, top or threshold.
	Hold string `json:"hold"`
	// Top: a submission is held when the entry it produces would rank
	// below Top, counted from 0 by CompareRank among the visible
	// entries of the current period (rank < Top: it enters the top Top).
	Top int `json:"top,omitempty"`
	// Threshold: a submission is held when the entry it produces is
	// strictly better than this tuple (one value per key) in the board's
	// order (CompareKeys < 0).
	Threshold []int64 `json:"threshold,omitempty"`
}

// normalizeReview checks the board's review setting.
func (b *Board) normalizeReview() error {
	r := b.Review
	if r == nil {
		return nil
	}
	if b.Mode == AggregateMode || b.Points != nil {
		return Errorf(ECodeInvalid, "review: aggregate and points boards are computed, never submitted to, so they hold nothing")
	}
	switch r.Hold {
	case HoldAll:
		if r.Top != 0 || r.Threshold != nil {
			return Errorf(ECodeInvalid, "review: hold all takes neither top nor threshold")
		}
	case HoldTop:
		if r.Top < 1 || r.Top > MaxReviewTop {
			return Errorf(ECodeInvalid, "review.top must be 1 to %d", MaxReviewTop)
		}
		if r.Threshold != nil {
			return Errorf(ECodeInvalid, "review: hold top takes no threshold")
		}
	case HoldThreshold:
		if len(r.Threshold) != len(b.Keys) {
			return Errorf(ECodeInvalid, "review.threshold must hold one value per key (%d)", len(b.Keys))
		}
		if r.Top != 0 {
			return Errorf(ECodeInvalid, "review: hold threshold takes no top")
		}
	default:
		return Errorf(ECodeInvalid, "review.hold must be all, top, threshold (or none to remove the setting)")
	}
	return nil
}

// ReviewItem is a held submission with what became of it.
type ReviewItem struct {
	ID          string    // "rv_" and 16 hex digits
	Board       string    //
	Period      string    // the period it was submitted in
	Player      string    //
	Keys        []int64   // as submitted
	Meta        []byte    // as submitted (nil: none)
	SubmittedAt time.Time //
	Reason      string    // HoldAll, HoldTop, HoldThreshold or ReasonFrozen
	Status      string    // ReviewPending, ReviewApproved or ReviewRejected

	// The decision (zero while pending).
	DecidedAt time.Time
	DecidedBy string // the deciding key's id ("admin" for the admin key)
	Note      string // the moderator's reason
	Seq       uint64 // approved: the seq of the log row the approval wrote
}

// ReviewDecision decides one pending item; it rides in a Batch so that an
// approval's log row and its decision are stored in one transaction.
type ReviewDecision struct {
	ID     string
	Status string // ReviewApproved or ReviewRejected
	At     time.Time
	By     string
	Note   string
	Seq    uint64 // approved: the log row's seq
	// Evidence, on an approval: the store also moves the evidence
	// uploaded for the held item (PendingEvidenceSeq(ID)), if unexpired at
	// At, to Seq, promoted at At, in the same transaction (nil: left
	// where it is).
	Evidence *EvidenceFollow
}

// EvidenceFollow says where the evidence of a held item goes when its
// approval is stored: the item's board and player, and the expiry of the
// promoted attachment (zero: kept for ever).
type EvidenceFollow struct {
	Board, Player string
	Expires       time.Time
}

// ReviewFilter selects items of the queue. Items come in (submitted,
// id) order, oldest first, after the cursor (zero: from the start).
type ReviewFilter struct {
	Board  string // "": every board
	Player string // "": every player
	Status string // "": every state
	After  ReviewCursor
	Limit  int
}

// ReviewCursor is a position in the queue.
type ReviewCursor struct {
	At time.Time
	ID string
}

// Freeze says that a player's new submissions are all held.
type Freeze struct {
	Player string    `json:"player"`
	By     string    `json:"by"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// HistoryRow is one logged submission of a player, with the review item
// whose approval wrote it ("" for none).
type HistoryRow struct {
	Submission
	ReviewID string
}

// ReviewStore is the optional Store ability moderation needs; both stores
// have it. Held items and decisions are written by Commit as a part of
// the Batch (ReviewPart); the other methods read, and keep freezes.
// DeleteBoard removes a board's review items with its log.
type ReviewStore interface {
	// ReviewPart returns new held items and decisions of pending ones as
	// a part of a Batch that this store commits (Part). A decision of an
	// item that is not pending fails the whole batch with ErrDecided
	// (wrapped). The slices are not copied: they must not change until
	// the commit returns.
	ReviewPart(items []ReviewItem, decisions []ReviewDecision) Part
	// ReviewItem returns one item, nil if there is none.
	ReviewItem(ctx context.Context, id string) (*ReviewItem, error)
	// ReviewItems lists the items f selects, at most f.Limit.
	ReviewItems(ctx context.Context, f ReviewFilter) ([]ReviewItem, error)
	// Freezes lists every frozen player.
	Freezes(ctx context.Context) ([]Freeze, error)
	// LoadFreeze returns a player's freeze, nil if not frozen.
	LoadFreeze(ctx context.Context, player string) (*Freeze, error)
	// PutFreeze freezes a player (again: the new by, reason and time).
	// A SharedStore announces it as a ChangePlayer change.
	PutFreeze(ctx context.Context, f *Freeze) error
	// DeleteFreeze unfreezes a player; one not frozen is ECodeNotFound.
	DeleteFreeze(ctx context.Context, player string) error
	// History returns a player's logged submissions on a board in the
	// given periods with a seq below before (0: from the newest), newest
	// first, at most limit. A store may stop looking before it has limit
	// rows (it bounds the log it reads for one page): it then returns the
	// rows it found and resume, the seq below which it did not look, to be
	// passed as before for the rest. resume is 0 when the rows returned are
	// all there is below before, or limit was reached.
	History(ctx context.Context, board, player string, periods []string, before uint64, limit int) (rows []HistoryRow, resume uint64, err error)
}

// CheckReview reports what in held items and decisions no store can keep
// faithfully (Batch.Check): an item with 0 or more than MaxKeys keys, a
// decision seq past the int64 range.
func CheckReview(items []ReviewItem, decisions []ReviewDecision) error {
	for i := range items {
		if it := &items[i]; len(it.Keys) < 1 || len(it.Keys) > MaxKeys {
			return fmt.Errorf("review item %s has %d keys", it.ID, len(it.Keys))
		}
	}
	for i := range decisions {
		if d := &decisions[i]; d.Seq > math.MaxInt64 {
			return fmt.Errorf("decision seq %d is out of range", d.Seq)
		}
	}
	return nil
}

// ErrDecided is the answer to a decision of an item that is not pending
// (stores wrap it when a batch decides such an item).
var ErrDecided = Errorf(ECodeConflict, "this review item was already decided")

// ValidReviewID reports whether id has the form of a review item id.
func ValidReviewID(id string) bool {
	if len(id) != 19 || !strings.HasPrefix(id, "rv_") {
		return false
	}
	for _, c := range id[3:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ValidNote checks a moderator's reason: at most MaxDecisionReason bytes
// of printable text; required says whether it may be empty.
func ValidNote(note string, required bool) error {
	if required && strings.TrimSpace(note) == "" {
		return Errorf(ECodeInvalid, "reason is required")
	}
	if len(note) > MaxDecisionReason {
		return Errorf(ECodeInvalid, "reason is longer than %d bytes", MaxDecisionReason)
	}
	return validText("reason", note)
}
