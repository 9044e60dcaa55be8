package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"

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

func describe(keys []int64, at int64, seq uint64) string {
	return fmt.Sprintf("keys %v at %d seq %d", keys, at, seq)
}

// CheckIndexes compares every loaded in-memory index with the entries in
// the store, which is the authority, and returns the differences. It also
// checks each index's own rank order.
func (e *Engine) CheckIndexes(ctx context.Context) ([]Diff, error) {
	var diffs []Diff
	for _, bi := range e.Boards(false) {
		bs := e.board(bi.ID)
		if bs == nil {
			continue
		}
		def := bs.def.Load()
		n := len(def.Keys)
		bs.mu.RLock()
		periods := make([]string, 0, len(bs.periods))
		for p := range bs.periods {
			periods = append(periods, p)
		}
		bs.mu.RUnlock()
		sort.Strings(periods)
		for _, period := range periods {
			want := map[string]podium.Entry{}
			err := e.store.LoadEntries(ctx, def.ID, period, func(en *podium.Entry) error {
				c := *en
				c.Keys = append([]int64(nil), en.Keys...)
				want[en.Player] = c
				return nil
			})
			if err != nil {
				return nil, err
			}
			// Hold the board's read lock so the writer cannot apply between
			// the store read and the index walk of a committed batch.
			bs.mu.RLock()
			ps := bs.periods[period]
			got := map[string]rank.Entry{}
			var prev *rank.Entry
			ps.idx.Range(1, ps.idx.Len(), true, func(r int, en rank.Entry) bool {
				name := e.players.name(en.Player).Player
				got[name] = en
				if prev != nil && compareRank(bs.desc, prev, &en) >= 0 {
					diffs = append(diffs, Diff{Board: def.ID, Period: period, Player: name, Want: fmt.Sprintf("rank %d after its predecessor", r), Got: "out of order"})
				}
				p := en
				prev = &p
				return true
			})
			bs.mu.RUnlock()
			for player, w := range want {
				g, ok := got[player]
				wd := describe(w.Keys, w.At.UnixMilli(), w.Seq)
				if !ok {
					diffs = append(diffs, Diff{Board: def.ID, Period: period, Player: player, Want: wd, Got: "missing"})
					continue
				}
				if gd := describe(g.Keys[:n], g.At, g.Seq); gd != wd {
					diffs = append(diffs, Diff{Board: def.ID, Period: period, Player: player, Want: wd, Got: gd})
				}
			}
			for player, g := range got {
				if _, ok := want[player]; !ok {
					diffs = append(diffs, Diff{Board: def.ID, Period: period, Player: player, Want: "missing", Got: describe(g.Keys[:n], g.At, g.Seq)})
				}
			}
		}
	}
	return diffs, nil
}

