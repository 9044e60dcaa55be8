package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/podiumhq/podium"
)

// Old periods, those older than a board's previous period, are read from
// the store on first use (loadLazy) and kept under one byte budget for the
// whole server: a least-recently-read list of every old period in memory,
// evicted from its cold end when the bytes pass the budget. An evicted
// period goes back to the board's known counts, so the next read loads it
// again from the store, as the first read did.
//
// The current and previous periods are never in the list (the writer needs
// them). A period that ages out, because the clock passed a reset, joins
// the list when the sweep next sees it (every oldSweepEvery).
//
// A period in the list is evicted only when nothing depends on it staying:
//   - no reader is between loading it and reading it (periodState.readers);
//   - no write group that computed against it is still unapplied
//     (BoardState.pins, by period id, taken by hold and released in
//     finishGroup);
//   - none of its changes waits for the checkpoint (BoardState.dirty, by
//     period id): the store then holds exactly what memory holds.
//
// Eviction takes the board's lock for writing, so a reader holding it for
// reading never sees a period vanish under it.
//
// Lock order: docs/LOCKS.md (oldPeriods.mu is a leaf, after BoardState.mu).

// DefaultOldPeriodsBytes is the default byte budget for old periods.
const DefaultOldPeriodsBytes = 256 << 20

// oldSweepEvery is how often periods that aged out of current/previous are
// put under the budget.
var oldSweepEvery = 30 * time.Second

// oldPeriods is the server-wide list of old periods in memory.
type oldPeriods struct {
	budget int64 // bytes; 0: keep none once read
	now    podium.Clock
	src    periodSource // the boards and their lazy loads (the engine)

	mu sync.Mutex
	// head is the most recently read period, tail the least; the list
	// links live in the periodStates (lruPrev, lruNext).
	head, tail *periodState
	n          int
	bytes      atomic.Int64 // sum of size over the list

	evictions atomic.Int64
	loads     atomic.Int64
}

// periodSource is what the old-period list needs of the engine: the
// boards to sweep, and the one load of a period that readers share
// (Engine.loadLazy, board.go).
type periodSource interface {
	boardStates() []*BoardState
	loadLazy(ctx context.Context, bs *BoardState, period string) (*periodState, error)
}

func newOldPeriods(budget int64, now podium.Clock, src periodSource) *oldPeriods {
	switch {
	case budget == 0:
		budget = DefaultOldPeriodsBytes
	case budget < 0:
		budget = 0
	}
	return &oldPeriods{budget: budget, now: now, src: src}
}

// periodBytes estimates the heap bytes of a period: the rank index's own
// estimate (rank.Index.Bytes: leaves, inner nodes, the player lookup) plus
// the meta and best_k results maps: per map entry the key, the slice header
// and Go's table overhead (oldMapEntry), plus the bytes the slices point
// to. BenchmarkOldPeriodMemory compares it with the heap a period takes
// (within 10% either way at 10k and 100k entries). The caller holds the
// board's lock.
func periodBytes(ps *periodState) int64 {
	b := int64(ps.idx.Bytes()) + int64(unsafe.Sizeof(*ps))
	for _, m := range ps.meta {
		b += oldMapEntry + int64(cap(m))
	}
	var r podium.Result
	for _, rs := range ps.results {
		b += oldMapEntry + int64(cap(rs))*int64(unsafe.Sizeof(r))
		for i := range rs {
			b += int64(cap(rs[i].Keys)) * 8
		}
	}
	return b
}

// oldMapEntry is the estimated cost of one map entry (uint32 key, a slice
// header value) with Go's map overhead and the size-class rounding of the
// small slice it points to: a 32-byte slot plus control byte in a table
// grown by doubling (so 55-100% full) comes to about 50-65 bytes, and a
// meta object rounds up by ~8 bytes more. BenchmarkOldPeriodMemory
// measured 23 bytes a meta entry above 2*(4+24) = 56: hence 80.
const oldMapEntry = 80

// isOld reports whether period is older than the previous period of def
// at now: the periods the writer does not keep for itself.
func isOld(def *podium.Board, now time.Time, period string) bool {
	cur := podium.PeriodAt(def.Reset, now)
	if period == cur.ID {
		return false
	}
	if prev, ok := podium.PreviousPeriod(def.Reset, cur); ok && period == prev.ID {
		return false
	}
	return true
}

// admitLocked puts a loaded old period at the hot end of the list; the
// caller holds bs.mu (either way).
func (c *oldPeriods) admitLocked(bs *BoardState, period string, ps *periodState) {
	size := periodBytes(ps)
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps.inList.Load() {
		c.bytes.Add(size - ps.size)
		ps.size = size
		c.toFrontLocked(ps)
		return
	}
	ps.owner, ps.id, ps.size = bs, period, size
	ps.inList.Store(true)
	c.pushFrontLocked(ps)
	c.n++
	c.bytes.Add(size)
}

