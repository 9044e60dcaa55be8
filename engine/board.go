package engine

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/rank"
)

// BoardState is the in-memory state of one board.
type BoardState struct {
	def  atomic.Pointer[podium.Board] // replaced (never mutated) by the writer
	desc []bool                       // key directions; fixed while the board has entries

	mu sync.RWMutex
	// periods holds the loaded periods. The writer mutates an index only
	// with mu held for writing; readers hold it for reading.
	periods map[string]*periodState
	// known holds entry counts of periods that exist in the store but are
	// not loaded yet (older than the previous period).
	known map[string]int
	// loading holds the periods being read from the store; the channel
	// is closed when the load ends.
	loading map[string]chan struct{}
	seq     uint64 // last applied seq
	// pins counts, by period, the write groups that computed against a
	// period and are not finished; dirty counts its changes that wait for
	// the checkpoint. Either keeps an old period in memory (oldperiods.go).
	pins  map[string]int
	dirty map[string]int

	// gen tells this incarnation of the board from one deleted and made
	// again under the same id (or reloaded): live streams start a new
	// chain and re-check permissions when it changes. Opaque; fixed for
	// the life of the BoardState. It is the board's Gen when a shared
	// store assigned one (the same on every node), else a process-wide
	// counter.
	gen uint64

	// slots holds what modules keep with the board (hooks.go); the
	// writer's alone.
	slots map[Module]any
}

// generations numbers boardStates within the process.
var generations atomic.Uint64

// periodState is one period's ranking plus the entries' meta objects
// (kept only for entries that have a non-empty meta).
type periodState struct {
	idx  *rank.Index
	meta map[uint32]json.RawMessage
	// results holds the kept results of a best_k board's entries.
	results map[uint32][]podium.Result

	// readers counts the reads between loading the period and locking the
	// board to read it: it is not evicted under them (oldperiods.go).
	readers atomic.Int32
	// inList: the period is old and counted under the byte budget; the
	// fields after it are guarded by oldPeriods.mu.
	inList           atomic.Bool
	owner            *BoardState
	id               string
	size             int64
	lruPrev, lruNext *periodState
}

func newBoardState(b *podium.Board) *BoardState {
	bs := &BoardState{periods: map[string]*periodState{}, known: map[string]int{}, loading: map[string]chan struct{}{}, gen: b.Gen}
	if bs.gen == 0 {
		bs.gen = generations.Add(1)
	}
	bs.setDef(b)
	return bs
}

func (bs *BoardState) setDef(b *podium.Board) {
	cp := *b
	bs.def.Store(&cp)
	bs.desc = descOf(b)
}

func descOf(b *podium.Board) []bool {
	d := make([]bool, len(b.Keys))
	for i, k := range b.Keys {
		d[i] = k.Order == podium.Desc
	}
	return d
}

func newPeriodState(desc []bool) *periodState {
	return &periodState{idx: rank.New(desc), meta: map[uint32]json.RawMessage{}, results: map[uint32][]podium.Result{}}
}

// boardStates returns every board's state, taken under the engine lock.
func (e *Engine) boardStates() []*BoardState {
	e.mu.RLock()
	defer e.mu.RUnlock()
	list := make([]*BoardState, 0, e.boards.len())
	for _, bs := range e.boards.byID {
		list = append(list, bs)
	}
	return list
}

// BoardInfo is a board with its current period.
type BoardInfo struct {
	podium.Board
	Period    string
	NextReset *time.Time
	Seq       uint64
}

func (e *Engine) info(bs *BoardState) BoardInfo {
	def := bs.def.Load()
	p := podium.PeriodAt(def.Reset, e.now())
	bi := BoardInfo{Board: *def, Period: p.ID}
	if !p.End.IsZero() {
		end := p.End.UTC()
		bi.NextReset = &end
	}
	bs.mu.RLock()
	bi.Seq = bs.seq
	bs.mu.RUnlock()
	return bi
}

