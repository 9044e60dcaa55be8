package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/podiumhq/podium"
)

// Checking and repairing aggregates. The usual checks compare an
// aggregate's entries with its own log, like any board's; these compare
// its log with its sources: the aggregate recomputed from the sources'
// entries must have the keys the aggregate holds. (The time of an
// aggregate entry, when it reached its value, is not derivable from the
// sources and is not compared.)

// AggregateDiff describes a player whose aggregate disagrees with its
// sources (want: recomputed from them; got: what the aggregate holds), and
// reports whether they disagree.
func AggregateDiff(board, period, player string, want []int64, wantOK bool, got []int64, gotOK bool) (Diff, bool) {
	switch {
	case !wantOK && !gotOK:
		return Diff{}, false
	case wantOK && gotOK && slices.Equal(want, got):
		return Diff{}, false
	}
	d := Diff{Board: board, Period: period, Player: player, Want: "missing (from its sources)", Got: "missing"}
	if wantOK {
		d.Want = fmt.Sprintf("keys %v (from its sources)", want)
	}
	if gotOK {
		d.Got = fmt.Sprintf("keys %v", got)
	}
	return d, true
}

// replayAll returns the entries of a board as a replay of its whole log
// makes them, keyed by period and player, with the head it replayed to.
func replayAll(ctx context.Context, store podium.Store, b *podium.Board) (map[podium.EntryRef]*podium.Entry, uint64, error) {
	head, err := store.LastSeq(ctx, b.ID)
	if err != nil {
		return nil, 0, err
	}
	cur := map[podium.EntryRef]*podium.Entry{}
	err = store.Log(ctx, b.ID, 0, func(s *podium.Submission) error {
		if s.Seq > head {
			return nil
		}
		return replay(b, cur, s, false)
	})
	return cur, head, err
}

// aggTarget is what a player's aggregate entry should be: its keys, and
// when the sources reached them.
type aggTarget struct {
	keys    []int64
	reached time.Time
}

// at is when a repair should say the entry reached its value: when the
// sources did, or now if that is unknown or later.
func (t aggTarget) at(now time.Time) time.Time {
	if t.reached.IsZero() || t.reached.After(now) {
		return now
	}
	return t.reached
}

// aggWant recomputes an aggregate from its sources' entries (keyed by
// period and player, per source id): what each player should have.
func aggWant(a *podium.Board, src map[string]map[podium.EntryRef]*podium.Entry) (map[podium.EntryRef]aggTarget, error) {
	refs := map[podium.EntryRef]bool{}
	for _, s := range a.Aggregate.Sources {
		for ref := range src[s.Board] {
			refs[podium.EntryRef{Board: a.ID, Period: ref.Period, Player: ref.Player}] = true
		}
	}
	want := map[podium.EntryRef]aggTarget{}
	in := make([]*podium.Entry, len(a.Aggregate.Sources))
	for ref := range refs {
		for i, s := range a.Aggregate.Sources {
			in[i] = src[s.Board][podium.EntryRef{Board: s.Board, Period: ref.Period, Player: ref.Player}]
		}
		keys, ok, err := a.ComputeAggregate(in)
		if err != nil {
			return nil, fmt.Errorf("period %s player %s: %w", ref.Period, ref.Player, err)
		}
		if ok {
			want[ref] = aggTarget{keys: keys, reached: a.AggregateReached(in)}
		}
	}
	return want, nil
}

// checkAggregates compares every aggregate's log with its sources' logs
// (podium check). On a store other processes write meanwhile, an
// aggregate whose boards moved while they were read is read again (up to
// three times), then left out and counted in moved.
func checkAggregates(ctx context.Context, store podium.Store, boards []podium.Board) (diffs []Diff, moved int, err error) {
	byID := map[string]*podium.Board{}
	for i := range boards {
		byID[boards[i].ID] = &boards[i]
	}
	for i := range boards {
		a := &boards[i]
		if a.Aggregate == nil {
			continue
		}
		ok := false
		for try := 0; try < 3 && !ok; try++ {
			var d []Diff
			d, ok, err = checkAggregate(ctx, store, a, byID)
			if err != nil {
				return nil, 0, fmt.Errorf("aggregate %s: %w", a.ID, err)
			}
			if ok {
				diffs = append(diffs, d...)
			}
		}
		if !ok {
			moved++
		}
	}
	return diffs, moved, nil
}