func compareRank(desc []bool, a, b *rank.Entry) int {
	for i, d := range desc {
		if a.Keys[i] == b.Keys[i] {
			continue
		}
		if (a.Keys[i] < b.Keys[i]) != d {
			return -1
		}
		return 1
	}
	switch {
	case a.At != b.At:
		if a.At < b.At {
			return -1
		}
		return 1
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// Reload rebuilds every in-memory index from the store, through the writer
// so that no write interleaves.
func (e *Engine) Reload(ctx context.Context) error {
	return e.send(ctx, &op{kind: opReload})
}

func (e *Engine) applyReload(ctx context.Context) error {
	for _, bi := range e.Boards(false) {
		bs := e.board(bi.ID)
		if bs == nil {
			continue
		}
		fresh, err := e.loadBoard(ctx, bs.def.Load())
		if err != nil {
			return err
		}
		bs.mu.Lock()
		bs.periods, bs.known, bs.seq = fresh.periods, fresh.known, fresh.seq
		bs.mu.Unlock()
	}
	return nil
}

// Replay recomputes the entries of one board from its submission log, the
// append-only record of every accepted write.
func Replay(ctx context.Context, store podium.Store, b *podium.Board) ([]podium.Entry, error) {
	cur := map[podium.EntryRef]*podium.Entry{}
	err := store.Log(ctx, b.ID, func(s *podium.Submission) error {
		ref := podium.EntryRef{Board: s.Board, Period: s.Period, Player: s.Player}
		if s.Kind == podium.KindDelete {
			delete(cur, ref)
			return nil
		}
		sub := *s
		sub.Keys = append([]int64(nil), s.Keys...)
		sub.Meta = append([]byte(nil), s.Meta...)
		next, changed, err := podium.Apply(b, cur[ref], &sub)
		if err != nil {
			return fmt.Errorf("replay seq %d: %w", s.Seq, err)
		}
		if changed {
			n := next
			cur[ref] = &n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]podium.Entry, 0, len(cur))
	for _, en := range cur {
		if !hasMeta(en.Meta) {
			en.Meta = nil
		}
		out = append(out, *en)
	}
	slices.SortFunc(out, func(a, b podium.Entry) int {
		if a.Period != b.Period {
			if a.Period < b.Period {
				return -1
			}
			return 1
		}
		if a.Player < b.Player {
			return -1
		}
		if a.Player > b.Player {
			return 1
		}
		return 0
	})
	return out, nil
}

// CheckStore compares the entries table of every board with a replay of
// its log and returns the differences.
func CheckStore(ctx context.Context, store podium.Store) ([]Diff, error) {
	boards, err := store.Boards(ctx)
	if err != nil {
		return nil, err
	}
	var diffs []Diff
	for i := range boards {
		b := &boards[i]
		want, err := Replay(ctx, store, b)
		if err != nil {
			return nil, fmt.Errorf("board %s: %w", b.ID, err)
		}
		wantBy := map[podium.EntryRef]podium.Entry{}
		periods := map[string]bool{}
		for _, en := range want {
			wantBy[podium.EntryRef{Board: b.ID, Period: en.Period, Player: en.Player}] = en
			periods[en.Period] = true
		}
		pcs, err := store.Periods(ctx, b.ID)
		if err != nil {
			return nil, err
		}
		for _, pc := range pcs {
			periods[pc.ID] = true
		}
		for period := range periods {
			seen := map[string]bool{}
			err := store.LoadEntries(ctx, b.ID, period, func(en *podium.Entry) error {
				seen[en.Player] = true
				ref := podium.EntryRef{Board: b.ID, Period: period, Player: en.Player}
				gd := describe(en.Keys, en.At.UnixMilli(), en.Seq)
				w, ok := wantBy[ref]
				if !ok {
					diffs = append(diffs, Diff{Board: b.ID, Period: period, Player: en.Player, Want: "missing", Got: gd})
					return nil
				}
				if wd := describe(w.Keys, w.At.UnixMilli(), w.Seq); wd != gd {
					diffs = append(diffs, Diff{Board: b.ID, Period: period, Player: en.Player, Want: wd, Got: gd})
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			for ref, w := range wantBy {
				if ref.Period == period && !seen[ref.Player] {
					diffs = append(diffs, Diff{Board: b.ID, Period: period, Player: ref.Player, Want: describe(w.Keys, w.At.UnixMilli(), w.Seq), Got: "missing"})
				}
			}
		}
	}
	return diffs, nil
}

// RebuildStore recomputes the entries table of every board from its log.
// It returns the number of entries written.
func RebuildStore(ctx context.Context, store podium.Store) (int, error) {
	boards, err := store.Boards(ctx)
	if err != nil {
		return 0, err
	}
	total := 0
	for i := range boards {
		entries, err := Replay(ctx, store, &boards[i])
		if err != nil {
			return total, fmt.Errorf("board %s: %w", boards[i].ID, err)
		}
		if err := store.ReplaceEntries(ctx, boards[i].ID, entries); err != nil {
			return total, fmt.Errorf("board %s: %w", boards[i].ID, err)
		}
		total += len(entries)
	}
	return total, nil
}