// Board returns one board. A missing board is ECodeBoardNotFound.
func (e *Engine) Board(id string) (BoardInfo, error) {
	bs := e.board(id)
	if bs == nil {
		return BoardInfo{}, errBoardNotFound(id)
	}
	return e.info(bs), nil
}

// Boards lists every board sorted by id; publicOnly leaves out private ones.
// It costs every board: the API's list pages with ListBoards (boardset.go).
func (e *Engine) Boards(publicOnly bool) []BoardInfo {
	var keep func(*podium.Board) bool
	if publicOnly {
		keep = func(b *podium.Board) bool { return b.Public }
	}
	out, _ := e.ListBoards("", 0, 0, keep)
	return out
}

// EntryView is one ranked entry as readers see it.
type EntryView struct {
	Rank   int
	Player string
	Name   string
	Keys   []int64
	At     time.Time
	Seq    uint64
	Meta   json.RawMessage
	Hidden bool
	// Results are the kept results of a best_k board (shared with the
	// index: read-only).
	Results []podium.Result
	// Decayed: Value is the entry's points now (a current points board,
	// settle.go), for display; the keys hold it exactly.
	Decayed bool
	Value   float64
}

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
}

// ResolvePeriod turns a period selector (current, previous or an id) into
// a period id of board b.
func (e *Engine) ResolvePeriod(b *podium.Board, sel string) (string, error) {
	switch sel {
	case "", "current":
		return podium.PeriodAt(b.Reset, e.now()).ID, nil
	case "previous":
		prev, ok := podium.PreviousPeriod(b.Reset, podium.PeriodAt(b.Reset, e.now()))
		if !ok {
			return "", podium.Errorf(podium.ECodeInvalid, "board %q never resets, so it has no previous period", b.ID)
		}
		return prev.ID, nil
	}
	if !podium.ValidPeriodID(b.Reset, sel) {
		return "", podium.Errorf(podium.ECodeInvalid, "period %q is not current, previous or a period id of this board (like %s)", sel, podium.PeriodAt(b.Reset, e.now()).ID)
	}
	return sel, nil
}

// Query selects what a read sees.
type Query struct {
	Board         string
	Period        string // selector: "", current, previous or an id
	IncludeHidden bool
}

// view runs fn with the board's period locked for reading. ps is nil when
// the period has no entries. Periods older than the previous one are read
// from the store on first use and kept under the old-period budget
// (oldperiods.go).
func (e *Engine) view(ctx context.Context, q Query, fn func(bs *BoardState, def *podium.Board, period string, ps *periodState) error) error {
	bs := e.board(q.Board)
	if bs == nil {
		return errBoardNotFound(q.Board)
	}
	def := bs.def.Load()
	period, err := e.ResolvePeriod(def, q.Period)
	if err != nil {
		return err
	}
	bs.mu.RLock()
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
	e.shrink() // what this read kept may be past the budget now
	return err
}