// resizeLocked re-estimates a listed period after a write; the caller
// holds bs.mu.
func (c *oldPeriods) resizeLocked(ps *periodState) {
	if !ps.inList.Load() {
		return
	}
	size := periodBytes(ps)
	c.mu.Lock()
	if ps.inList.Load() {
		c.bytes.Add(size - ps.size)
		ps.size = size
	}
	c.mu.Unlock()
}

// touch marks a listed period as just read.
func (c *oldPeriods) touch(ps *periodState) {
	c.mu.Lock()
	if ps.inList.Load() {
		c.toFrontLocked(ps)
	}
	c.mu.Unlock()
}

func (c *oldPeriods) pushFrontLocked(ps *periodState) {
	ps.lruPrev, ps.lruNext = nil, c.head
	if c.head != nil {
		c.head.lruPrev = ps
	}
	c.head = ps
	if c.tail == nil {
		c.tail = ps
	}
}

func (c *oldPeriods) unlinkLocked(ps *periodState) {
	if ps.lruPrev != nil {
		ps.lruPrev.lruNext = ps.lruNext
	} else {
		c.head = ps.lruNext
	}
	if ps.lruNext != nil {
		ps.lruNext.lruPrev = ps.lruPrev
	} else {
		c.tail = ps.lruPrev
	}
	ps.lruPrev, ps.lruNext = nil, nil
}

func (c *oldPeriods) toFrontLocked(ps *periodState) {
	if c.head == ps {
		return
	}
	c.unlinkLocked(ps)
	c.pushFrontLocked(ps)
}

// removeLocked takes a period off the list (evicted, or no longer old).
func (c *oldPeriods) removeLocked(ps *periodState) {
	if !ps.inList.Load() {
		return
	}
	c.unlinkLocked(ps)
	ps.inList.Store(false)
	c.n--
	c.bytes.Add(-ps.size)
	ps.size = 0
}

// dropBoard forgets the listed periods of a board state that was deleted
// or replaced: they are unreachable, so nothing else would free them.
func (c *oldPeriods) dropBoard(bs *BoardState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ps := c.head; ps != nil; {
		next := ps.lruNext
		if ps.owner == bs {
			c.removeLocked(ps)
		}
		ps = next
	}
}

// shrink evicts least recently read periods until the list fits the
// budget, skipping those that must stay (see the top of this file); they
// move to the hot end, so one pass looks at each period at most once.
// The caller holds no board lock.
func (c *oldPeriods) shrink() {
	if c.bytes.Load() <= c.budget {
		return
	}
	c.mu.Lock()
	tries := c.n
	c.mu.Unlock()
	for ; tries > 0 && c.bytes.Load() > c.budget; tries-- {
		c.mu.Lock()
		ps := c.tail
		if ps == nil {
			c.mu.Unlock()
			return
		}
		// Move it to the front now: if it stays, the next try looks at
		// the next coldest; if it goes, its place does not matter.
		c.toFrontLocked(ps)
		bs, period := ps.owner, ps.id
		c.mu.Unlock()
		c.evict(bs, period, ps)
	}
}

// evict removes one listed period from memory if nothing needs it.
func (c *oldPeriods) evict(bs *BoardState, period string, ps *periodState) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.periods[period] != ps {
		// The board was reset or replaced: ps is unreachable already.
		c.mu.Lock()
		c.removeLocked(ps)
		c.mu.Unlock()
		return
	}
	if !isOld(bs.def.Load(), c.now(), period) {
		// The clock went back: the writer owns it again.
		c.mu.Lock()
		c.removeLocked(ps)
		c.mu.Unlock()
		return
	}
	if bs.pins[period] > 0 || bs.dirty[period] > 0 || ps.readers.Load() > 0 {
		return
	}
	delete(bs.periods, period)
	if n := ps.idx.Len(); n > 0 {
		bs.setKnown(period, n)
	}
	c.mu.Lock()
	c.removeLocked(ps)
	c.mu.Unlock()
	c.evictions.Add(1)
}

// sweepOld puts the periods that aged out of current/previous under the
// budget, then shrinks to it.
func (c *oldPeriods) sweepOld() {
	now := c.now()
	for _, bs := range c.src.boardStates() {
		def := bs.def.Load()
		if def.Retains() {
			c.dropExpired(bs, def, now)
		}
		bs.mu.RLock()
		for id, ps := range bs.periods {
			if !ps.inList.Load() && isOld(def, now, id) {
				c.admitLocked(bs, id, ps)
			}
		}
		bs.mu.RUnlock()
	}
	c.shrink()
}

