package engine

import (
	"context"
	"slices"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
)

// Reading a board: pages of the top, around a player, a list of players,
// one entry (board.go).

// Page is a slice of a ranking.
type Page struct {
	Board   string
	Period  string
	Seq     uint64
	Total   int
	Entries []EntryView
	// Tag is the page's ETag (TopEach sets it; etag.go), "" when the
	// answer changes with the clock (decaying points).
	Tag string
	// TopPercent is Query.TopPercent; TopCount the number of entries in
	// the top TopPercent percent of Total (podium.TopPercentCount), which
	// bounds the page.
	TopPercent, TopCount int
}

// Query selects what a read sees.
type Query struct {
	Board         string
	Period        string // selector: "", current, previous or an id
	IncludeHidden bool
	// TopPercent, in hundredths of a percent (1 to 10000; 0: not asked),
	// ends a TopEach page at the last entry of the top TopPercent percent.
	TopPercent int
}

// view runs fn with the board's period locked for reading. ps is nil when
// the period has no entries. Periods older than the previous one are read
// from the store on first use and kept under the old-period budget
// (oldperiods.go).
func (e *Engine) view(ctx context.Context, q Query, fn func(bs *BoardState, def *podium.Board, period string, ps *periodState) error) error {
	bs := e.lookup(ctx, q.Board)
	if bs == nil {
		return errBoardNotFound(q.Board)
	}
	def := bs.def.Load()
	period, err := e.ResolvePeriod(def, q.Period)
	if err != nil {
		return err
	}
	bs.mu.RLock()
	if def.Retains() && def.PeriodExpired(e.now(), period) {
		// Past the board's keep_periods (retention.go): it reads as a
		// period that never had entries, on every node, whether or not
		// the sweep has deleted its rows yet.
		defer bs.mu.RUnlock()
		return fn(bs, def, period, nil)
	}
	ps := bs.periods[period]
	_, known := bs.known[period]
	if ps != nil || !known {
		defer bs.mu.RUnlock()
		if ps != nil && ps.inList.Load() {
			e.old.touch(ps)
		}
		return fn(bs, def, period, ps)
	}
	bs.mu.RUnlock()
	loaded, err := e.loadLazy(ctx, bs, period)
	if err != nil {
		return err
	}
	bs.mu.RLock()
	if loaded != nil {
		loaded.readers.Add(-1)
	}
	err = fn(bs, def, period, bs.periods[period])
	bs.mu.RUnlock()
	e.old.shrink() // what this read kept may be past the budget now
	return err
}

// fill turns index entries into views, joining names and meta; ranks
// count all entries (hidden) or visible ones.
func (e *Engine) fill(def *podium.Board, ps *periodState, ranks []int, es []rank.Entry, hidden bool) []EntryView {
	n := len(def.Keys)
	keys := make([]int64, len(es)*n)
	ids := make([]uint32, len(es))
	for i := range es {
		ids[i] = es[i].Player
	}
	names := e.players.view(ids, make([]nameView, 0, len(es)))
	out := make([]EntryView, len(es))
	of := e.total(ps, hidden)
	var sh sharedRanks
	for i, en := range es {
		k := keys[i*n : (i+1)*n : (i+1)*n]
		copy(k, en.Keys[:n])
		m := ps.meta[en.Player]
		if m == nil {
			m = emptyMeta
		}
		out[i] = EntryView{Rank: ranks[i], Player: names[i].Player, Name: names[i].Name, Keys: k,
			At: podium.FromMillis(en.At), Seq: en.Seq, Meta: m, Hidden: en.Hidden, Results: ps.results[en.Player]}
		out[i].Value, out[i].Decayed = def.Points.Decayed(k, e.now())
		out[i].Of = of
		if def.ReportsShared() {
			out[i].Shared = sh.of(ps.idx, ranks[i], &en, hidden, len(k))
		}
	}
	return out
}

func (e *Engine) total(ps *periodState, all bool) int {
	if ps == nil {
		return 0
	}
	if all {
		return ps.idx.Len()
	}
	return ps.idx.Visible()
}

// Top returns limit entries from offset (0-based) in rank order.
func (e *Engine) Top(ctx context.Context, q Query, offset, limit int) (Page, error) {
	var page Page
	err := e.view(ctx, q, func(bs *BoardState, def *podium.Board, period string, ps *periodState) error {
		page = e.topLocked(bs, def, period, ps, offset, limit, q.IncludeHidden)
		return nil
	})
	return page, err
}

// topLocked reads a page of a period; the caller holds bs.mu for reading.
func (e *Engine) topLocked(bs *BoardState, def *podium.Board, period string, ps *periodState, offset, limit int, hidden bool) Page {
	page := Page{Board: def.ID, Period: period, Seq: bs.seq, Total: e.total(ps, hidden)}
	if ps == nil {
		page.Entries = []EntryView{}
		return page
	}
	ranks := make([]int, 0, limit)
	es := make([]rank.Entry, 0, limit)
	ps.idx.Range(offset+1, limit, hidden, func(r int, en rank.Entry) bool {
		ranks = append(ranks, r)
		es = append(es, en)
		return true
	})
	page.Entries = e.fill(def, ps, ranks, es, hidden)
	return page
}