// loadLazy loads an old period into memory once. Concurrent callers wait
// for the one load in flight instead of reading the store again; a caller
// whose load failed (or whose context ended) leaves the period unloaded for
// the next one to try. It returns the period, if in memory, with its
// readers count raised so that it is not evicted before the caller has
// locked the board: the caller lowers it once it has. It returns nil when
// the store has no such period.
func (e *Engine) loadLazy(ctx context.Context, bs *BoardState, period string) (*periodState, error) {
	for {
		bs.mu.Lock()
		if ps := bs.periods[period]; ps != nil {
			ps.readers.Add(1)
			bs.mu.Unlock()
			return ps, nil
		}
		n, known := bs.known[period]
		if !known {
			bs.mu.Unlock()
			return nil, nil
		}
		if wait := bs.loading[period]; wait != nil {
			bs.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		bs.loading[period] = done
		bs.mu.Unlock()

		ps, err := e.readPeriod(ctx, bs, period, n)
		bs.mu.Lock()
		delete(bs.loading, period)
		close(done)
		if _, still := bs.known[period]; err == nil && still && bs.periods[period] == nil {
			bs.periods[period] = ps
			delete(bs.known, period)
			e.old.loads.Add(1)
			if isOld(bs.def.Load(), e.now(), period) {
				e.old.admitLocked(bs, period, ps)
			}
			ps.readers.Add(1)
			bs.mu.Unlock()
			e.shrink()
			return ps, nil
		}
		bs.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
}

// fill turns index entries into views, joining names and meta.
func (e *Engine) fill(def *podium.Board, ps *periodState, ranks []int, es []rank.Entry) []EntryView {
	n := len(def.Keys)
	keys := make([]int64, len(es)*n)
	ids := make([]uint32, len(es))
	for i := range es {
		ids[i] = es[i].Player
	}
	names := e.players.view(ids, make([]nameView, 0, len(es)))
	out := make([]EntryView, len(es))
	for i, en := range es {
		k := keys[i*n : (i+1)*n : (i+1)*n]
		copy(k, en.Keys[:n])
		m := ps.meta[en.Player]
		if m == nil {
			m = emptyMeta
		}
		out[i] = EntryView{Rank: ranks[i], Player: names[i].Player, Name: names[i].Name, Keys: k,
			At: podium.FromMillis(en.At), Seq: en.Seq, Meta: m, Hidden: en.Hidden, Results: ps.results[en.Player]}
		out[i].Value, out[i].Decayed = e.decayed(def, k) // settle.go
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
	page.Entries = e.fill(def, ps, ranks, es)
	return page
}

// TopEach is Top without the copies, for the hot read path: head gets the
// page's board, period, seq and total, then each gets every entry in rank
// order. The *EntryView and its Keys are reused between calls; fn runs
// with the board locked for reading, so it must be quick and must not call
// back into the engine.
func (e *Engine) TopEach(ctx context.Context, q Query, offset, limit int, head func(*Page), each func(*EntryView)) error {
	return e.view(ctx, q, func(bs *BoardState, def *podium.Board, period string, ps *periodState) error {
		page := Page{Board: def.ID, Period: period, Seq: bs.seq, Total: e.total(ps, q.IncludeHidden), Tag: e.tag(bs, def, period)}
		head(&page)
		if ps == nil {
			return nil
		}
		n := len(def.Keys)
		ev := EntryView{Keys: make([]int64, n)}
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
			ev.Value, ev.Decayed = e.decayed(def, ev.Keys) // settle.go
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
		page.Entries = e.fill(def, ps, sr, se)
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
		notFound := podium.Errorf(podium.ECodeEntryNotFound, "player %q has no entry on board %q in period %s", player, def.ID, period)
		if ps == nil {
			return notFound
		}
		id, ok := e.players.lookup(player)
		if !ok {
			return notFound
		}
		me, ok := ps.idx.Get(id)
		if !ok || (me.Hidden && !q.IncludeHidden) {
			return notFound
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
		page.Entries = e.fill(def, ps, ranks, es)
		return nil
	})
	return page, err
}

// Periods lists the periods of a board that have entries, newest first.
func (e *Engine) Periods(id string) ([]podium.PeriodCount, error) {
	bs := e.board(id)
	if bs == nil {
		return nil, errBoardNotFound(id)
	}
	bs.mu.RLock()
	out := make([]podium.PeriodCount, 0, len(bs.periods)+len(bs.known))
	for pid, ps := range bs.periods {
		if n := ps.idx.Len(); n > 0 {
			out = append(out, podium.PeriodCount{ID: pid, Entries: n})
		}
	}
	for pid, n := range bs.known {
		if bs.periods[pid] == nil {
			out = append(out, podium.PeriodCount{ID: pid, Entries: n})
		}
	}
	bs.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out, nil
}