// dropExpired forgets the periods of bs past its keep_periods
// (retention.go): reads already answer them as empty, and the retention
// sweep deletes their rows from the store. A period something still
// needs (the conditions of evict) goes at a later sweep.
func (c *oldPeriods) dropExpired(bs *BoardState, def *podium.Board, now time.Time) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	for id := range bs.known {
		if def.PeriodExpired(now, id) {
			delete(bs.known, id)
		}
	}
	for id, ps := range bs.periods {
		if !def.PeriodExpired(now, id) || bs.pins[id] > 0 || bs.dirty[id] > 0 || ps.readers.Load() > 0 {
			continue
		}
		delete(bs.periods, id)
		c.mu.Lock()
		c.removeLocked(ps)
		c.mu.Unlock()
	}
}

// sweeper runs sweepOld every oldSweepEvery until stop is closed (the
// engine closes).
func (c *oldPeriods) sweeper(stop <-chan struct{}) {
	tick := time.NewTicker(oldSweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			c.sweepOld()
		}
	}
}

// hold loads a period that exists in the store and keeps it in
// memory until group g is finished (applied or failed): the group computes
// against it and applies to it. A period the store does not have is held
// too, so that once the group creates it nothing evicts it before the
// group is done with it.
func (c *oldPeriods) hold(g *Group, bs *BoardState, period string) error {
	k := bpKey{bs, period}
	if _, ok := g.held[k]; ok {
		return nil
	}
	if def := bs.def.Load(); def.PeriodExpired(c.now(), period) {
		// retention.go: the sweep deletes it; a write would make rows
		// that it deletes next, and memory it drops.
		return podium.Errorf(podium.ECodeConflict, "period %s of board %q is older than the %d past periods the board keeps (keep_periods)", period, def.ID, def.KeepPeriods)
	}
	if g.held == nil {
		g.held = map[bpKey]struct{}{}
	}
	bs.mu.Lock()
	if _, known := bs.known[period]; !known || bs.periods[period] != nil {
		bs.pinLocked(period) // the usual case: in memory, or nowhere
		bs.mu.Unlock()
		g.held[k] = struct{}{}
		return nil
	}
	bs.mu.Unlock()
	for {
		loaded, err := c.src.loadLazy(context.Background(), bs, period)
		if err != nil {
			return err
		}
		bs.mu.Lock()
		if loaded != nil {
			loaded.readers.Add(-1)
		}
		_, known := bs.known[period]
		if bs.periods[period] == nil && known {
			bs.mu.Unlock() // evicted between the load and the lock: again
			continue
		}
		bs.pinLocked(period)
		bs.mu.Unlock()
		g.held[k] = struct{}{}
		return nil
	}
}

func (bs *BoardState) pinLocked(period string) {
	if bs.pins == nil {
		bs.pins = map[string]int{}
	}
	bs.pins[period]++
}

// pinLoaded holds a period on every board given (nil ones are skipped)
// if none of them has it only in the store: ok is false, and nothing is
// held, when one of them would have to read it. unpin ends the holds.
func (c *oldPeriods) pinLoaded(boards []*BoardState, period string) (unpin func(), ok bool) {
	var held []*BoardState
	unpin = func() {
		for _, bs := range held {
			bs.mu.Lock()
			if bs.pins[period]--; bs.pins[period] <= 0 {
				delete(bs.pins, period)
			}
			bs.mu.Unlock()
		}
		c.shrink()
	}
	for _, bs := range boards {
		if bs == nil {
			continue
		}
		bs.mu.Lock()
		_, known := bs.known[period]
		if known && bs.periods[period] == nil {
			bs.mu.Unlock()
			unpin()
			return nil, false
		}
		bs.pinLocked(period)
		bs.mu.Unlock()
		held = append(held, bs)
	}
	return unpin, true
}

// release ends the holds of group g, re-estimating the old periods it
// wrote to, and shrinks to the budget if they grew past it.
func (c *oldPeriods) release(g *Group) {
	if len(g.held) == 0 {
		return
	}
	for k := range g.held {
		k.bs.mu.Lock()
		if k.bs.pins[k.period]--; k.bs.pins[k.period] <= 0 {
			delete(k.bs.pins, k.period)
		}
		if ps := k.bs.periods[k.period]; ps != nil {
			c.resizeLocked(ps)
		}
		k.bs.mu.Unlock()
	}
	g.held = nil
	c.shrink()
}

// OldPeriodStats is what the old-period budget holds now.
type OldPeriodStats struct {
	Periods   int   // old periods in memory under the budget
	Bytes     int64 // their estimated bytes
	Budget    int64
	Evictions int64 // periods evicted since start
	Loads     int64 // old periods read from the store since start
}

// stats reports the old-period budget's state.
func (c *oldPeriods) stats() OldPeriodStats {
	c.mu.Lock()
	n := c.n
	c.mu.Unlock()
	return OldPeriodStats{Periods: n, Bytes: c.bytes.Load(), Budget: c.budget, Evictions: c.evictions.Load(), Loads: c.loads.Load()}
}
