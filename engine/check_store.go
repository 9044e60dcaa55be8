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

// Checking and rebuilding the store offline: every board's log replayed and
// compared with its entries (check.go).

// CheckStore compares, for every board, what the store would load (the
// entries table plus the log after the watermark) with a replay of the
// whole log, and returns the differences. See CheckStoreDetail.
func CheckStore(ctx context.Context, store podium.Store) ([]Diff, error) {
	r, err := CheckStoreDetail(ctx, store)
	return r.Diffs, err
}

// StoreCheck is what CheckStoreDetail found.
type StoreCheck struct {
	Diffs   []Diff
	Boards  int // boards checked
	Entries int // entries compared
	// Moved counts the entries that were written while the check ran
	// (another node's commits on a shared database) and so were left out.
	Moved int
}

// CheckStoreDetail compares, for every board, what the store would load
// (the entries table plus the log after the watermark) with a replay of the
// whole log.
//
// It is exact on a store that nobody writes, and stays exact on one that
// other processes write meanwhile (several nodes on PostgreSQL), where the
// log, the entries and the watermarks cannot be read as one snapshot: the
// replay stops at the board's head as read first, and every entry that a
// submission after that head touched (read from the log once more after
// the entries) is left out and counted in Moved instead of being reported.
//
// Periods past their board's keep_periods at the time of the check are
// left out (engine/retention.go): the retention sweep deletes them.
func CheckStoreDetail(ctx context.Context, store podium.Store) (StoreCheck, error) {
	return checkStoreAt(ctx, store, time.Now())
}

// checkStoreAt is CheckStoreDetail with the clock that decides which
// periods the boards still keep.
func checkStoreAt(ctx context.Context, store podium.Store, now time.Time) (StoreCheck, error) {
	var r StoreCheck
	boards, err := store.Boards(ctx)
	if err != nil {
		return r, err
	}
	wms, err := store.Watermarks(ctx)
	if err != nil {
		return r, err
	}
	for i := range boards {
		b := &boards[i]
		diffs, compared, moved, err := checkBoard(ctx, store, b, wms[b.ID])
		if err != nil {
			return r, fmt.Errorf("board %s: %w", b.ID, err)
		}
		r.Diffs = append(r.Diffs, diffs...)
		r.Boards++
		r.Entries += compared
		r.Moved += moved
	}
	aggDiffs, aggMoved, err := checkAggregates(ctx, store, boards) // aggregate_check.go
	if err != nil {
		return r, err
	}
	r.Diffs = append(r.Diffs, aggDiffs...)
	r.Moved += aggMoved
	defs := make(map[string]*podium.Board, len(boards))
	for i := range boards {
		defs[boards[i].ID] = &boards[i]
	}
	r.Diffs = keptDiffs(r.Diffs, defs, now) // retention.go
	slices.SortFunc(r.Diffs, func(a, b Diff) int {
		return cmp.Or(strings.Compare(a.Board, b.Board), strings.Compare(a.Period, b.Period), strings.Compare(a.Player, b.Player))
	})
	return r, nil
}

