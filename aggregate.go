package podium

import (
	"math"
	"slices"
	"time"
)

// Aggregate boards: a board whose entry for a player is computed from the
// player's entries on other boards (its sources), in the same commit as
// the source change that moves it. The definition is part of the board
// document; the computed entries are the aggregate's own log rows, so
// everything that works on a board works on an aggregate.

// AggregateKind is how an aggregate combines its sources.
type AggregateKind string

// Kinds of aggregates.
const (
	// SumOfBests adds up the player's entry on each source (for a best or
	// best_k board, the best result), key by key.
	SumOfBests AggregateKind = "sum_of_bests"
	// BestKSum adds up, per source, the player's best k results, a result
	// missing counting as the source's fill.
	BestKSum AggregateKind = "best_k_sum"
)

// Limits of aggregate definitions.
const (
	MaxAggregateSources = 8 // sources per aggregate
	MaxAggregateDepth   = 4 // aggregates of aggregates, counting this one
)

// Aggregate defines an aggregate board.
type Aggregate struct {
	Kind    AggregateKind     `json:"kind"`
	Sources []AggregateSource `json:"sources"`
	// RequireAll: a player has an entry only once every source has one.
	RequireAll bool `json:"require_all"`
}

// AggregateSource is one source board of an aggregate. K and Fill belong
// to best_k_sum only: the number of results counted, and what a missing
// one counts as (one value per key).
type AggregateSource struct {
	Board string  `json:"board"`
	K     int     `json:"k,omitempty"`
	Fill  []int64 `json:"fill,omitempty"`
}

// Clone returns a deep copy of a (nil for nil).
func (a *Aggregate) Clone() *Aggregate {
	if a == nil {
		return nil
	}
	c := *a
	c.Sources = make([]AggregateSource, len(a.Sources))
	for i, s := range a.Sources {
		s.Fill = append([]int64(nil), s.Fill...)
		c.Sources[i] = s
	}
	return &c
}

// Equal reports whether two definitions are the same.
func (a *Aggregate) Equal(o *Aggregate) bool {
	if a == nil || o == nil {
		return a == o
	}
	if a.Kind != o.Kind || a.RequireAll != o.RequireAll || len(a.Sources) != len(o.Sources) {
		return false
	}
	for i := range a.Sources {
		s, t := &a.Sources[i], &o.Sources[i]
		if s.Board != t.Board || s.K != t.K || !slices.Equal(s.Fill, t.Fill) {
			return false
		}
	}
	return true
}

// HasSource reports whether board id is one of a's sources.
func (a *Aggregate) HasSource(id string) bool {
	for i := range a.Sources {
		if a.Sources[i].Board == id {
			return true
		}
	}
	return false
}

// normalizeFormat checks what a board's mode asks of the other fields:
// keep for best_k, the definition for aggregate. It checks what needs no
// other board; the engine checks the sources (ValidateSources).
func (b *Board) normalizeFormat() error {
	if b.Aggregate != nil && (b.Mode == "" || b.Mode == AggregateMode) {
		b.Mode = AggregateMode
	}
	switch b.Mode {
	case BestK:
		if b.Keep < 1 || b.Keep > MaxKeep {
			return Errorf(ECodeInvalid, "keep must be 1 to %d for mode best_k", MaxKeep)
		}
	default:
		if b.Keep != 0 {
			return Errorf(ECodeInvalid, "keep is for mode best_k only")
		}
	}
	if b.Mode != AggregateMode {
		if b.Aggregate != nil {
			return Errorf(ECodeInvalid, "aggregate is for mode aggregate only (leave mode out)")
		}
		return nil
	}
	a := b.Aggregate
	if a == nil {
		return Errorf(ECodeInvalid, "mode aggregate needs an aggregate definition")
	}
	switch a.Kind {
	case SumOfBests, BestKSum:
	case "":
		return Errorf(ECodeInvalid, "aggregate.kind is required: sum_of_bests or best_k_sum")
	default:
		return Errorf(ECodeInvalid, "aggregate.kind must be sum_of_bests or best_k_sum")
	}
	if len(a.Sources) < 1 || len(a.Sources) > MaxAggregateSources {
		return Errorf(ECodeInvalid, "aggregate.sources must list 1 to %d boards", MaxAggregateSources)
	}
	seen := map[string]bool{}
	for i, s := range a.Sources {
		if !ValidBoardID(s.Board) {
			return Errorf(ECodeInvalid, "aggregate.sources[%d].board must be a board id", i)
		}
		if s.Board == b.ID {
			return Errorf(ECodeInvalid, "aggregate.sources[%d]: an aggregate cannot be a source of itself", i)
		}
		if seen[s.Board] {
			return Errorf(ECodeInvalid, "aggregate.sources[%d]: board %q is listed twice", i, s.Board)
		}
		seen[s.Board] = true
		if a.Kind == SumOfBests {
			if s.K != 0 || s.Fill != nil {
				return Errorf(ECodeInvalid, "aggregate.sources[%d]: k and fill are for kind best_k_sum only", i)
			}
			continue
		}
		if s.K < 1 || s.K > MaxKeep {
			return Errorf(ECodeInvalid, "aggregate.sources[%d].k must be 1 to %d", i, MaxKeep)
		}
		if len(s.Fill) < 1 || len(s.Fill) > MaxKeys {
			return Errorf(ECodeInvalid, "aggregate.sources[%d].fill must give one value per key", i)
		}
	}
	return nil
}

