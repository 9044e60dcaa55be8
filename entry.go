package podium

import (
	"encoding/json"
	"math"
	"time"
)

// Entry is a player's current standing on one period of a board. At is when
// the entry reached its current keys and Seq the submission that set them;
// together they break exact ties (earlier wins).
type Entry struct {
	Board  string
	Period string
	Player string
	Keys   []int64
	At     time.Time
	Seq    uint64
	Meta   json.RawMessage
	// Results are the kept results of a best_k board, best first (the
	// first is the entry's own Keys, At and Seq); nil on other boards.
	Results []Result
}

// Compare orders two entries of one board by the ordering rule (see
// CompareRank). It returns -1 when a ranks ahead of b.
func Compare(orders []Order, a, b *Entry) int {
	return CompareRank(orders, a.Keys, a.At.UnixMilli(), a.Seq, b.Keys, b.At.UnixMilli(), b.Seq)
}

// Kind says what a logged submission did.
type Kind uint8

// Kinds of logged submissions.
const (
	KindScore  Kind = 0 // a score submission
	KindDelete Kind = 1 // an admin removed the entry
	// KindRestore: an admin restored the entry (podium import): it becomes
	// exactly Keys, reached at At, in Period, whatever it was before and
	// whatever the board's mode. Not a score: no feed, quota or review.
	KindRestore Kind = 2
)

// Submission is one accepted write, as kept in the append-only log. Seq is
// unique and increasing per board. For KindDelete, Keys is empty. For
// KindRestore, At is the restored entry's original time, not when the
// restore was written.
type Submission struct {
	Seq    uint64
	Board  string
	Period string
	Player string
	Kind   Kind
	Keys   []int64
	At     time.Time
	Meta   json.RawMessage
}

// Apply combines a score submission with the player's current entry (nil if
// none) under the board's mode and returns the entry to store. changed is
// false when a best board keeps the old entry, in which case next equals
// *cur. A sum that leaves the int64 range is ECodeUnprocessable.
func Apply(b *Board, cur *Entry, s *Submission) (next Entry, changed bool, err error) {
	next = Entry{Board: s.Board, Period: s.Period, Player: s.Player, At: s.At, Seq: s.Seq, Meta: s.Meta}
	if s.Kind == KindRestore { // the entry becomes exactly the restored one
		next.Keys = append([]int64(nil), s.Keys...)
		return next, true, nil
	}
	if cur == nil && b.Mode != BestK {
		next.Keys = append([]int64(nil), s.Keys...)
		return next, true, nil
	}
	switch b.Mode {
	case BestK:
		next, changed = applyBestK(b, cur, s)
		return next, changed, nil
	case Latest, AggregateMode: // an aggregate's log rows carry its whole value
		next.Keys = append([]int64(nil), s.Keys...)
		return next, true, nil
	case Sum:
		next.Keys = make([]int64, len(s.Keys))
		for i, v := range s.Keys {
			c := cur.Keys[i]
			if (v > 0 && c > math.MaxInt64-v) || (v < 0 && c < math.MinInt64-v) {
				return Entry{}, false, Errorf(ECodeUnprocessable, "the sum of key %q would leave the int64 range", b.Keys[i].Name)
			}
			next.Keys[i] = c + v
		}
		return next, true, nil
	default: // Best
		if Better(b.Orders(), s.Keys, cur.Keys) {
			next.Keys = append([]int64(nil), s.Keys...)
			return next, true, nil
		}
		return *cur, false, nil
	}
}
