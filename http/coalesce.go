package http

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Coalesced answers. net/http writes an answer through a 4 KiB buffer: an
// answer larger than that (a top-100 page is 12.6 KB) leaves in two or
// more write syscalls, the buffer's and the rest, and on loopback each
// write costs as much as the whole of a small read (bench/vsredis: the
// trivial handler writing a page's bytes runs at a fraction of its rate
// with 16 bytes). When a handler writes an answer whose length it declared
// in one Write (writeJSON, the cached pages), the connection keeps back
// what net/http writes of it and sends it in one write once the answer is
// complete.
//
// The answer is complete when net/http has flushed it, and net/http always
// touches the connection next by setting its read deadline (to wait for
// the next request, or to end its background read) or by closing it; both
// send what was kept back first. So the bytes leave on the same goroutine,
// in the same order and at the latest where net/http would have waited for
// the client anyway; a write that fails is reported by the next read. Only
// HTTP/1 answers are held (an HTTP/2 connection interleaves streams and
// sets no deadline between them), of at most coalesceMax bytes.
const (
	coalesceMin = 3 << 10  // smaller answers leave in one write already
	coalesceMax = 64 << 10 // larger ones are copied for too little gain
)

var heldPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// holdAnswer starts keeping back c's writes until the answer is complete.
func (c *conn) holdAnswer() {
	c.wmu.Lock()
	if c.held == nil && !c.upgraded.Load() && !c.closed.Load() {
		c.held = heldPool.Get().(*[]byte)
	}
	c.wmu.Unlock()
}

// Write writes b, or keeps it back while an answer is held. The lock is
// never held across a write to the socket: a Close from another goroutine
// must not wait behind a write blocked on a client that does not read.
func (c *conn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	if err := c.werr; err != nil {
		c.wmu.Unlock()
		return 0, err
	}
	if c.held == nil {
		c.wmu.Unlock()
		return c.Conn.Write(b)
	}
	if len(*c.held)+len(b) <= coalesceMax+8<<10 { // the header's room
		*c.held = append(*c.held, b...)
		c.wmu.Unlock()
		return len(b), nil
	}
	held := c.takeHeldLocked()
	c.wmu.Unlock()
	if err := c.writeHeld(held); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// sendHeld writes what was kept back, if anything, and stops holding.
func (c *conn) sendHeld() error {
	c.wmu.Lock()
	held := c.takeHeldLocked()
	err := c.werr
	c.wmu.Unlock()
	if held == nil {
		return err
	}
	return c.writeHeld(held)
}

// takeHeldLocked stops holding and returns the held buffer, or nil.
func (c *conn) takeHeldLocked() *[]byte {
	b := c.held
	c.held = nil
	return b
}

// writeHeld writes a held buffer, gives it back to the pool, and records a
// failure for the next Write and SetReadDeadline.
func (c *conn) writeHeld(b *[]byte) error {
	var err error
	if len(*b) > 0 {
		_, err = c.Conn.Write(*b)
	}
	*b = (*b)[:0]
	heldPool.Put(b)
	if err != nil {
		c.wmu.Lock()
		c.werr = err
		c.wmu.Unlock()
	}
	return err
}

// SetReadDeadline sends the answer kept back first: net/http sets it once
// an answer is written, before it waits for the next request. After a
// held answer failed to go out the connection reads nothing more (the
// deadline is in the past), so net/http sees the error and closes it.
func (c *conn) SetReadDeadline(t time.Time) error {
	if c.sendHeld() != nil {
		t = time.Unix(1, 0)
	}
	return c.Conn.SetReadDeadline(t)
}

// SetWriteDeadline sends the answer kept back first, under the deadline
// it was written under: net/http clears the write deadline once an answer
// is written, before it sets the read deadline, and a held answer sent
// after that could block forever on a client that does not read.
func (c *conn) SetWriteDeadline(t time.Time) error {
	c.sendHeld() // a failure is kept in werr for the next write and read
	return c.Conn.SetWriteDeadline(t)
}

// SetDeadline is SetReadDeadline for both directions.
func (c *conn) SetDeadline(t time.Time) error {
	if c.sendHeld() != nil {
		return c.Conn.SetDeadline(time.Unix(1, 0))
	}
	return c.Conn.SetDeadline(t)
}

// holdIfWhole tells the connection to hold the answer when b is all of
// it, by its Content-Length, and large enough to gain from it.
func (w *statusWriter) holdIfWhole(b []byte) {
	if w.conn == nil || !w.http1 || len(b) < coalesceMin || len(b) > coalesceMax {
		return
	}
	cl := w.Header()["Content-Length"]
	if len(cl) != 1 {
		return
	}
	if n, err := strconv.Atoi(cl[0]); err != nil || n != len(b) {
		return
	}
	w.conn.holdAnswer()
}

// isHTTP1 reports whether r came as HTTP/1.x, whose answers may be held.
func isHTTP1(r *http.Request) bool { return r.ProtoMajor == 1 }