// ValidateSource checks that src can be source i of aggregate b: the same
// number of keys in the same orders, the same reset cadence and zone, and
// for best_k_sum a best_k board keeping at least k results (or a best
// board, for k = 1). The error is ECodeInvalid.
func (b *Board) ValidateSource(i int, src *Board) error {
	s := &b.Aggregate.Sources[i]
	if b.Aggregate.Kind == BestKSum && len(s.Fill) != len(b.Keys) {
		return Errorf(ECodeInvalid, "aggregate.sources[%d].fill must give one value per key (%d)", i, len(b.Keys))
	}
	if len(src.Keys) != len(b.Keys) {
		return Errorf(ECodeInvalid, "aggregate.sources[%d]: board %q has %d keys, the aggregate %d", i, src.ID, len(src.Keys), len(b.Keys))
	}
	for j := range src.Keys {
		if src.Keys[j].Order != b.Keys[j].Order {
			return Errorf(ECodeInvalid, "aggregate.sources[%d]: key %d of board %q is %s, the aggregate's is %s", i, j, src.ID, src.Keys[j].Order, b.Keys[j].Order)
		}
	}
	if src.Reset != b.Reset {
		return Errorf(ECodeInvalid, "aggregate.sources[%d]: board %q resets %s in %s, the aggregate %s in %s: the cadences must be the same", i, src.ID, src.Reset.Every, src.Reset.TZ, b.Reset.Every, b.Reset.TZ)
	}
	if b.Aggregate.Kind == BestKSum {
		switch {
		case src.Mode == BestK && src.Keep >= s.K:
		case src.Mode == Best && s.K == 1:
		default:
			return Errorf(ECodeInvalid, "aggregate.sources[%d]: best_k_sum needs a best_k board keeping at least k = %d results (or a best board for k = 1); board %q is mode %s", i, s.K, src.ID, src.Mode)
		}
	}
	return nil
}

// AggregateReached returns when a player's aggregate reached the value
// ComputeAggregate gives for the same entries: the latest time among what
// it counts (the entries' At, or the counted results' At). It times the
// entries of an aggregate made over sources that already have entries,
// so that ties among them still go to whoever got there first; a value
// that changes later is timed by the change.
func (b *Board) AggregateReached(src []*Entry) time.Time {
	var t time.Time
	for i, e := range src {
		if e == nil {
			continue
		}
		if b.Aggregate.Kind == SumOfBests || len(e.Results) == 0 {
			if e.At.After(t) {
				t = e.At
			}
			continue
		}
		for _, r := range e.Results[:min(b.Aggregate.Sources[i].K, len(e.Results))] {
			if r.At.After(t) {
				t = r.At
			}
		}
	}
	return t
}

// ComputeAggregate returns a player's aggregate keys from the player's
// entries on the sources, in source order (nil: no entry there). ok is
// false when the player has no aggregate entry: no source entry at all, or
// one missing under require_all. A sum that leaves the int64 range is
// ECodeUnprocessable.
func (b *Board) ComputeAggregate(src []*Entry) (keys []int64, ok bool, err error) {
	a := b.Aggregate
	n := len(b.Keys)
	have := 0
	for _, e := range src {
		if e != nil {
			have++
		}
	}
	if have == 0 || a.RequireAll && have < len(src) {
		return nil, false, nil
	}
	keys = make([]int64, n)
	add := func(j int, v int64) error {
		c := keys[j]
		if (v > 0 && c > math.MaxInt64-v) || (v < 0 && c < math.MinInt64-v) {
			return Errorf(ECodeUnprocessable, "aggregate board %q: the sum of key %q would leave the int64 range", b.ID, b.Keys[j].Name)
		}
		keys[j] = c + v
		return nil
	}
	for i, e := range src {
		if a.Kind == SumOfBests {
			if e == nil {
				continue
			}
			for j := range n {
				if err := add(j, e.Keys[j]); err != nil {
					return nil, false, err
				}
			}
			continue
		}
		s := &a.Sources[i]
		counted := 0
		if e != nil {
			rs := e.Results
			if len(rs) == 0 {
				rs = []Result{{Keys: e.Keys}}
			}
			for _, r := range rs[:min(s.K, len(rs))] {
				for j := range n {
					if err := add(j, r.Keys[j]); err != nil {
						return nil, false, err
					}
				}
				counted++
			}
		}
		for range s.K - counted {
			for j := range n {
				if err := add(j, s.Fill[j]); err != nil {
					return nil, false, err
				}
			}
		}
	}
	return keys, true, nil
}

// AggregateDepth is the depth of board id among defs: 0 for a plain board
// (or one not in defs), else 1 + the deepest of its sources. A cycle (which
// validation refuses) counts as deeper than MaxAggregateDepth.
func AggregateDepth(defs map[string]*Board, id string) int {
	return aggregateDepth(defs, id, map[string]bool{})
}

func aggregateDepth(defs map[string]*Board, id string, path map[string]bool) int {
	def := defs[id]
	if def == nil || def.Aggregate == nil {
		return 0
	}
	if path[id] {
		return MaxAggregateDepth + 1
	}
	path[id] = true
	defer delete(path, id)
	d := 0
	for _, s := range def.Aggregate.Sources {
		d = max(d, aggregateDepth(defs, s.Board, path))
	}
	return d + 1
}