func checkBoard(ctx context.Context, store podium.Store, b *podium.Board, watermark uint64) (diffs []Diff, compared, moved int, err error) {
	head, err := store.LastSeq(ctx, b.ID)
	if err != nil {
		return nil, 0, 0, err
	}
	touched := map[podium.EntryRef]bool{}
	touch := func(s *podium.Submission) error {
		touched[podium.EntryRef{Board: b.ID, Period: s.Period, Player: s.Player}] = true
		return nil
	}
	cur := map[podium.EntryRef]*podium.Entry{}
	err = store.Log(ctx, b.ID, 0, func(s *podium.Submission) error {
		if s.Seq > head {
			return touch(s)
		}
		return replay(b, cur, s, false)
	})
	if err != nil {
		return nil, 0, 0, err
	}
	got, err := stored(ctx, store, b, watermark)
	if err != nil {
		return nil, 0, 0, err
	}
	// Whatever was committed after the head, up to now, may be in the
	// entries just read: those entries are not comparable with the replay.
	if err := store.Log(ctx, b.ID, head, touch); err != nil {
		return nil, 0, 0, err
	}
	for ref := range touched {
		if cur[ref] != nil {
			moved++
		}
		delete(cur, ref)
	}
	for _, g := range got {
		ref := podium.EntryRef{Board: b.ID, Period: g.Period, Player: g.Player}
		if touched[ref] {
			continue
		}
		compared++
		gd := describe(g.Keys, g.At.UnixMilli(), g.Seq)
		w, ok := cur[ref]
		delete(cur, ref)
		if !ok {
			diffs = append(diffs, Diff{Board: b.ID, Period: g.Period, Player: g.Player, Want: "missing", Got: gd})
		} else if wd := describe(w.Keys, w.At.UnixMilli(), w.Seq); wd != gd {
			diffs = append(diffs, Diff{Board: b.ID, Period: g.Period, Player: g.Player, Want: wd, Got: gd})
		} else if !podium.EqualResults(w.Results, g.Results) {
			diffs = append(diffs, Diff{Board: b.ID, Period: g.Period, Player: g.Player, Want: describeResults(w.Results), Got: describeResults(g.Results)})
		}
	}
	for ref, w := range cur {
		diffs = append(diffs, Diff{Board: b.ID, Period: ref.Period, Player: ref.Player, Want: describe(w.Keys, w.At.UnixMilli(), w.Seq), Got: "missing"})
	}
	return diffs, compared, moved, nil
}

// RebuildStore recomputes the entries table of every board from its whole
// log and sets the watermarks to the end of the log. It returns the number
// of entries written. Run it while no server writes to the store.
func RebuildStore(ctx context.Context, store podium.Store) (int, error) {
	return RebuildStoreProgress(ctx, store, nil)
}

// RebuildStep reports the progress of RebuildStoreProgress: called once a
// board's entries are computed (Done false, before they are written, which
// is the long part on PostgreSQL) and once they are written (Done true).
type RebuildStep struct {
	Board   string
	Index   int // 1-based position of the board
	Boards  int // boards in all
	Log     int // submissions replayed
	Entries int // entries computed
	Done    bool
}

// RebuildStoreProgress is RebuildStore with a progress callback (nil: none).
func RebuildStoreProgress(ctx context.Context, store podium.Store, progress func(RebuildStep)) (int, error) {
	boards, err := store.Boards(ctx)
	if err != nil {
		return 0, err
	}
	if progress == nil {
		progress = func(RebuildStep) {}
	}
	total := 0
	for i := range boards {
		b := &boards[i]
		// The head first: the replay below covers at least as much, and the
		// store refuses nothing; with no writer (as required) they agree.
		last, err := store.LastSeq(ctx, b.ID)
		if err != nil {
			return total, err
		}
		cur := map[podium.EntryRef]*podium.Entry{}
		n := 0
		err = store.Log(ctx, b.ID, 0, func(s *podium.Submission) error {
			if s.Seq > last {
				return nil
			}
			n++
			return replay(b, cur, s, false)
		})
		if err != nil {
			return total, fmt.Errorf("board %s: %w", b.ID, err)
		}
		entries := sortedEntries(cur)
		step := RebuildStep{Board: b.ID, Index: i + 1, Boards: len(boards), Log: n, Entries: len(entries)}
		progress(step)
		if err := store.ReplaceEntries(ctx, b.ID, entries, last); err != nil {
			return total, fmt.Errorf("board %s: %w", b.ID, err)
		}
		step.Done = true
		progress(step)
		total += len(entries)
	}
	// Aggregates that disagree with their sources get rows that correct
	// them (aggregate_check.go).
	if _, err := repairAggregates(ctx, store, boards, time.Now()); err != nil {
		return total, err
	}
	return total, nil
}
