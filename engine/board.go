package engine

import (
	"context"
	"encoding/json"
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
	// periods, known and loading stay nil until used (setPeriod,
	// setKnown, load): an empty board costs less (issue 22: a million
	// boards; an empty map is 48 B).
	bs := &BoardState{gen: b.Gen}
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

// setPeriod loads a period's state. bs.mu held for writing (or the state
// not published yet).
func (bs *BoardState) setPeriod(period string, ps *periodState) {
	if bs.periods == nil {
		bs.periods = map[string]*periodState{}
	}
	bs.periods[period] = ps
}

// setKnown records that a period not loaded holds n entries in the
// store. bs.mu held for writing (or the state not published yet).
func (bs *BoardState) setKnown(period string, n int) {
	if bs.known == nil {
		bs.known = map[string]int{}
	}
	bs.known[period] = n
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
// With several nodes, a board made on another node an instant ago is
// found (lookup).
func (e *Engine) Board(id string) (BoardInfo, error) {
	bs := e.lookup(e.stopCtx, id)
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
	Rank int
	// Of is the number of ranked entries Rank counts among (the page's
	// total: visible entries, or all with include_hidden), for the
	// percentile; 0 when unknown.
	Of int
	// Shared is the rank in standard competition ranking (entries equal
	// on every key share the first one's rank) when the board reports it
	// (podium.RankShared), in the numbering of Rank; 0 otherwise.
	Shared int
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
	// podium.Points.Decayed), for display; the keys hold it exactly.
	Decayed bool
	Value   float64
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
		if bs.loading == nil {
			bs.loading = map[string]chan struct{}{}
		}
		bs.loading[period] = done
		bs.mu.Unlock()

		ps, err := e.ld.readPeriod(ctx, bs, period, n)
		bs.mu.Lock()
		delete(bs.loading, period)
		close(done)
		if _, still := bs.known[period]; err == nil && still && bs.periods[period] == nil {
			bs.setPeriod(period, ps)
			delete(bs.known, period)
			e.old.loads.Add(1)
			if isOld(bs.def.Load(), e.now(), period) {
				e.old.admitLocked(bs, period, ps)
			}
			ps.readers.Add(1)
			bs.mu.Unlock()
			e.old.shrink()
			return ps, nil
		}
		bs.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
}

// Periods lists the periods of a board that have entries, newest first,
// but for those past the board's keep_periods (retention.go), which are
// gone or going.
func (e *Engine) Periods(id string) ([]podium.PeriodCount, error) {
	bs := e.lookup(e.stopCtx, id)
	if bs == nil {
		return nil, errBoardNotFound(id)
	}
	def, now := bs.def.Load(), e.now()
	bs.mu.RLock()
	out := make([]podium.PeriodCount, 0, len(bs.periods)+len(bs.known))
	for pid, ps := range bs.periods {
		if n := ps.idx.Len(); n > 0 && !def.PeriodExpired(now, pid) {
			out = append(out, podium.PeriodCount{ID: pid, Entries: n})
		}
	}
	for pid, n := range bs.known {
		if bs.periods[pid] == nil && !def.PeriodExpired(now, pid) {
			out = append(out, podium.PeriodCount{ID: pid, Entries: n})
		}
	}
	bs.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out, nil
}
