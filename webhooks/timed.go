package webhooks

import (
	"container/heap"
	"sync"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
)

// Events that time causes rather than a write: a board's period ends, a
// contest freezes, a contest ends. Nothing is written at that instant, so
// no commit can carry the event: the module keeps, for each periodic board
// and each contest, the next instant it must look at in a min-heap (the
// schedule below), fed at Load and by the boards' and contests' changes,
// and the worker's loop (worker.go) asks it, each round, whether its
// earliest instant has come (EmitDue, timed_emit.go). A round with nothing
// due costs one look at the heap's top, whatever the number of boards.

// The event types that time causes.
const (
	// TypePeriodEnded: a periodic board's period ended; its data holds the
	// period's final top (Config.PeriodTop entries).
	TypePeriodEnded = "period.ended"
	// TypeContestFrozen: a contest reached its freeze time.
	TypeContestFrozen = "contest.frozen"
	// TypeContestEnded: a contest reached its end.
	TypeContestEnded = "contest.ended"
)

// Defaults of the timed events.
const (
	// DefaultPeriodTop is how many entries a period.ended event lists.
	DefaultPeriodTop = 10
	// MaxPeriodTop bounds Config.PeriodTop (the payload's size).
	MaxPeriodTop = 100
	// DefaultTimedGrace is how long after an instant its event waits, for
	// scores and solves dated before it that are still in flight on
	// another node (and for clock skew between nodes).
	DefaultTimedGrace = 5 * time.Second
	// timedRetry is how long a timed event whose write failed waits
	// before it is tried again.
	timedRetry = time.Minute
	// timedBatch bounds the instants one EmitDue handles (and the boards
	// one engine.Work locks); the rest wait for the next round.
	timedBatch = 256
)

// dueKind is what an instant of the schedule is.
type dueKind uint8

const (
	duePeriod dueKind = iota + 1 // a board's period ends (id: the board)
	dueFreeze                    // a contest freezes (id: the contest)
	dueEnd                       // a contest ends (id: the contest)
)

// dueKey names one thing the schedule watches: at most one instant each.
type dueKey struct {
	kind dueKind
	id   string
}

// dueItem is an instant the schedule hands out: at is the instant (a
// period's end, a contest's freeze or end).
type dueItem struct {
	key dueKey
	at  time.Time
}

// heapItem is one instant in the heap: due is when to look at it (its
// instant plus the grace, or a retry), in Unix milliseconds; the instant
// itself is in the key's slot. With a daily board each board has one,
// so it is kept small: 40 bytes, where two time.Time made it 80, and the
// schedule was 191 B of an empty board's ~1 KiB (issue 22).
type heapItem struct {
	key dueKey
	due int64
	ver uint64
}

type dueHeap []heapItem

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(heapItem)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// slot is the instant now scheduled for a key, in Unix milliseconds
// (periods' ends and contests' instants are whole milliseconds): a heap
// item whose ver is not its key's is stale (replaced or dropped) and
// skipped when it comes up, rather than searched for.
type slot struct {
	ver uint64
	at  int64
}

// dueMillis is t in Unix milliseconds, rounded up: looking at an instant
// up to a millisecond late, never early.
func dueMillis(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.Before(time.UnixMilli(ms)) || t.After(time.UnixMilli(ms)) {
		ms++
	}
	return ms
}

// schedule is the min-heap of instants, by due. mu is a leaf lock
// (docs/LOCKS.md).
type schedule struct {
	mu  sync.Mutex
	h   dueHeap
	cur map[dueKey]slot
	ver uint64
	// contests remembers, by key, the instant last scheduled for a
	// contest, so that a contest's many changes (every solve) schedule
	// again only an instant that moved.
	contests map[dueKey]time.Time
}

func (s *schedule) init() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		s.cur, s.contests = map[dueKey]slot{}, map[dueKey]time.Time{}
	}
}

// setLocked schedules k at instant at, looked at at due.
func (s *schedule) setLocked(k dueKey, at, due time.Time) {
	s.ver++
	s.cur[k] = slot{s.ver, podium.Millis(at)}
	heap.Push(&s.h, heapItem{key: k, due: dueMillis(due), ver: s.ver})
	if len(s.h) > 1024 && len(s.h) > 2*len(s.cur) {
		s.compactLocked()
	}
}

