package stream

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium"
)

// Conn is one client connection (an SSE response or a WebSocket) carrying
// one or more subscriptions, opened by one principal: the API key it
// authenticated with, or nobody. Events wait in a bounded queue; when it is
// full the connection's subscriptions are marked for resync and skipped, so
// a slow client never slows the hub or other clients. The reader drains
// what is stale and gets a fresh snapshot instead.
type Conn struct {
	hub *Hub
	ip  string
	key *podium.APIKey // nil: anonymous
	q   chan delivery

	mu   sync.Mutex
	subs map[windowKey]*Sub
	done bool // closed or revoked: no new subscriptions

	closeOnce sync.Once
	closed    chan struct{} // the server ended the connection
	reason    error         // why, written before closed is closed; nil on shutdown
	lagging   atomic.Bool   // the queue overflowed: resync before reading on
	resyncs   atomic.Uint64
	qBytes    atomic.Int64 // bytes of the events in q (shared ones counted too)

	pending []delivery // snapshots to send before the queue (reader only)
}

type delivery struct {
	sub *Sub
	ev  *Event
}

// Sub is one subscription of a connection to a window.
type Sub struct {
	conn   *Conn
	w      *window
	resync atomic.Bool // skipped events since the queue overflowed
	// ended: the subscription gets nothing more but final, the error that
	// ended it (nil when the client unsubscribed). final is written, under
	// the window's lock, before ended is set.
	ended     atomic.Bool
	final     *Event
	finalSent atomic.Bool
}

// testHookBeforeAttach, when set by a test, runs in Subscribe between
// finding the window and attaching to it.
var testHookBeforeAttach func()

func newConn(h *Hub, ip string, key *podium.APIKey) *Conn {
	return &Conn{hub: h, ip: ip, key: key, q: make(chan delivery, h.cfg.Queue), subs: map[windowKey]*Sub{}, closed: make(chan struct{})}
}

// Board returns the board a subscription watches.
func (s *Sub) Board() string { return s.w.key.board }

// Limit returns the window size of a subscription.
func (s *Sub) Limit() int { return s.w.key.limit }

// offer queues ev without blocking. Called with the window lock held.
func (s *Sub) offer(ev *Event) {
	if s.resync.Load() || s.ended.Load() {
		return
	}
	s.conn.push(s, ev)
}

// push queues ev for s, or marks the connection lagging when its queue is
// full (in events or in bytes): everything queued is then suspect, and
// each subscription gets a fresh snapshot (or its final error) instead.
func (c *Conn) push(s *Sub, ev *Event) {
	if c.qBytes.Load()+ev.size > c.hub.cfg.QueueBytes && len(c.q) > 0 {
		c.markLagging()
		return
	}
	c.hub.mem.hold(ev)
	c.qBytes.Add(ev.size)
	select {
	case c.q <- delivery{s, ev}:
	default:
		c.unqueued(ev)
		c.markLagging()
	}
}

// unqueued gives back what a queued event held.
func (c *Conn) unqueued(ev *Event) {
	c.qBytes.Add(-ev.size)
	c.hub.mem.release(ev)
}

// endLocked ends a subscription with a final error event: it is taken off
// its window at once, so nothing the window sends from now on reaches it,
// and the error is delivered after what was queued before. The caller
// holds the window's lock.
func (s *Sub) endLocked(final *Event) {
	if s.ended.Load() {
		return
	}
	s.final = final
	s.ended.Store(true)
	delete(s.w.subs, s)
	s.conn.hub.subs.Add(-1)
	s.w.idleSinceLocked()
	if !s.resync.Load() {
		s.conn.push(s, final)
	} // else the resync under way delivers it
}

func (c *Conn) markLagging() {
	c.mu.Lock()
	for _, s := range c.subs {
		s.resync.Store(true)
	}
	c.mu.Unlock()
	c.lagging.Store(true)
}

// Subscribe adds a subscription to the top limit entries of board. When
// lastID names an event the window still remembers, the events after it
// are queued; otherwise (or with an empty lastID) a snapshot is. The
// connection's principal must be allowed to read the board as the window
// shows it (ECodeUnauthenticated, ECodeForbidden); a missing board is
// ECodeBoardNotFound.
func (c *Conn) Subscribe(ctx context.Context, board string, limit int, lastID string) (*Sub, error) {
	if limit < 1 || limit > c.hub.cfg.MaxLimit {
		return nil, podium.Errorf(podium.ECodeInvalid, "limit must be from 1 to %d", c.hub.cfg.MaxLimit)
	}
	return c.subscribe(ctx, windowKey{board: board, limit: limit}, lastID)
}