// TopEach is Top without the copies, for the hot read path: head gets the
// page's board, period, seq and total, then each gets every entry in rank
// order. The *EntryView and its Keys are reused between calls; fn runs
// with the board locked for reading, so it must be quick and must not call
// back into the engine.
func (e *Engine) TopEach(ctx context.Context, q Query, offset, limit int, head func(*Page), each func(*EntryView)) error {
	return e.view(ctx, q, func(bs *BoardState, def *podium.Board, period string, ps *periodState) error {
		page := Page{Board: def.ID, Period: period, Seq: bs.seq, Total: e.total(ps, q.IncludeHidden), Tag: bs.tag(def, period, e.players.ver.Load(), e.now)}
		if q.TopPercent > 0 {
			// The cut is taken from the total under the same lock as
			// the entries, so the page and its top_count agree.
			page.TopPercent, page.TopCount = q.TopPercent, podium.TopPercentCount(page.Total, q.TopPercent)
			limit = min(limit, page.TopCount-offset)
		}
		head(&page)
		if ps == nil {
			return nil
		}
		n := len(def.Keys)
		ev := EntryView{Keys: make([]int64, n), Of: page.Total}
		shared := def.ReportsShared()
		var sh sharedRanks
		e.players.mu.RLock()
		defer e.players.mu.RUnlock()
		ps.idx.Range(offset+1, limit, q.IncludeHidden, func(r int, en rank.Entry) bool {
			nv := e.players.nameLocked(en.Player)
			copy(ev.Keys, en.Keys[:n])
			m := ps.meta[en.Player]
			if m == nil {
				m = emptyMeta
			}
			ev.Rank, ev.Player, ev.Name, ev.At, ev.Seq, ev.Meta, ev.Hidden = r, nv.Player, nv.Name, podium.FromMillis(en.At), en.Seq, m, en.Hidden
			ev.Results = ps.results[en.Player]
			if shared {
				ev.Shared = sh.of(ps.idx, r, &en, q.IncludeHidden, n)
			}
			ev.Value, ev.Decayed = def.Points.Decayed(ev.Keys, e.now())
			each(&ev)
			return true
		})
		return nil
	})
}

// Players returns the entries of the given players in board order, each
// with its rank on the whole board. Players without an entry are left out.
func (e *Engine) Players(ctx context.Context, q Query, players []string) (Page, error) {
	var page Page
	err := e.view(ctx, q, func(bs *BoardState, def *podium.Board, period string, ps *periodState) error {
		page = Page{Board: def.ID, Period: period, Seq: bs.seq, Total: e.total(ps, q.IncludeHidden), Entries: []EntryView{}}
		if ps == nil {
			return nil
		}
		var ranks []int
		var es []rank.Entry
		seen := map[uint32]bool{}
		for _, p := range players {
			id, ok := e.players.lookup(p)
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			en, ok := ps.idx.Get(id)
			if !ok || (en.Hidden && !q.IncludeHidden) {
				continue
			}
			r, _ := ps.idx.Rank(id, q.IncludeHidden)
			ranks = append(ranks, r)
			es = append(es, en)
		}
		order := make([]int, len(es))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return ranks[a] - ranks[b] })
		sr := make([]int, len(es))
		se := make([]rank.Entry, len(es))
		for i, j := range order {
			sr[i], se[i] = ranks[j], es[j]
		}
		page.Entries = e.fill(def, ps, sr, se, q.IncludeHidden)
		return nil
	})
	return page, err
}

// Entry returns one player's entry with its rank. No entry (or a hidden
// one, unless q.IncludeHidden) is ECodeEntryNotFound.
func (e *Engine) Entry(ctx context.Context, q Query, player string) (Page, error) {
	page, err := e.Around(ctx, q, player, 0)
	return page, err
}

// Around returns the entries from rank-radius to rank+radius around a
// player's entry.
func (e *Engine) Around(ctx context.Context, q Query, player string, radius int) (Page, error) {
	var page Page
	err := e.view(ctx, q, func(bs *BoardState, def *podium.Board, period string, ps *periodState) error {
		page = Page{Board: def.ID, Period: period, Seq: bs.seq, Total: e.total(ps, q.IncludeHidden)}
		// Built only when needed: a found player must not pay for the
		// message's formatting (a read of one rank did, ~5% of its CPU).
		notFound := func() error {
			return podium.Errorf(podium.ECodeEntryNotFound, "player %q has no entry on board %q in period %s", player, def.ID, period)
		}
		if ps == nil {
			return notFound()
		}
		id, ok := e.players.lookup(player)
		if !ok {
			return notFound()
		}
		me, ok := ps.idx.Get(id)
		if !ok || (me.Hidden && !q.IncludeHidden) {
			return notFound()
		}
		r, _ := ps.idx.Rank(id, q.IncludeHidden)
		start := max(1, r-radius)
		var ranks []int
		var es []rank.Entry
		ps.idx.Range(start, r+radius-start+1, q.IncludeHidden, func(rk int, en rank.Entry) bool {
			ranks = append(ranks, rk)
			es = append(es, en)
			return true
		})
		page.Entries = e.fill(def, ps, ranks, es, q.IncludeHidden)
		return nil
	})
	return page, err
}
