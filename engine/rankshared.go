package engine

import (
	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
)

// sharedRanks computes the shared ranks (podium.RankShared) of entries
// visited in rank order. Entries equal on every key are next to each other
// in the order, so an entry right after the previous one visited (its
// rank is one more) shares that one's rank when their keys are equal, and
// has its own rank otherwise: no entry of the view ahead of it has its
// keys. Only an entry whose predecessor was not visited (the first of a
// page, or a players= list) asks the index, in O(log n). A page costs at
// most one index descent more than before.
type sharedRanks struct {
	rank, shared int      // the last entry visited; rank 0: none yet
	keys         [4]int64 // its keys
}

// of returns the shared rank of en, at rank r in the numbering of all
// entries (all) or of visible ones; n is the board's key count.
func (s *sharedRanks) of(idx *rank.Index, r int, en *rank.Entry, all bool, n int) int {
	var k [4]int64
	copy(k[:n], en.Keys[:n])
	switch {
	case r == 1:
		s.shared = 1
	case s.rank > 0 && r == s.rank+1 && k == s.keys:
		// shares the previous entry's rank
	case s.rank > 0 && r == s.rank+1:
		s.shared = r
	default:
		s.shared = idx.Ahead(k, all) + 1
	}
	s.rank, s.keys = r, k
	return s.shared
}

// rankExtras sets the Of and Shared of a submit answer's entry cur, whose
// Rank counts visible entries: a hidden player's is where it would stand if
// shown, so it counts among the visible entries and itself.
func rankExtras(v *EntryView, def *podium.Board, idx *rank.Index, cur *rank.Entry) {
	v.Of = idx.Visible()
	if cur.Hidden {
		v.Of++
	}
	if def.ReportsShared() {
		v.Shared = idx.Ahead(cur.Keys, false) + 1
	}
}