// checkAggregate checks one aggregate; ok is false when a board it reads
// moved while it was read.
func checkAggregate(ctx context.Context, store podium.Store, a *podium.Board, byID map[string]*podium.Board) ([]Diff, bool, error) {
	src := map[string]map[podium.EntryRef]*podium.Entry{}
	heads := map[string]uint64{}
	for _, s := range a.Aggregate.Sources {
		sb := byID[s.Board]
		if sb == nil {
			return []Diff{{Board: a.ID, Period: "-", Player: "-", Want: fmt.Sprintf("source board %q", s.Board), Got: "missing"}}, true, nil
		}
		es, head, err := replayAll(ctx, store, sb)
		if err != nil {
			return nil, false, err
		}
		src[s.Board], heads[s.Board] = es, head
	}
	got, head, err := replayAll(ctx, store, a)
	if err != nil {
		return nil, false, err
	}
	heads[a.ID] = head
	for id, h := range heads {
		now, err := store.LastSeq(ctx, id)
		if err != nil {
			return nil, false, err
		}
		if now != h {
			return nil, false, nil
		}
	}
	want, err := aggWant(a, src)
	if err != nil {
		return []Diff{{Board: a.ID, Period: "-", Player: "-", Want: "an aggregate within the int64 range", Got: err.Error()}}, true, nil
	}
	var diffs []Diff
	for ref, w := range want {
		g := got[ref]
		var gk []int64
		if g != nil {
			gk = g.Keys
		}
		if d, ok := AggregateDiff(a.ID, ref.Period, ref.Player, w.keys, true, gk, g != nil); ok {
			diffs = append(diffs, d)
		}
	}
	for ref, g := range got {
		if _, ok := want[ref]; !ok {
			d, _ := AggregateDiff(a.ID, ref.Period, ref.Player, nil, false, g.Keys, true)
			diffs = append(diffs, d)
		}
	}
	return diffs, true, nil
}

// repairAggregates brings every aggregate's log to what its sources' logs
// say (podium rebuild, after every board's entries were rebuilt): each
// entry that differs gets a row with the right value (or a delete), timed
// now, and the aggregate's entries are rebuilt again. Aggregates of
// aggregates come after their sources. It returns the rows logged.
func repairAggregates(ctx context.Context, store podium.Store, boards []podium.Board, now time.Time) (int, error) {
	defs := map[string]*podium.Board{}
	var aggs []*podium.Board
	for i := range boards {
		defs[boards[i].ID] = &boards[i]
		if boards[i].Aggregate != nil {
			aggs = append(aggs, &boards[i])
		}
	}
	slices.SortFunc(aggs, func(x, y *podium.Board) int {
		return cmp.Or(cmp.Compare(podium.AggregateDepth(defs, x.ID), podium.AggregateDepth(defs, y.ID)), strings.Compare(x.ID, y.ID))
	})
	repaired := 0
	for _, a := range aggs {
		src := map[string]map[podium.EntryRef]*podium.Entry{}
		for _, s := range a.Aggregate.Sources {
			if sb := defs[s.Board]; sb != nil {
				es, _, err := replayAll(ctx, store, sb)
				if err != nil {
					return repaired, err
				}
				src[s.Board] = es
			}
		}
		got, head, err := replayAll(ctx, store, a)
		if err != nil {
			return repaired, err
		}
		want, err := aggWant(a, src)
		if err != nil {
			return repaired, fmt.Errorf("aggregate %s: %w", a.ID, err)
		}
		var rows []podium.Submission
		for ref, w := range want {
			if g := got[ref]; g == nil || !slices.Equal(g.Keys, w.keys) {
				rows = append(rows, podium.Submission{Board: a.ID, Period: ref.Period, Player: ref.Player, Kind: podium.KindScore, Keys: w.keys, At: w.at(now)})
			}
		}
		for ref := range got {
			if _, ok := want[ref]; !ok {
				rows = append(rows, podium.Submission{Board: a.ID, Period: ref.Period, Player: ref.Player, Kind: podium.KindDelete, At: now})
			}
		}
		if len(rows) == 0 {
			continue
		}
		slices.SortFunc(rows, func(x, y podium.Submission) int {
			return cmp.Or(strings.Compare(x.Period, y.Period), strings.Compare(x.Player, y.Player))
		})
		for i := range rows {
			rows[i].Seq = head + uint64(i) + 1
		}
		if err := store.Commit(ctx, &podium.Batch{Submissions: rows}); err != nil {
			return repaired, fmt.Errorf("aggregate %s: log the repairs: %w", a.ID, err)
		}
		entries, last, err := replayAll(ctx, store, a)
		if err != nil {
			return repaired, err
		}
		if err := store.ReplaceEntries(ctx, a.ID, sortedEntries(entries), last); err != nil {
			return repaired, fmt.Errorf("aggregate %s: %w", a.ID, err)
		}
		repaired += len(rows)
	}
	return repaired, nil
}