// subscribe adds a subscription to the window of key (a board's top, or
// an activity feed).
func (c *Conn) subscribe(ctx context.Context, key windowKey, lastID string) (*Sub, error) {
	board := key.board
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return nil, c.closedErr()
	}
	if old := c.subs[key]; old != nil && !old.ended.Load() {
		c.mu.Unlock()
		return old, nil
	}
	if len(c.subs) >= c.hub.cfg.MaxSubs {
		c.mu.Unlock()
		return nil, podium.Errorf(podium.ECodeInvalid, "a connection holds at most %d subscriptions", c.hub.cfg.MaxSubs)
	}
	c.mu.Unlock()
	h := c.hub
	refreshed := false
	for attempt := 0; ; attempt++ {
		w, err := h.window(ctx, key)
		if err != nil {
			return nil, err
		}
		if testHookBeforeAttach != nil {
			testHookBeforeAttach()
		}
		s := &Sub{conn: c, w: w}
		// Attach under the hub's lock, to a window the hub still holds: a
		// round drops idle windows, and a subscription left on a dropped
		// window would never hear of a change again.
		h.mu.Lock()
		w.mu.Lock()
		if w.dropped || w.dead {
			dead := w.dead
			if dead {
				h.dropLocked(w)
			} else {
				w.mu.Unlock()
			}
			h.mu.Unlock()
			if dead && attempt > 2 {
				return nil, podium.BoardNotFound(board)
			}
			continue
		}
		// The subscriber gets the window's state: it must be allowed to
		// read the board as the window shows it.
		if err := CanRead(c.key, board, w.view.Public); err != nil {
			w.mu.Unlock()
			h.mu.Unlock()
			if !refreshed && w.dirty.Swap(false) {
				// The board changed since the window last looked (it may
				// have been made public): look now, then decide.
				refreshed = true
				w.flush(h.cfg.Now())
				continue
			}
			return nil, err
		}
		c.mu.Lock()
		if c.done {
			c.mu.Unlock()
			w.mu.Unlock()
			h.mu.Unlock()
			return nil, c.closedErr()
		}
		if old := c.subs[key]; old != nil && !old.ended.Load() { // a concurrent Subscribe won
			c.mu.Unlock()
			w.mu.Unlock()
			h.mu.Unlock()
			return old, nil
		}
		c.subs[key] = s
		c.mu.Unlock()
		evs, ok := w.sinceLocked(lastID)
		if !ok || len(evs) >= cap(c.q)/2 {
			evs = []*Event{w.snapshotLocked()}
		}
		w.subs[s] = struct{}{}
		h.subs.Add(1)
		for _, ev := range evs {
			s.offer(ev) // a full queue marks the conn for resync, which sends a snapshot
		}
		w.mu.Unlock()
		h.mu.Unlock()
		return s, nil
	}
}

// closedErr is the error a closed connection answers a subscribe with.
func (c *Conn) closedErr() error {
	select {
	case <-c.closed:
		if c.reason != nil {
			return c.reason
		}
	default:
	}
	return podium.Errorf(podium.ECodeUnavailable, "the connection is closing")
}

// Unsubscribe removes the subscription to (board, limit), if any.
func (c *Conn) Unsubscribe(board string, limit int) bool {
	c.mu.Lock()
	s := c.subs[windowKey{board: board, limit: limit}]
	delete(c.subs, windowKey{board: board, limit: limit})
	c.mu.Unlock()
	if s == nil {
		return false
	}
	s.detach()
	return true
}

// UnsubscribeBoard removes every subscription to board.
func (c *Conn) UnsubscribeBoard(board string) int {
	c.mu.Lock()
	var list []*Sub
	for k, s := range c.subs {
		if k.board == board && !k.feed {
			list = append(list, s)
			delete(c.subs, k)
		}
	}
	c.mu.Unlock()
	for _, s := range list {
		s.detach()
	}
	return len(list)
}

// detach takes a subscription off its window; it gets nothing more.
func (s *Sub) detach() {
	w := s.w
	w.mu.Lock()
	s.ended.Store(true)
	if _, ok := w.subs[s]; ok {
		delete(w.subs, s)
		w.hub.subs.Add(-1)
		w.idleSinceLocked()
	}
	w.mu.Unlock()
}

// forget removes an ended subscription from the connection.
func (c *Conn) forget(s *Sub) {
	c.mu.Lock()
	if c.subs[s.w.key] == s {
		delete(c.subs, s.w.key)
	}
	c.mu.Unlock()
}

