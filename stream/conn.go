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
// authenticated with, or nobody. Events wait in a queue bounded in events
// (Config.Queue) and in bytes: what is queued and the event being written
// count against the connection's bound (Config.QueueBytes), its address's
// share and the hub's budget, reserved before an event is queued (charge).
// An event that finds no room is not queued: the connection has fallen
// behind, everything queued is dropped at once (a reader stuck in a write
// holds at most the event it is writing), and each subscription gets a
// fresh snapshot when the reader comes back (or the connection ends with
// rate_limited if even that finds no room). A slow client never slows the
// hub or other clients.
type Conn struct {
	hub   *Hub
	addr  *address
	key   *podium.APIKey // nil: anonymous
	q     chan delivery
	limit int64         // bytes it may hold: min(QueueBytes, the address's share)
	wake  chan struct{} // (1) a subscription needs a resync or has a final error
	// behind (1) is signalled each time the connection falls behind, for
	// the server that writes it: a client that is not reading gets a short
	// grace to take the write in flight, then is cut (Behind).
	behind chan struct{}

	mu     sync.Mutex
	subs   map[windowKey]*Sub
	others int    // subscriptions held outside the hub (Claim), counted with subs
	done   bool   // closed or revoked: no new subscriptions
	finals []*Sub // ended subscriptions whose error is still to be sent

	closeOnce sync.Once
	closed    chan struct{} // the server ended the connection
	reason    error         // why, written before closed is closed; nil on shutdown
	lagging   atomic.Bool   // fell behind: subscriptions wait for a resync
	resyncs   atomic.Uint64
	// qBytes: bytes of the queued events and of the one being written,
	// each counted full (shared ones too).
	qBytes atomic.Int64

	// The reader's own (Next, Close):
	resyncing []*Sub      // subscriptions to send a snapshot to, before the queue
	inflight  *Event      // the event last returned by Next, charged until the next call
	beat      *time.Timer // Next's wait for a heartbeat, made once, stopped between calls
}

type delivery struct {
	sub   *Sub
	ev    *Event
	epoch uint32 // the subscription's epoch when the event was queued
}

// Sub is one subscription of a connection to a window.
type Sub struct {
	conn *Conn
	w    *window
	// resync: the connection fell behind; the subscription gets nothing
	// until a fresh snapshot, taken under the window's lock.
	resync atomic.Bool
	// epoch counts the subscription's resyncs (written under the window's
	// lock): an event queued before the last resync is stale, whatever
	// order the queue and the resync ran in.
	epoch atomic.Uint32
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

func newConn(h *Hub, a *address, key *podium.APIKey) *Conn {
	return &Conn{hub: h, addr: a, key: key, q: make(chan delivery, h.cfg.Queue), limit: min(h.cfg.QueueBytes, h.mem.perAddr),
		wake: make(chan struct{}, 1), behind: make(chan struct{}, 1), subs: map[windowKey]*Sub{}, closed: make(chan struct{})}
}

// Board returns the board a subscription watches.
func (s *Sub) Board() string { return s.w.key.board }

// Limit returns the window size of a subscription.
func (s *Sub) Limit() int { return s.w.key.limit }

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
	if len(c.subs)+c.others >= c.hub.cfg.MaxSubs {
		c.mu.Unlock()
		return nil, c.tooMany()
	}
	c.mu.Unlock()
	h := c.hub
	refreshed := false
	for attempt := 0; ; attempt++ {
		w, err := h.window(ctx, key, c.addr)
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
			if s.resync.Load() {
				break // the connection fell behind: a resync sends a snapshot
			}
			switch err := c.queue(s, ev); {
			case err == errConnBound && c.qBytes.Load() > 0:
				// The connection is busy with other events (queued or
				// being written): the resync sends the snapshot.
				c.fallBehind()
			case err != nil:
				// Even an empty queue has no room for what the
				// subscription starts with: refuse it.
				delete(w.subs, s)
				h.subs.Add(-1)
				w.idleSinceLocked()
				s.ended.Store(true)
				w.mu.Unlock()
				h.mu.Unlock()
				c.forget(s)
				return nil, err
			}
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

func (c *Conn) tooMany() error {
	return podium.Errorf(podium.ECodeInvalid, "a connection holds at most %d subscriptions", c.hub.cfg.MaxSubs)
}

// Claim takes one of the connection's MaxSubs subscriptions for one the
// hub does not hold (a league cohort followed over the WebSocket), so
// that one bound counts every kind a connection carries: ECodeInvalid
// when all are taken, the closed error once the connection has ended.
// Unclaim gives it back.
func (c *Conn) Claim() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return c.closedErr()
	}
	if len(c.subs)+c.others >= c.hub.cfg.MaxSubs {
		return c.tooMany()
	}
	c.others++
	return nil
}

// Unclaim gives back a subscription taken with Claim.
func (c *Conn) Unclaim() {
	c.mu.Lock()
	c.others--
	c.mu.Unlock()
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
	c.dropQueued() // nothing can be queued any more: no window holds its subscriptions
	c.written()
	c.hub.disconnect(c)
}
