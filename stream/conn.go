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
	resyncing []*Sub // subscriptions to send a snapshot to, before the queue
	inflight  *Event // the event last returned by Next, charged until the next call
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

// offer queues ev without blocking. Called with the window lock held.
func (s *Sub) offer(ev *Event) {
	if s.resync.Load() || s.ended.Load() {
		return
	}
	if s.conn.queue(s, ev) != nil {
		s.conn.fallBehind()
	}
}

// errConnBound refuses an event past a connection's own bound.
var errConnBound = podium.Errorf(podium.ECodeRateLimited, "this stream's events do not fit its memory bound; use a smaller limit or fewer subscriptions")

// charge reserves ev's bytes for the connection: within its bound, its
// address's share and the hub's budget (where an event already held
// elsewhere costs nothing more). It returns the bound that had no room.
func (c *Conn) charge(ev *Event) error {
	n := ev.size
	if !addCapped(&c.qBytes, n, c.limit) {
		return errConnBound
	}
	if !addCapped(&c.addr.bytes, n, c.hub.mem.perAddr) {
		c.qBytes.Add(-n)
		return errAddressShare
	}
	if !c.hub.mem.tryHold(ev) {
		c.qBytes.Add(-n)
		c.addr.bytes.Add(-n)
		return errBudget
	}
	return nil
}

// uncharge gives back what a charged event held.
func (c *Conn) uncharge(ev *Event) {
	c.qBytes.Add(-ev.size)
	c.addr.bytes.Add(-ev.size)
	c.hub.mem.release(ev)
}

// queue charges ev and queues it for s; the error says which bound had no
// room (a full queue is errConnBound). Called with s's window lock held.
func (c *Conn) queue(s *Sub, ev *Event) error {
	if err := c.charge(ev); err != nil {
		return err
	}
	select {
	case c.q <- delivery{s, ev, s.epoch.Load()}:
		return nil
	default:
		c.uncharge(ev)
		return errConnBound
	}
}

// fallBehind handles an event that found no room: every subscription
// waits for a resync, and what was queued is dropped now, so that a
// client that does not read holds nothing but the event it is writing.
func (c *Conn) fallBehind() {
	c.mu.Lock()
	for _, s := range c.subs {
		s.resync.Store(true)
	}
	c.mu.Unlock()
	c.dropQueued()
	if !c.lagging.Swap(true) {
		c.hub.mem.behind.Add(1)
	}
	c.signal()
	select {
	case c.behind <- struct{}{}:
	default:
	}
}

// Behind is signalled each time the connection falls behind its memory
// bound (its queue was dropped and its subscriptions wait for a resync).
// What remains held is the event being written; a server that sees the
// write in flight make no progress soon after should cut the client
// rather than wait out its whole stall timeout.
func (c *Conn) Behind() <-chan struct{} { return c.behind }

