package podium

import (
	"context"
	"regexp"
	"time"

	"github.com/podiumhq/podium/scoring"
)

// Tournaments and points (issue 8, section 3).
//
// A tournament is a board with a window [Start, End): scores outside it
// are refused (ECodeTournamentClosed). With JoinRequired only players who
// joined may submit; with MaxParticipants at most that many players take
// part: joins past it are refused (ECodeTournamentFull), and when joining
// is not required a player's first accepted score is their join, so the
// cap holds either way. After End a scheduler in the server settles it:
// final rank r pays round_half_to_even(Weight / r) points, credited to the
// points boards of the tournament's ladder.

// Tournament error codes (the http package maps them to statuses).
const (
	// ECodeTournamentClosed: a score outside the tournament's window (409).
	ECodeTournamentClosed = "tournament_closed"
	// ECodeNotJoined: a score from a player who did not join a tournament
	// that requires joining (403).
	ECodeNotJoined = "not_joined"
	// ECodeTournamentFull: a join (or a first score) past the maximum
	// number of participants (409).
	ECodeTournamentFull = "tournament_full"
	// ECodePointsBoard: a score sent to a points board, which only
	// settlement writes (409).
	ECodePointsBoard = "points_board"
)

// Limits of tournaments.
const (
	MaxWeight           = 1_000_000  // points for rank 1
	MaxParticipantsCap  = 10_000_000 // largest max_participants
	DefaultWeight       = 1000
	DefaultHalfLifeDays = 730
	MaxHalfLifeDays     = 36500
)

// Tournament is the tournament part of a board definition.
type Tournament struct {
	Start           time.Time `json:"start"`
	End             time.Time `json:"end"`
	JoinRequired    bool      `json:"join_required"`
	MaxParticipants int       `json:"max_participants"` // 0: no cap
	Weight          int64     `json:"weight"`           // points for rank 1; 0: 1000
	Category        string    `json:"category"`         // per-category totals; "" none
	Series          string    `json:"series"`           // best placement boards; "" none
	Ladder          string    `json:"ladder"`           // points boards credited; "" none
}

// Points kinds.
const (
	PointsTotal    = "total"    // plain sum of the points paid
	PointsCategory = "category" // sum of the points of one category
	PointsCurrent  = "current"  // sum decaying with a half-life
	PointsBest     = "best"     // best placement in a series
)

// Points says that a board is a points board: settlement writes it, and
// score submissions to it are refused. Every points board belongs to a
// ladder; a tournament credits the boards of its ladder.
//
// Keys by kind: total and category: one desc key, mode sum (the points).
// current: two desc keys, mode sum: the era and the points in fixed point
// (see scoring/decay.go). best: mode best; By "rank": one asc key (the
// best rank), By "score": the tournament's own keys (its best entry).
type Points struct {
	Ladder       string `json:"ladder"`
	Kind         string `json:"kind"`
	Category     string `json:"category,omitempty"`       // kind category
	Series       string `json:"series,omitempty"`         // kind best
	By           string `json:"by,omitempty"`             // kind best: rank or score
	HalfLifeDays int    `json:"half_life_days,omitempty"` // kind current; 0: 730
}

var tagRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_.:-]{0,63}$`)

// normalizeTournament validates the tournament part of a board and fills
// its defaults.
func (b *Board) normalizeTournament() error {
	t, p := b.Tournament, b.Points
	if t != nil && p != nil {
		return Errorf(ECodeInvalid, "a board is either a tournament or a points board, not both")
	}
	if t != nil {
		if t.Start.IsZero() || t.End.IsZero() {
			return Errorf(ECodeInvalid, "tournament.start and tournament.end are required")
		}
		if !t.End.After(t.Start) {
			return Errorf(ECodeInvalid, "tournament.end must be after tournament.start")
		}
		t.Start, t.End = t.Start.UTC().Truncate(time.Millisecond), t.End.UTC().Truncate(time.Millisecond)
		if t.MaxParticipants < 0 || t.MaxParticipants > MaxParticipantsCap {
			return Errorf(ECodeInvalid, "tournament.max_participants must be 0 (no cap) to %d", MaxParticipantsCap)
		}
		if t.Weight == 0 {
			t.Weight = DefaultWeight
		}
		if t.Weight < 1 || t.Weight > MaxWeight {
			return Errorf(ECodeInvalid, "tournament.weight must be 1 to %d", MaxWeight)
		}
		for _, f := range []struct{ name, v string }{{"category", t.Category}, {"series", t.Series}, {"ladder", t.Ladder}} {
			if f.v != "" && !tagRe.MatchString(f.v) {
				return Errorf(ECodeInvalid, "tournament.%s must match [a-z0-9][a-z0-9_.:-]{0,63}", f.name)
			}
		}
		if b.Reset.Every != Never {
			return Errorf(ECodeInvalid, "a tournament board does not reset: its window is its period")
		}
	}
	if p != nil {
		if !tagRe.MatchString(p.Ladder) {
			return Errorf(ECodeInvalid, "points.ladder must match [a-z0-9][a-z0-9_.:-]{0,63}")
		}
		if b.Reset.Every != Never {
			return Errorf(ECodeInvalid, "a points board does not reset")
		}
		desc1 := len(b.Keys) == 1 && b.Keys[0].Order == Desc
		switch p.Kind {
		case PointsTotal, PointsCategory:
			if !desc1 || b.Mode != Sum {
				return Errorf(ECodeInvalid, "a %s points board has mode sum and one desc key", p.Kind)
			}
			if (p.Kind == PointsCategory) != (p.Category != "") {
				return Errorf(ECodeInvalid, "points.category is required by, and only by, kind category")
			}
			if p.Category != "" && !tagRe.MatchString(p.Category) {
				return Errorf(ECodeInvalid, "points.category must match [a-z0-9][a-z0-9_.:-]{0,63}")
			}
		case PointsCurrent:
			if len(b.Keys) != 2 || b.Keys[0].Order != Desc || b.Keys[1].Order != Desc || b.Mode != Sum {
				return Errorf(ECodeInvalid, "a current points board has mode sum and two desc keys: the era and the fixed-point points")
			}
			if p.HalfLifeDays == 0 {
				p.HalfLifeDays = DefaultHalfLifeDays
			}
			if p.HalfLifeDays < 1 || p.HalfLifeDays > MaxHalfLifeDays {
				return Errorf(ECodeInvalid, "points.half_life_days must be 1 to %d", MaxHalfLifeDays)
			}
		case PointsBest:
			if b.Mode != Best {
				return Errorf(ECodeInvalid, "a best points board has mode best")
			}
			if !tagRe.MatchString(p.Series) {
				return Errorf(ECodeInvalid, "points.series must match [a-z0-9][a-z0-9_.:-]{0,63}")
			}
			switch p.By {
			case "rank":
				if len(b.Keys) != 1 || b.Keys[0].Order != Asc {
					return Errorf(ECodeInvalid, "a best-rank points board has one asc key")
				}
			case "score":
			default:
				return Errorf(ECodeInvalid, "points.by must be rank or score")
			}
		default:
			return Errorf(ECodeInvalid, "points.kind must be total, category, current or best")
		}
		if p.Kind != PointsCurrent && p.HalfLifeDays != 0 {
			return Errorf(ECodeInvalid, "points.half_life_days is for kind current")
		}
		if p.Kind != PointsBest && (p.Series != "" || p.By != "") {
			return Errorf(ECodeInvalid, "points.series and points.by are for kind best")
		}
	}
	return nil
}

// Credits reports whether a settlement of tournament t writes points board
// p (both given).
func (p *Points) Credits(t *Tournament) bool {
	if t.Ladder == "" || p.Ladder != t.Ladder {
		return false
	}
	switch p.Kind {
	case PointsTotal, PointsCurrent:
		return true
	case PointsCategory:
		return t.Category != "" && p.Category == t.Category
	case PointsBest:
		return t.Series != "" && p.Series == t.Series
	}
	return false
}

// Open reports whether a score at time at falls in the tournament's window.
func (t *Tournament) Open(at time.Time) bool {
	return !at.Before(t.Start) && at.Before(t.End)
}

// Join is one player's entry into a tournament. N numbers the joins of a
// tournament from 1 in the order they were accepted.
type Join struct {
	Board  string
	Player string
	N      int64
	At     time.Time
}

// Payout is what a settlement paid one player for one tournament: the
// final rank and the points credited. Stored in the same transaction as
// the credits, so a settlement run again pays only differences.
type Payout struct {
	Board  string
	Player string
	Rank   int64 // 0: no longer ranked (the points were taken back)
	Points int64
	At     time.Time // when it was (last) changed
}

// Settlement is the status of one tournament's settlement.
type Settlement struct {
	Board     string
	SettledAt time.Time // when the last run committed
	Runs      int64     // runs that committed
	Players   int64     // players holding a payout
	Paid      int64     // sum of the points paid
	Epoch     int64     // the lease epoch of the last run (0: no lease)
	Holder    string    // the node that ran it
}

// Fence is a lease a commit must still hold: the commit fails, storing
// nothing, unless the lease Name is held by Holder at Epoch.
type Fence struct {
	Name   string
	Holder string
	Epoch  int64
}

// Lease is a named lease held in the database.
type Lease struct {
	Name    string
	Holder  string
	Epoch   int64
	Expires time.Time
}

// TourneyBatch is the tournament part of a Batch: stored in the same
// transaction as the rest.
type TourneyBatch struct {
	Joins       []Join
	Payouts     []Payout // upserted by (board, player)
	Settlements []Settlement
	Fence       *Fence
}

// Len is the number of rows.
func (t *TourneyBatch) Len() int {
	if t == nil {
		return 0
	}
	n := len(t.Joins) + len(t.Payouts) + len(t.Settlements)
	if t.Fence != nil {
		n++
	}
	return n
}

// MergeTourney appends src's rows to dst's (a nil dst is made); fences
// are never merged (a fenced batch commits alone).
func MergeTourney(dst, src *TourneyBatch) *TourneyBatch {
	if src == nil {
		return dst
	}
	if dst == nil {
		dst = &TourneyBatch{}
	}
	dst.Joins = append(dst.Joins, src.Joins...)
	dst.Payouts = append(dst.Payouts, src.Payouts...)
	dst.Settlements = append(dst.Settlements, src.Settlements...)
	return dst
}

// TourneyStore is the optional Store ability that tournaments need; both
// sqlite.Store and postgres.Store have it, and storetest covers it. Rows
// are written by Commit (and WriteTx.Commit) as a part of the Batch
// (TourneyPart); DeleteBoard removes a board's joins, payouts and
// settlement.
type TourneyStore interface {
	// TourneyPart returns t as a part of a Batch that this store commits
	// (Part): its fence runs, and its rows are written, before anything
	// else of the batch, so that a lost lease (ECodeConflict) stores
	// nothing. t is not copied: it must not change until the commit
	// returns.
	TourneyPart(t *TourneyBatch) Part
	// Joins returns the joins of a board with N above after, by N.
	Joins(ctx context.Context, board string, after int64) ([]Join, error)
	// Payouts returns every payout of a board.
	Payouts(ctx context.Context, board string) ([]Payout, error)
	// Settlements returns the settlement status of every settled board.
	Settlements(ctx context.Context) ([]Settlement, error)
	// AcquireLease takes or renews the lease name for holder until
	// now+ttl: it succeeds when the lease is free, expired or already
	// holder's. Taking it over from another holder (or after it expired)
	// increments the epoch; renewing keeps it. ok false: another holder
	// has it.
	AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (l Lease, ok bool, err error)
	// ReleaseLease gives the lease up if holder still has it at epoch.
	ReleaseLease(ctx context.Context, name, holder string, epoch int64) error
}

// Decayed returns the points of an entry (keys: era, K) of a current
// points board at now, as reads show them (scoring.Value); ok is false
// for any other board (p nil, or not of kind current).
func (p *Points) Decayed(keys []int64, now time.Time) (v float64, ok bool) {
	if p == nil || p.Kind != PointsCurrent || len(keys) < 2 {
		return 0, false
	}
	h := int64(p.HalfLifeDays) * 24 * 3600 * 1000
	return scoring.Value(keys[0], keys[1], Millis(now), h), true
}
