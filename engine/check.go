package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
)

// Diff is one difference found by a check.
type Diff struct {
	Board  string `json:"board"`
	Period string `json:"period"`
	Player string `json:"player"`
	Want   string `json:"want"` // what the authority says
	Got    string `json:"got"`  // what the checked copy holds
}

func (d Diff) String() string {
	return fmt.Sprintf("board %s period %s player %s: want %s, got %s", d.Board, d.Period, d.Player, d.Want, d.Got)
}

// describeResults describes the kept results of a best_k entry.
func describeResults(rs []podium.Result) string {
	var b strings.Builder
	b.WriteString("results [")
	for i, r := range rs {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%v@%d#%d", r.Keys, r.At.UnixMilli(), r.Seq)
	}
	b.WriteString("]")
	return b.String()
}

func describe(keys []int64, at int64, seq uint64) string {
	keys = keys[:len(keys):len(keys)]
	return fmt.Sprintf("keys %v at %d seq %d", keys, at, seq)
}

// CheckIndexes compares every loaded in-memory index with what the store
// holds, which is the authority: the entries table with the log after the
// board's watermark replayed on top, exactly as a start-up would load it.
// It also checks each index's own rank order. It runs on the writer, so no
// write interleaves.
func (e *Engine) CheckIndexes(ctx context.Context) ([]Diff, error) {
	co := &checkOp{}
	o := &op{kind: opCheck, p: co}
	if err := e.send(ctx, o); err != nil {
		return nil, err
	}
	return co.diffs, nil
}

func (e *Engine) applyCheck(ctx context.Context) ([]Diff, error) {
	wms, err := e.store.Watermarks(ctx)
	if err != nil {
		return nil, err
	}
	var diffs []Diff
	for _, bi := range e.Boards(false) {
		bs := e.board(bi.ID)
		if bs == nil {
			continue
		}
		def := bs.def.Load()
		n := len(def.Keys)
		tail, err := e.readTail(ctx, def.ID, wms[def.ID])
		if err != nil {
			return nil, err
		}
		bs.mu.RLock()
		periods := make([]string, 0, len(bs.periods))
		for p := range bs.periods {
			periods = append(periods, p)
		}
		bs.mu.RUnlock()
		sort.Strings(periods)
		for _, period := range periods {
			stored, err := e.readPeriod(ctx, bs, period, 0)
			if err != nil {
				return nil, err
			}
			for i := range tail {
				if sub := &tail[i]; sub.Period == period {
					if _, err := e.replayInto(def, stored, e.players.intern(sub.Player), sub); err != nil {
						return nil, err
					}
				}
			}
			want := map[string]rank.Entry{}
			wantRes := map[string][]podium.Result{}
			stored.idx.Range(1, stored.idx.Len(), true, func(_ int, en rank.Entry) bool {
				name := e.players.name(en.Player).Player
				want[name] = en
				wantRes[name] = stored.results[en.Player]
				return true
			})
			bs.mu.RLock()
			ps := bs.periods[period]
			if ps == nil {
				bs.mu.RUnlock()
				continue // an old period evicted meanwhile: nothing in memory to check
			}
			got := map[string]rank.Entry{}
			gotRes := map[string][]podium.Result{}
			var prev *rank.Entry
			ps.idx.Range(1, ps.idx.Len(), true, func(r int, en rank.Entry) bool {
				name := e.players.name(en.Player).Player
				got[name] = en
				gotRes[name] = ps.results[en.Player]
				if prev != nil && compareRank(def, prev, &en) >= 0 {
					diffs = append(diffs, Diff{Board: def.ID, Period: period, Player: name, Want: fmt.Sprintf("rank %d after its predecessor", r), Got: "out of order"})
				}
				p := en
				prev = &p
				return true
			})
			bs.mu.RUnlock()
			for player, w := range want {
				wd := describe(w.Keys[:n], w.At, w.Seq)
				g, ok := got[player]
				if !ok {
					diffs = append(diffs, Diff{Board: def.ID, Period: period, Player: player, Want: wd, Got: "missing"})
				} else if gd := describe(g.Keys[:n], g.At, g.Seq); gd != wd {
					diffs = append(diffs, Diff{Board: def.ID, Period: period, Player: player, Want: wd, Got: gd})
				} else if !podium.EqualResults(wantRes[player], gotRes[player]) {
					diffs = append(diffs, Diff{Board: def.ID, Period: period, Player: player, Want: describeResults(wantRes[player]), Got: describeResults(gotRes[player])})
				}
			}
			for player, g := range got {
				if _, ok := want[player]; !ok {
					diffs = append(diffs, Diff{Board: def.ID, Period: period, Player: player, Want: "missing", Got: describe(g.Keys[:n], g.At, g.Seq)})
				}
			}
		}
	}
	diffs = append(diffs, e.aggCheckLoaded()...) // aggregate_check.go
	return diffs, nil
}

// compareRank orders two index entries of a board by podium.CompareRank,
// the ordering rule's one definition, so that a check of an index's order
// does not trust the index's own row encoding.
func compareRank(def *podium.Board, a, b *rank.Entry) int {
	n := len(def.Keys)
	return podium.CompareRank(def.Orders(), a.Keys[:n], a.At, a.Seq, b.Keys[:n], b.At, b.Seq)
}

// Reload rebuilds every in-memory index from the store, through the writer
// so that no write interleaves. Pending entries are checkpointed first.
func (e *Engine) Reload(ctx context.Context) error {
	return e.send(ctx, &op{kind: opReload})
}

