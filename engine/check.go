package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

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

// Checker compares the engine's memory and its store with what they
// derive from (podium check, POST /v1/admin/check) and rebuilds the
// indexes (POST /v1/admin/reload). The aggregates' check against their
// sources is the aggregate module's own, through the IndexChecker hook.
type Checker struct{ e *Engine }

// Checker returns the engine's checker.
func (e *Engine) Checker() Checker { return Checker{e} }

// Indexes compares every loaded in-memory index with what the store
// holds, which is the authority: the entries table with the log after the
// board's watermark replayed on top, exactly as a start-up would load it.
// It also checks each index's own rank order, and asks the IndexCheckers
// (the aggregates against their sources). It runs on the writer, so no
// write interleaves. In shared mode a node behind the others is not an
// index that differs from the database: the check first waits for a
// round of the follower that polls every head, and a check that still
// finds differences (other nodes wrote meanwhile) waits for one more
// round and runs again; the second answer counts. Errors: the write
// path's (unavailable while the engine takes no writes) and the store's.
func (c Checker) Indexes(ctx context.Context) ([]Diff, error) {
	sh := c.e.sh
	if sh == nil || !c.e.Ready() {
		return c.once(ctx)
	}
	for try := 0; ; try++ {
		if err := sh.awaitRound(ctx, true); err != nil {
			return nil, err
		}
		d, err := c.once(ctx)
		if err != nil || len(d) == 0 || try == 1 {
			return d, err
		}
	}
}

// once runs the check on the writer.
func (c Checker) once(ctx context.Context) ([]Diff, error) {
	co := &checkOp{}
	o := &op{kind: opCheck, p: co}
	if err := c.e.send(ctx, o); err != nil {
		return nil, err
	}
	return co.diffs, nil
}

// indexes is Indexes on the writer. In shared mode Indexes has the
// follower catch up first, and the entries table, written through there,
// can run ahead while the check reads: an entry stored at a seq past the
// one the index has applied is a write committed since, not a difference.
func (c Checker) indexes(ctx context.Context) ([]Diff, error) {
	e := c.e
	shared := e.sh != nil
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
		d, err := c.board(ctx, bs, wms[bi.ID], shared)
		if err != nil {
			return nil, err
		}
		diffs = append(diffs, d...)
	}
	for _, m := range e.hooks.modules {
		if x, ok := m.(IndexChecker); ok {
			diffs = append(diffs, x.CheckIndexes(c)...)
		}
	}
	defs := map[string]*podium.Board{}
	for _, bs := range e.boardStates() {
		def := bs.def.Load()
		defs[def.ID] = def
	}
	return keptDiffs(diffs, defs, e.now()), nil // retention.go
}

