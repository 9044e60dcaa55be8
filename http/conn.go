package http

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Connection-level defences. net/http gives a handler no say over the
// connection a request came on, so what must act there is a listener:
//
//   - the framing guard (framing.go) reads each connection's bytes before
//     net/http does, to refuse a request framed two ways;
//   - a lingering close: when the server closes a connection whose client
//     may still be sending (a body cut or refused unread), it sends FIN
//     first and reads what still comes for up to lingerTimeout before it
//     closes. A socket closed with unread bytes answers with a reset, and
//     a reset can make the client lose the answer it was sent just before
//     (a 408, a 401, a 413); net/http lingers only in some of these cases
//     (a body it closed early, which a wrapped Request.Body hides from it).
//
// Serve the server's Handler on Listener with ConnContext set:
//
//	hs := &http.Server{Handler: s.Handler(), ConnContext: s.ConnContext}
//	hs.Serve(s.Listener(ln))
//
// A Handler served without them works as before, without these defences.

// Listener wraps ln with the server's connection-level defences.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return &listener{Listener: ln, s: s}
}

// ConnContext is for http.Server.ConnContext: it lets a request reach the
// connection it came on.
func (s *Server) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if pc, ok := c.(*conn); ok {
		return context.WithValue(ctx, connKey{}, pc)
	}
	return ctx
}

type connKey struct{}

// connOf is the connection of a request served on Listener, or nil.
func connOf(r *http.Request) *conn {
	c, _ := r.Context().Value(connKey{}).(*conn)
	return c
}

type listener struct {
	net.Listener
	s *Server
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c}, nil
}

// conn is an accepted connection with its framing guard.
type conn struct {
	net.Conn
	// upgraded is set when a handler hijacks the connection (a WebSocket):
	// its bytes are no longer HTTP/1.1 requests.
	upgraded atomic.Bool
	eof      atomic.Bool // the client closed its side: no need to linger
	closed   atomic.Bool

	// The reader's state: net/http reads a connection from one goroutine
	// at a time.
	f    framer
	out  []byte  // what the guard handed on that the reader has not taken
	buf  *[]byte // out's buffer, from outPool while it holds bytes
	rerr error   // a read error to return once out is taken
}

var outPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func (c *conn) Read(p []byte) (int, error) {
	for {
		if len(c.out) > 0 {
			n := copy(p, c.out)
			if c.out = c.out[n:]; len(c.out) == 0 {
				c.putBuf()
			}
			return n, nil
		}
		if err := c.rerr; err != nil {
			c.rerr = nil
			return 0, err
		}
		if c.f.done {
			return 0, io.EOF
		}
		if !c.f.off && c.upgraded.Load() {
			c.setOut(c.f.giveUp(c.getBuf()))
			continue
		}
		if c.f.off {
			return c.read(p)
		}
		if (c.f.st == inBody || c.f.st == inChunkData) && len(p) > 0 {
			// Body bytes pass as they are: read them in place.
			n, err := c.read(p[:min(uint64(len(p)), c.f.n)])
			c.f.passed(uint64(n))
			return n, err
		}
		n, err := c.read(p)
		if n > 0 {
			c.setOut(c.f.feed(c.getBuf(), p[:n]))
		}
		if err != nil {
			if len(c.out) == 0 {
				return 0, err
			}
			c.rerr = err
		}
		if len(c.out) == 0 && n == 0 {
			return 0, nil
		}
	}
}

func (c *conn) read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err == io.EOF {
		c.eof.Store(true)
	}
	return n, err
}

// Lingering close: how long, and how many bytes, the server still reads
// from a client after its FIN. Past either the socket is closed (a client
// still sending then gets a reset, after its answer and the FIN).
const (
	lingerTimeout = time.Second
	lingerBytes   = 256 << 10
)

// Close closes the connection, lingering unless the client closed its
// side already or the connection was upgraded (a WebSocket ends with its
// own closing handshake, and its reader may still be reading). It returns
// at once; the socket closes within lingerTimeout.
func (c *conn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	cw, ok := c.Conn.(interface{ CloseWrite() error })
	if !ok || c.eof.Load() || c.upgraded.Load() || cw.CloseWrite() != nil {
		return c.Conn.Close()
	}
	go func() {
		c.Conn.SetReadDeadline(time.Now().Add(lingerTimeout))
		io.CopyN(io.Discard, c.Conn, lingerBytes)
		c.Conn.Close()
	}()
	return nil
}

// getBuf is an empty buffer for out, from the pool.
func (c *conn) getBuf() []byte {
	if c.buf == nil {
		c.buf = outPool.Get().(*[]byte)
	}
	return (*c.buf)[:0]
}

// setOut makes b, built on getBuf's buffer, the bytes to hand on.
func (c *conn) setOut(b []byte) {
	*c.buf, c.out = b, b
	if len(b) == 0 {
		c.putBuf()
	}
}

// putBuf returns out's buffer to the pool once it is taken.
func (c *conn) putBuf() {
	if c.buf == nil {
		return
	}
	if cap(*c.buf) <= 64<<10 {
		*c.buf = (*c.buf)[:0]
		outPool.Put(c.buf)
	}
	c.buf, c.out = nil, nil
}

// hijack marks c as upgraded and hijacks it from net/http.
func hijack(w http.ResponseWriter, c *conn) (net.Conn, *bufio.ReadWriter, error) {
	if c != nil {
		c.upgraded.Store(true)
	}
	return http.NewResponseController(w).Hijack()
}
