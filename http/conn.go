package http

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
)

// Connection-level defences. net/http gives a handler no say over the
// connection a request came on, so what must act there is a listener:
//
//   - a cap on the connections open from one client address (issue 17
//     item 7): one credential held 19,800 connections, each trickling a
//     body, and filled the file descriptors. Past MaxConnsPerIP a new
//     connection gets 429 and is closed before a byte of it is read. At
//     accept time the only address known is the peer's: connections from
//     TrustedProxies are not capped (a proxy carries many clients; it must
//     cap its clients' connections itself, and it buffers their bodies).
//     IPv6 addresses count per /64, like the rate limits;
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

	mu    sync.Mutex
	perIP map[string]int // open connections by rateAddr of the peer
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		pc := &conn{Conn: c, m: l.s.conns}
		if ip, capped := l.capped(c); capped {
			l.mu.Lock()
			if l.perIP == nil {
				l.perIP = map[string]int{}
			}
			if l.perIP[ip] >= l.s.maxConnsPerIP {
				l.mu.Unlock()
				l.s.conns.refused.Inc()
				go refuseConn(c, l.s.maxConnsPerIP)
				continue
			}
			l.perIP[ip]++
			l.mu.Unlock()
			pc.release = func() { l.release(ip) }
		}
		l.s.conns.open.Inc()
		return pc, nil
	}
}

// capped returns the key c counts under, unless it is not capped (no cap,
// or a trusted proxy).
func (l *listener) capped(c net.Conn) (string, bool) {
	if l.s.maxConnsPerIP <= 0 {
		return "", false
	}
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return "", false
	}
	if a, err := netip.ParseAddr(host); err == nil && l.s.trusts(a) {
		return "", false
	}
	return rateAddr(host), true
}

func (l *listener) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perIP[ip]--; l.perIP[ip] <= 0 {
		delete(l.perIP, ip)
	}
}

// refusing counts the refused connections still being answered; past
// maxRefusing they are closed without an answer.
var refusing atomic.Int32

const maxRefusing = 256

// refuseConn answers 429 on a connection over the per-address cap and
// closes it, reading (and dropping) what the client sent meanwhile for a
// moment so that the answer is not lost to a reset.
func refuseConn(c net.Conn, limit int) {
	defer c.Close()
	if refusing.Add(1) > maxRefusing {
		refusing.Add(-1)
		return
	}
	defer refusing.Add(-1)
	body := appendErrorBody(nil, podium.ECodeRateLimited, "too many connections from this address (at most "+strconv.Itoa(limit)+"); close some and retry")
	c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	_, err := io.WriteString(c, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"+
		"Connection: close\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+string(body))
	if cw, ok := c.(interface{ CloseWrite() error }); ok && err == nil && cw.CloseWrite() == nil {
		io.CopyN(io.Discard, c, 16<<10)
	}
}

// connMetrics count the connections served on Listener.
type connMetrics struct {
	open    prometheus.Gauge
	refused prometheus.Counter
}

func newConnMetrics(reg prometheus.Registerer) *connMetrics {
	m := &connMetrics{
		open: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "podium_http_connections", Help: "Connections open on the API listener (lingering closes included).",
		}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "podium_http_connections_refused_total", Help: "Connections refused (429) for passing --conns-per-ip.",
		}),
	}
	reg.MustRegister(m.open, m.refused)
	return m
}

// conn is an accepted connection with its framing guard.
type conn struct {
	net.Conn
	m       *connMetrics
	release func() // gives back the connection's place under the cap; nil: none
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

	// The writer's state (coalesce.go): an answer kept back to leave in
	// one write. Close may come from another goroutine (Shutdown).
	wmu  sync.Mutex
	held *[]byte // from heldPool while an answer is held; nil: none
	werr error   // a held answer's write failed: the connection is done
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
	c.sendHeld() // coalesce.go
	cw, ok := c.Conn.(interface{ CloseWrite() error })
	if !ok || c.eof.Load() || c.upgraded.Load() || cw.CloseWrite() != nil {
		return c.closeNow()
	}
	go func() {
		c.Conn.SetReadDeadline(time.Now().Add(lingerTimeout))
		io.CopyN(io.Discard, c.Conn, lingerBytes)
		c.closeNow()
	}()
	return nil
}

// closeNow closes the socket and gives back its place.
func (c *conn) closeNow() error {
	err := c.Conn.Close()
	c.m.open.Dec()
	if c.release != nil {
		c.release()
	}
	return err
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
		c.sendHeld() // coalesce.go
		c.upgraded.Store(true)
	}
	return http.NewResponseController(w).Hijack()
}