// board compares one board's periods in memory with the store, its
// entries table and the log after watermark wm. ahead (shared mode) skips
// the entries stored at a seq past the index's: writes of other nodes
// committed after the catch-up.
func (c Checker) board(ctx context.Context, bs *BoardState, wm uint64, ahead bool) ([]Diff, error) {
	e := c.e
	var diffs []Diff
	bs.mu.RLock()
	seq := bs.seq
	bs.mu.RUnlock()
	def := bs.def.Load()
	n := len(def.Keys)
	tail, err := e.ld.readTail(ctx, def.ID, wm)
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
		stored, err := e.ld.readPeriod(ctx, bs, period, 0)
		if err != nil {
			return nil, err
		}
		for i := range tail {
			if sub := &tail[i]; sub.Period == period && (!ahead || sub.Seq <= seq) {
				if _, err := e.ld.replayInto(def, stored, e.players.intern(sub.Player), sub); err != nil {
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
			if ahead && w.Seq > seq {
				delete(got, player) // written by another node since the catch-up
				continue
			}
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
	return diffs, nil
}

// IndexChecker is a module with a check of its own over the indexes in
// memory (aggregate: each aggregate against its sources). Checker.Indexes
// calls it on the writer, so nothing changes meanwhile, after the core's
// check and in registration order; it returns its differences sorted.
type IndexChecker interface {
	CheckIndexes(c Checker) []Diff
}

// Board returns the state of a board, or nil.
func (c Checker) Board(id string) *BoardState { return c.e.board(id) }

// PlayerID is the player id behind an index's dense player number.
func (c Checker) PlayerID(pid uint32) string { return c.e.players.name(pid).Player }

// PinLoaded holds a period in memory on every board given (nil ones are
// skipped) if each has it there: ok is false, and nothing is held, when
// one of them has it only in the store. unpin ends the holds.
func (c Checker) PinLoaded(boards []*BoardState, period string) (unpin func(), ok bool) {
	return c.e.old.pinLoaded(boards, period) // oldperiods.go
}

// LoadedPeriods returns the ids of the board's periods in memory, sorted.
func (bs *BoardState) LoadedPeriods() []string {
	bs.mu.RLock()
	ids := make([]string, 0, len(bs.periods))
	for p := range bs.periods {
		ids = append(ids, p)
	}
	bs.mu.RUnlock()
	slices.Sort(ids)
	return ids
}

// EachPlayer calls fn with the player of every entry of a period in
// memory, hidden ones too. fn runs under the board's read lock: it must
// not call back into the board.
func (bs *BoardState) EachPlayer(period string, fn func(pid uint32)) {
	bs.mu.RLock()
	defer bs.mu.RUnlock()
	if ps := bs.periods[period]; ps != nil {
		ps.idx.Range(1, ps.idx.Len(), true, func(_ int, en rank.Entry) bool {
			fn(en.Player)
			return true
		})
	}
}

// LoadedEntry returns a player's entry of a period in memory (its keys,
// a copy, and its kept results), or nil.
func (bs *BoardState) LoadedEntry(period string, pid uint32) *podium.Entry {
	n := len(bs.def.Load().Keys)
	bs.mu.RLock()
	defer bs.mu.RUnlock()
	ps := bs.periods[period]
	if ps == nil {
		return nil
	}
	en, ok := ps.idx.Get(pid)
	if !ok {
		return nil
	}
	return &podium.Entry{Keys: append([]int64(nil), en.Keys[:n]...), Results: ps.results[pid]}
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
// Errors: the write path's and the store's.
func (c Checker) Reload(ctx context.Context) error {
	return c.e.send(ctx, &op{kind: opReload})
}

// reload is Reload on the writer.
func (c Checker) reload(ctx context.Context) error {
	e := c.e
	e.pl.checkpoint(0)
	wms, err := e.store.Watermarks(ctx)
	if err != nil {
		return err
	}
	for _, bi := range e.Boards(false) {
		old := e.board(bi.ID)
		if old == nil {
			continue
		}
		fresh, err := e.ld.loadBoard(ctx, old.def.Load(), wms[bi.ID])
		if err != nil {
			return err
		}
		e.mu.Lock()
		e.boards.put(fresh)
		e.mu.Unlock()
		e.old.dropBoard(old) // oldperiods.go
		e.hooks.boardChanged(old.def.Load(), fresh.def.Load())
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

// snapshotter is a store that can hand out a consistent copy of itself
// (sqlite.Store), so that a long check need not stop the writer.
type snapshotter interface {
	Snapshot(ctx context.Context) (podium.Store, func() error, error)
}

// Log runs CheckStore on a running engine's store. The check must see
// one state of the log, the entries and the watermarks: on a snapshot of
// the store when it can make one, so that writes go on meanwhile (the
// replay took 17 s for 1M submissions); otherwise on the writer, so that no
// commit or checkpoint interleaves, and writes wait.
func (c Checker) Log(ctx context.Context) ([]Diff, error) {
	e := c.e
	if sn, ok := e.store.(snapshotter); ok {
		snap, release, err := sn.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		r, err := checkStoreAt(ctx, snap, e.now())
		diffs := r.Diffs
		if rerr := release(); err == nil {
			err = rerr
		}
		return diffs, err
	}
	var (
		diffs []Diff
		err   error
	)
	o := &op{kind: opFunc, p: func() {
		var r StoreCheck
		r, err = checkStoreAt(context.Background(), e.store, e.now())
		diffs = r.Diffs
	}}
	if serr := e.send(ctx, o); serr != nil {
		return nil, serr
	}
	return diffs, err
}
