package stream

import "github.com/podiumhq/podium"

// A connection's queue, from the pushers' side: a window offers an event
// to each subscriber under its own lock; the connection charges it against
// its bounds and queues it, or falls behind when it finds no room. Ended
// subscriptions go apart, with their final error (endLocked). The reader's
// side is in reader.go.

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