// Next returns the next event to send, waiting up to wait. It returns a
// nil event on timeout (time for a heartbeat) or when done is closed, and
// ok=false once the server has closed the connection (Err says why):
// from then on nothing more is delivered. Only one goroutine may call Next.
func (c *Conn) Next(wait time.Duration, done <-chan struct{}) (s *Sub, ev *Event, ok bool) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-c.closed:
			return nil, nil, false
		default:
		}
		if c.lagging.Load() {
			c.resync()
		}
		if len(c.pending) > 0 {
			d := c.pending[0]
			c.pending[0] = delivery{}
			c.pending = c.pending[1:]
			c.hub.mem.release(d.ev)
			if c.deliverable(d) {
				return d.sub, d.ev, true
			}
			continue
		}
		// What is queued goes first: select would pick at random between
		// it and a timer that already fired.
		select {
		case d := <-c.q:
			c.unqueued(d.ev)
			if c.deliverable(d) {
				return d.sub, d.ev, true
			}
			continue
		default:
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		}
		select {
		case d := <-c.q:
			c.unqueued(d.ev)
			select {
			case <-c.closed:
				return nil, nil, false
			default:
			}
			if c.deliverable(d) {
				return d.sub, d.ev, true
			}
		case <-c.closed:
			return nil, nil, false
		case <-done:
			return nil, nil, true
		case <-timer.C:
			return nil, nil, true
		}
	}
}

// deliverable reports whether a dequeued event goes to the client, and
// counts it if so. An ended subscription gets only its final error, once;
// a subscription being resynced gets a snapshot instead.
func (c *Conn) deliverable(d delivery) bool {
	s := d.sub
	if s.ended.Load() {
		if d.ev == nil || d.ev != s.final || s.finalSent.Swap(true) {
			return false
		}
		c.forget(s)
	} else if s.resync.Load() {
		return false
	}
	c.hub.eventsSent.Add(1)
	c.hub.bytesSent.Add(uint64(len(d.ev.SSE)))
	return true
}

// resync handles an overflowed queue: every subscription is marked, the
// queue is emptied, and each subscription gets a fresh snapshot of its
// window taken under the window's lock, so that whatever the window sends
// next follows it exactly; one that ended meanwhile gets its final error.
func (c *Conn) resync() {
	c.lagging.Store(false)
	c.mu.Lock()
	subs := make([]*Sub, 0, len(c.subs))
	for _, s := range c.subs {
		s.resync.Store(true)
		subs = append(subs, s)
	}
	c.mu.Unlock()
	c.drain()
	for _, s := range subs {
		w := s.w
		w.mu.Lock()
		var ev *Event
		if !s.ended.Load() {
			ev = w.snapshotLocked()
		} else if ev = s.final; ev == nil {
			c.forget(s)
		}
		if ev != nil {
			c.hub.mem.hold(ev)
			c.pending = append(c.pending, delivery{s, ev})
		}
		s.resync.Store(false)
		w.mu.Unlock()
	}
	c.resyncs.Add(1)
}

// drain empties the queue and the pending snapshots, giving back what
// they held.
func (c *Conn) drain() {
	for drained := false; !drained; {
		select {
		case d := <-c.q:
			c.unqueued(d.ev)
		default:
			drained = true
		}
	}
	for i, d := range c.pending {
		c.hub.mem.release(d.ev)
		c.pending[i] = delivery{}
	}
	c.pending = c.pending[:0]
}

// Resyncs returns how many times the connection fell behind and was
// resynced with snapshots.
func (c *Conn) Resyncs() uint64 { return c.resyncs.Load() }

// Closed is closed when the server ends the connection.
func (c *Conn) Closed() <-chan struct{} { return c.closed }

// Err says why the server ended the connection: nil when it is shutting
// down, ECodeUnauthenticated when the connection's API key was revoked.
// It is meaningful once Closed is closed.
func (c *Conn) Err() error {
	select {
	case <-c.closed:
		return c.reason
	default:
		return nil
	}
}

// end closes the connection for reason (nil: the server is shutting
// down); Next returns ok=false from now on.
func (c *Conn) end(reason error) {
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
	c.closeOnce.Do(func() {
		c.reason = reason
		close(c.closed)
	})
}

// Close detaches every subscription and releases the connection's slot.
func (c *Conn) Close() {
	c.mu.Lock()
	c.done = true
	subs := make([]*Sub, 0, len(c.subs))
	for _, s := range c.subs {
		subs = append(subs, s)
	}
	c.subs = map[windowKey]*Sub{}
	c.mu.Unlock()
	for _, s := range subs {
		s.detach()
	}
	c.end(nil)
	c.drain() // nothing can be queued any more: no window holds its subscriptions
	c.hub.disconnect(c)
}