// signal wakes the reader.
func (c *Conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// endLocked ends a subscription with a final error event: it is taken off
// its window at once, so nothing the window sends from now on reaches it,
// and the error goes to the client next. The caller holds the window's
// lock.
func (s *Sub) endLocked(final *Event) {
	if s.ended.Load() {
		return
	}
	s.final = final
	s.ended.Store(true)
	delete(s.w.subs, s)
	s.conn.hub.subs.Add(-1)
	s.w.idleSinceLocked()
	c := s.conn
	c.mu.Lock()
	c.finals = append(c.finals, s)
	c.mu.Unlock()
	c.signal()
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
// from then on nothing more is delivered. The event returned stays
// charged to the connection until the next call (it is being written).
// Only one goroutine may call Next.
func (c *Conn) Next(wait time.Duration, done <-chan struct{}) (s *Sub, ev *Event, ok bool) {
	c.written()
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
		if c.lagging.Swap(false) {
			c.resyncs.Add(1)
			c.mu.Lock()
			c.resyncing = c.resyncing[:0]
			for _, s := range c.subs {
				if s.resync.Load() {
					c.resyncing = append(c.resyncing, s)
				}
			}
			c.mu.Unlock()
		}
		if s := c.nextFinal(); s != nil {
			c.hub.eventsSent.Add(1)
			c.hub.bytesSent.Add(uint64(len(s.final.SSE)))
			return s, s.final, true
		}
		for len(c.resyncing) > 0 {
			s := c.resyncing[0]
			ev, err := c.resyncSub(s)
			if err != nil {
				if c.qBytes.Load() > 0 {
					// Events of resynced subscriptions hold the room:
					// send them first, and try again after.
					break
				}
				// Not even a snapshot fits a connection that holds
				// nothing else: end it (the client comes back later, or
				// with a smaller window).
				c.hub.mem.cut.Add(1)
				c.end(err)
				return nil, nil, false
			}
			c.resyncing[0] = nil
			c.resyncing = c.resyncing[1:]
			if ev != nil {
				return s, c.sending(ev), true
			}
		}
		// What is queued goes first: select would pick at random between
		// it and a timer that already fired.
		select {
		case d := <-c.q:
			if c.deliverable(d) {
				return d.sub, c.sending(d.ev), true
			}
			c.uncharge(d.ev)
			continue
		default:
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		}
		select {
		case d := <-c.q:
			select {
			case <-c.closed:
				c.uncharge(d.ev)
				return nil, nil, false
			default:
			}
			if c.deliverable(d) {
				return d.sub, c.sending(d.ev), true
			}
			c.uncharge(d.ev)
		case <-c.wake:
		case <-c.closed:
			return nil, nil, false
		case <-done:
			return nil, nil, true
		case <-timer.C:
			return nil, nil, true
		}
	}
}

// sending notes ev, charged, as the event being written, and counts it.
func (c *Conn) sending(ev *Event) *Event {
	c.inflight = ev
	c.hub.eventsSent.Add(1)
	c.hub.bytesSent.Add(uint64(len(ev.SSE)))
	return ev
}

// written gives back the event the last Next returned: the caller has
// written it.
func (c *Conn) written() {
	if c.inflight != nil {
		c.uncharge(c.inflight)
		c.inflight = nil
	}
}

// nextFinal returns an ended subscription whose error is still to be
// sent, forgetting it.
func (c *Conn) nextFinal() *Sub {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.finals) > 0 {
		s := c.finals[0]
		c.finals[0] = nil
		c.finals = c.finals[1:]
		if c.subs[s.w.key] == s {
			delete(c.subs, s.w.key)
		}
		if s.final != nil && !s.finalSent.Swap(true) {
			return s
		}
	}
	return nil
}

// deliverable reports whether a dequeued event goes to the client: not to
// an ended subscription (its error goes apart, nextFinal), nor to one
// waiting for a resync or resynced since the event was queued.
func (c *Conn) deliverable(d delivery) bool {
	s := d.sub
	return !s.ended.Load() && !s.resync.Load() && d.epoch == s.epoch.Load()
}

// resyncSub charges a fresh snapshot of s's window, taken under the
// window's lock so that whatever the window sends next follows it
// exactly, and returns it; nil when s needs none (resynced already, or
// ended). The error says which bound had no room for it.
func (c *Conn) resyncSub(s *Sub) (*Event, error) {
	w := s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if !s.resync.Load() || s.ended.Load() {
		return nil, nil
	}
	ev := w.snapshotLocked()
	if err := c.charge(ev); err != nil {
		return nil, err
	}
	s.epoch.Add(1)
	s.resync.Store(false)
	return ev, nil
}

// dropQueued empties the queue, giving back what it held. Pushers call it
// (fallBehind) as well as the reader.
func (c *Conn) dropQueued() {
	for {
		select {
		case d := <-c.q:
			c.uncharge(d.ev)
		default:
			return
		}
	}
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
	c.dropQueued() // nothing can be queued any more: no window holds its subscriptions
	c.written()
	c.hub.disconnect(c)
}