func (e *Engine) applyReload(ctx context.Context) error {
	e.checkpoint(0)
	wms, err := e.store.Watermarks(ctx)
	if err != nil {
		return err
	}
	for _, bi := range e.Boards(false) {
		old := e.board(bi.ID)
		if old == nil {
			continue
		}
		fresh, err := e.loadBoard(ctx, old.def.Load(), wms[bi.ID])
		if err != nil {
			return err
		}
		e.mu.Lock()
		e.boards.put(fresh)
		e.mu.Unlock()
		e.old.dropBoard(old) // oldperiods.go
		e.aggInvalidate()
		if e.listener != nil {
			e.listener.Applied(bi.ID, "", fresh.seq, nil)
		}
	}
	return nil
}

// replay applies logged submissions to a set of entries keyed by period
// and player. With skipSeen, a submission whose seq is not above the
// entry's is taken as already reflected (the entries table can be ahead of
// its watermark).
func replay(b *podium.Board, cur map[podium.EntryRef]*podium.Entry, s *podium.Submission, skipSeen bool) error {
	ref := podium.EntryRef{Board: b.ID, Period: s.Period, Player: s.Player}
	old := cur[ref]
	if skipSeen && old != nil && s.Seq <= old.Seq {
		return nil
	}
	if s.Kind == podium.KindDelete {
		delete(cur, ref)
		return nil
	}
	sub := *s
	sub.Keys = append([]int64(nil), s.Keys...)
	if hasMeta(s.Meta) {
		sub.Meta = append([]byte(nil), s.Meta...)
	} else {
		sub.Meta = nil
	}
	next, changed, err := podium.Apply(b, old, &sub)
	if err != nil {
		return fmt.Errorf("replay seq %d: %w", s.Seq, err)
	}
	if changed {
		next.Board, next.Period, next.Player = b.ID, s.Period, s.Player
		cur[ref] = &next
	}
	return nil
}

// Replay recomputes the entries of one board from its whole submission
// log, the append-only record of every accepted write.
func Replay(ctx context.Context, store podium.Store, b *podium.Board) ([]podium.Entry, error) {
	cur := map[podium.EntryRef]*podium.Entry{}
	if err := store.Log(ctx, b.ID, 0, func(s *podium.Submission) error { return replay(b, cur, s, false) }); err != nil {
		return nil, err
	}
	return sortedEntries(cur), nil
}

// stored returns the entries of a board as a start-up would see them: the
// entries table with the log after the watermark replayed on top.
func stored(ctx context.Context, store podium.Store, b *podium.Board, watermark uint64) ([]podium.Entry, error) {
	cur := map[podium.EntryRef]*podium.Entry{}
	pcs, err := store.Periods(ctx, b.ID)
	if err != nil {
		return nil, err
	}
	for _, pc := range pcs {
		err := store.LoadEntries(ctx, b.ID, pc.ID, func(en *podium.Entry) error {
			c := *en
			c.Keys = append([]int64(nil), en.Keys...)
			c.Results = podium.CopyResults(en.Results)
			c.Meta = nil
			if hasMeta(en.Meta) {
				c.Meta = append(json.RawMessage(nil), en.Meta...)
			}
			cur[podium.EntryRef{Board: b.ID, Period: pc.ID, Player: en.Player}] = &c
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := store.Log(ctx, b.ID, watermark, func(s *podium.Submission) error { return replay(b, cur, s, true) }); err != nil {
		return nil, err
	}
	return sortedEntries(cur), nil
}

// LoadedEntries returns every entry of a board, in every period, as a
// start-up would load them: the entries table with the log after the
// board's watermark replayed on top (podium migrate copies this). Entries
// are sorted by period and player; an empty meta object is nil.
func LoadedEntries(ctx context.Context, store podium.Store, b *podium.Board, watermark uint64) ([]podium.Entry, error) {
	return stored(ctx, store, b, watermark)
}

func sortedEntries(cur map[podium.EntryRef]*podium.Entry) []podium.Entry {
	out := make([]podium.Entry, 0, len(cur))
	for _, en := range cur {
		if !hasMeta(en.Meta) {
			en.Meta = nil
		}
		out = append(out, *en)
	}
	slices.SortFunc(out, func(a, b podium.Entry) int {
		return cmp.Or(strings.Compare(a.Period, b.Period), strings.Compare(a.Player, b.Player))
	})
	return out
}

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
func CheckStoreDetail(ctx context.Context, store podium.Store) (StoreCheck, error) {
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

// snapshotter is a store that can hand out a consistent copy of itself
// (sqlite.Store), so that a long check need not stop the writer.
type snapshotter interface {
	Snapshot(ctx context.Context) (podium.Store, func() error, error)
}

// CheckLog runs CheckStore on a running engine's store. The check must see
// one state of the log, the entries and the watermarks: on a snapshot of
// the store when it can make one, so that writes go on meanwhile (the
// replay took 17 s for 1M submissions); otherwise on the writer, so that no
// commit or checkpoint interleaves, and writes wait.
func (e *Engine) CheckLog(ctx context.Context) ([]Diff, error) {
	if sn, ok := e.store.(snapshotter); ok {
		snap, release, err := sn.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		diffs, err := CheckStore(ctx, snap)
		if rerr := release(); err == nil {
			err = rerr
		}
		return diffs, err
	}
	var (
		diffs []Diff
		err   error
	)
	o := &op{kind: opFunc, p: func() { diffs, err = CheckStore(context.Background(), e.store) }}
	if serr := e.send(ctx, o); serr != nil {
		return nil, serr
	}
	return diffs, err
}
