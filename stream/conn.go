package stream

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium"
)

// Conn is one client connection (an SSE response or a WebSocket) carrying
// one or more subscriptions. Events wait in a bounded queue; when it is
// full the connection's subscriptions are marked for resync and skipped, so
// a slow client never slows the hub or other clients. The reader drains
// what is stale and gets a fresh snapshot instead.
type Conn struct {
	hub *Hub
	ip  string
	q   chan delivery

	mu   sync.Mutex
	subs map[windowKey]*Sub

	closeOnce sync.Once
	closed    chan struct{} // the server is shutting down or the conn is done
	lagging   atomic.Bool   // the queue overflowed: resync before reading on
	resyncs   atomic.Uint64

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
	ended  atomic.Bool
}

// testHookBeforeAttach, when set by a test, runs in Subscribe between
// finding the window and attaching to it.
var testHookBeforeAttach func()

func newConn(h *Hub, ip string) *Conn {
	return &Conn{hub: h, ip: ip, q: make(chan delivery, h.cfg.Queue), subs: map[windowKey]*Sub{}, closed: make(chan struct{})}
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
	select {
	case s.conn.q <- delivery{s, ev}:
	default:
		// The queue is full: everything queued for this connection is now
		// suspect; resync all its subscriptions.
		s.conn.markLagging()
	}
}

// end marks a subscription finished (its board is gone).
func (s *Sub) end() { s.ended.Store(true) }

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
// are queued; otherwise (or with an empty lastID) a snapshot is.
func (c *Conn) Subscribe(ctx context.Context, board string, limit int, lastID string) (*Sub, error) {
	if limit < 1 || limit > c.hub.cfg.MaxLimit {
		return nil, podium.Errorf(podium.ECodeInvalid, "limit must be from 1 to %d", c.hub.cfg.MaxLimit)
	}
	key := windowKey{board, limit}
	c.mu.Lock()
	if old := c.subs[key]; old != nil {
		c.mu.Unlock()
		return old, nil
	}
	if len(c.subs) >= 64 {
		c.mu.Unlock()
		return nil, podium.Errorf(podium.ECodeInvalid, "a connection holds at most 64 subscriptions")
	}
	c.mu.Unlock()
	for attempt := 0; ; attempt++ {
		w, err := c.hub.window(ctx, board, limit)
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
		h := c.hub
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
				return nil, podium.Errorf(podium.ECodeBoardNotFound, "board %q does not exist", board)
			}
			continue
		}
		evs, ok := w.sinceLocked(lastID)
		if !ok || len(evs) >= cap(c.q)/2 {
			evs = []*Event{w.snapshotLocked()}
		}
		w.subs[s] = struct{}{}
		c.mu.Lock()
		c.subs[key] = s
		c.mu.Unlock()
		for _, ev := range evs {
			s.offer(ev) // a full queue marks the conn for resync, which sends a snapshot
		}
		w.mu.Unlock()
		h.mu.Unlock()
		return s, nil
	}
}

// Unsubscribe removes the subscription to (board, limit), if any.
func (c *Conn) Unsubscribe(board string, limit int) bool {
	c.mu.Lock()
	s := c.subs[windowKey{board, limit}]
	delete(c.subs, windowKey{board, limit})
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
		if k.board == board {
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

func (s *Sub) detach() {
	s.ended.Store(true)
	w := s.w
	w.mu.Lock()
	delete(w.subs, s)
	if len(w.subs) == 0 {
		w.idleAt = w.hub.cfg.Now()
	}
	w.mu.Unlock()
}

// Next returns the next event to send, waiting up to wait. It returns a
// nil event on timeout (time for a heartbeat) and ok=false once the
// connection is closed by the server. It also returns (nil event) when
// done is closed. Only one goroutine may call Next.
func (c *Conn) Next(wait time.Duration, done <-chan struct{}) (s *Sub, ev *Event, ok bool) {
	if c.lagging.Load() {
		c.resync()
	}
	if len(c.pending) > 0 {
		d := c.pending[0]
		c.pending = c.pending[1:]
		c.count(d.ev)
		return d.sub, d.ev, true
	}
	// What is queued goes first: select would pick at random between it
	// and a timer that already fired.
	for {
		select {
		case d := <-c.q:
			if d.sub.ended.Load() && d.ev.Type != "error" || d.sub.resync.Load() {
				continue // unsubscribed, or stale: a snapshot replaces it
			}
			c.count(d.ev)
			return d.sub, d.ev, true
		default:
		}
		break
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case d := <-c.q:
			if d.sub.ended.Load() && d.ev.Type != "error" || d.sub.resync.Load() {
				continue // unsubscribed, or stale: a snapshot replaces it
			}
			c.count(d.ev)
			return d.sub, d.ev, true
		case <-c.closed:
			return nil, nil, false
		case <-done:
			return nil, nil, true
		case <-t.C:
			return nil, nil, true
		}
	}
}

func (c *Conn) count(ev *Event) {
	c.hub.eventsSent.Add(1)
	c.hub.bytesSent.Add(uint64(len(ev.SSE)))
}

// resync handles an overflowed queue: every subscription is marked, the
// queue is emptied, and each subscription gets a fresh snapshot of its
// window taken under the window's lock, so that whatever the window sends
// next follows it exactly.
func (c *Conn) resync() {
	c.lagging.Store(false)
	c.mu.Lock()
	subs := make([]*Sub, 0, len(c.subs))
	for _, s := range c.subs {
		s.resync.Store(true)
		subs = append(subs, s)
	}
	c.mu.Unlock()
	for drained := false; !drained; {
		select {
		case <-c.q:
		default:
			drained = true
		}
	}
	c.pending = c.pending[:0]
	for _, s := range subs {
		w := s.w
		w.mu.Lock()
		ev := w.snapshotLocked()
		s.resync.Store(false)
		w.mu.Unlock()
		c.pending = append(c.pending, delivery{s, ev})
	}
	c.resyncs.Add(1)
}

// Resyncs returns how many times the connection fell behind and was
// resynced with snapshots.
func (c *Conn) Resyncs() uint64 { return c.resyncs.Load() }

// Closed is closed when the server ends the connection.
func (c *Conn) Closed() <-chan struct{} { return c.closed }

func (c *Conn) shutdown() { c.closeOnce.Do(func() { close(c.closed) }) }

// Close detaches every subscription and releases the connection's slot.
func (c *Conn) Close() {
	c.mu.Lock()
	subs := make([]*Sub, 0, len(c.subs))
	for _, s := range c.subs {
		subs = append(subs, s)
	}
	c.subs = map[windowKey]*Sub{}
	c.mu.Unlock()
	for _, s := range subs {
		s.detach()
	}
	c.shutdown()
	c.hub.disconnect(c)
}
