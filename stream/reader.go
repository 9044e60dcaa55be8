package stream

import "time"

// A connection's reader (Next): the final errors of ended subscriptions
// first, then the snapshots of subscriptions waiting for a resync, then
// the queue. Only one goroutine reads a connection; what it last returned
// stays charged until the next call (it is being written).

// Next returns the next event to send, waiting up to wait. It returns a
// nil event on timeout (time for a heartbeat) or when done is closed, and
// ok=false once the server has closed the connection (Err says why):
// from then on nothing more is delivered. The event returned stays
// charged to the connection until the next call (it is being written).
// Only one goroutine may call Next.
func (c *Conn) Next(wait time.Duration, done <-chan struct{}) (s *Sub, ev *Event, ok bool) {
	c.written()
	armed := false
	defer func() {
		if armed {
			c.beat.Stop()
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
		if !armed {
			// One timer per connection, reset for each wait: a new one
			// for every event (a timer and its channel) was ~4% of the
			// server's CPU at 19,500 subscribers, with the garbage.
			// Since Go 1.23 a stopped timer's channel holds no stale
			// tick, so a reset one fires only after wait.
			if c.beat == nil {
				c.beat = time.NewTimer(wait)
			} else {
				c.beat.Reset(wait)
			}
			armed = true
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
		case <-c.beat.C:
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

// Resyncs returns how many times the connection fell behind and was
// resynced with snapshots.
func (c *Conn) Resyncs() uint64 { return c.resyncs.Load() }