// compactLocked drops the stale items, so that the heap stays within
// twice the things watched.
func (s *schedule) compactLocked() {
	keep := s.h[:0]
	for _, it := range s.h {
		if c, ok := s.cur[it.key]; ok && c.ver == it.ver {
			keep = append(keep, it)
		}
	}
	clear(s.h[len(keep):])
	s.h = keep
	heap.Init(&s.h)
}

func (s *schedule) set(k dueKey, at, due time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setLocked(k, at, due)
}

// pendingLocked reports whether k's instant has passed and waits for its
// event: a change of the board must not move it past that instant.
func (s *schedule) pendingLocked(k dueKey, now time.Time) bool {
	c, ok := s.cur[k]
	return ok && c.at <= podium.Millis(now)
}

// next returns the earliest due time (ok false: nothing scheduled).
func (s *schedule) next() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.h) > 0 {
		it := s.h[0]
		if c, ok := s.cur[it.key]; ok && c.ver == it.ver {
			return time.UnixMilli(it.due), true
		}
		heap.Pop(&s.h)
	}
	return time.Time{}, false
}

// popDue takes up to limit items due at now, earliest first; each leaves
// the schedule (the caller schedules what comes next).
func (s *schedule) popDue(now time.Time, limit int) []dueItem {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []dueItem
	for len(s.h) > 0 && len(out) < limit {
		it := s.h[0]
		c, ok := s.cur[it.key]
		if !ok || c.ver != it.ver {
			heap.Pop(&s.h)
			continue
		}
		if it.due > podium.Millis(now) {
			break
		}
		heap.Pop(&s.h)
		delete(s.cur, it.key)
		out = append(out, dueItem{key: it.key, at: podium.FromMillis(c.at)})
	}
	return out
}

// size is the number of things scheduled (tests, metrics).
func (s *schedule) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.cur)
}

// periodic reports whether a board has periods whose end is an event.
// Aggregate boards are left out: their entries are derived from other
// boards, which have their own events.
func periodic(def *podium.Board) bool {
	return def != nil && def.Aggregate == nil && def.Reset.Every != podium.Never && def.Reset.Every != ""
}

// loadBoard schedules a board at Load: the end of its previous period if
// that was recent (within window: a node that was down at the boundary,
// or whose holder of the lease died, sends it now; one already stored has
// its id and is kept once), else the end of the current one.
func (s *schedule) loadBoard(def *podium.Board, now time.Time, grace, window time.Duration) {
	if !periodic(def) {
		return
	}
	k := dueKey{duePeriod, def.ID}
	cur := podium.PeriodAt(def.Reset, now)
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur.Start.After(def.CreatedAt) && now.Sub(cur.Start) <= window {
		s.setLocked(k, cur.Start, cur.Start.Add(grace))
		return
	}
	s.setLocked(k, cur.End, cur.End.Add(grace))
}

// boardChanged schedules a board made, changed or deleted.
func (s *schedule) boardChanged(old, next *podium.Board, now time.Time, grace time.Duration) {
	var k dueKey
	switch {
	case next != nil:
		k = dueKey{duePeriod, next.ID}
	case old != nil:
		k = dueKey{duePeriod, old.ID}
	default:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return // not loaded: the module is off
	}
	if next == nil || !periodic(next) {
		delete(s.cur, k)
		return
	}
	if old != nil && s.pendingLocked(k, now) {
		return // a period ended and waits for its event: EmitDue checks the board then
	}
	end := podium.PeriodAt(next.Reset, now).End
	if c, ok := s.cur[k]; ok && c.at == podium.Millis(end) {
		return
	}
	s.setLocked(k, end, end.Add(grace))
}

// contestChanged schedules a contest's freeze and end (c nil: the contest
// is gone). An instant is scheduled when it is new or moved, even if it
// has passed (an admin ended a contest early), unless it is before the
// contest was made or older than window; one the schedule already took is
// not taken again.
func (s *schedule) contestChanged(id string, c *contest.Contest, now time.Time, grace, window time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, kind := range []dueKind{dueFreeze, dueEnd} {
		k := dueKey{kind, id}
		var at *time.Time
		if c != nil {
			at = c.Freeze
			if kind == dueEnd {
				at = &c.End
			}
		}
		if at == nil {
			delete(s.cur, k)
			delete(s.contests, k)
			continue
		}
		if was, ok := s.contests[k]; ok && was.Equal(*at) {
			continue
		}
		s.contests[k] = *at
		if !at.After(c.CreatedAt) || now.Sub(*at) > window {
			delete(s.cur, k)
			continue
		}
		s.setLocked(k, *at, at.Add(grace))
	}
}
