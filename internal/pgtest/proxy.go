package pgtest

import (
	"io"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Proxy forwards TCP connections to a server. While frozen it keeps every
// connection open and forwards nothing, like a server that stopped
// answering (a partition, a hung host); thawed, it forwards what it held.
type Proxy struct {
	ln     net.Listener
	target string
	done   chan struct{} // closed when the test ends

	mu    sync.Mutex
	down  bool                  // new connections are closed at once
	gate  chan struct{}         // while frozen: closed by thaw
	conns map[net.Conn]struct{} // both ends of every forwarded connection
}

// Cut closes every connection the proxy forwards, at both ends, as a
// network failure would.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

func (p *Proxy) track(cs ...net.Conn) (untrack func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		p.conns = map[net.Conn]struct{}{}
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range cs {
			delete(p.conns, c)
		}
	}
}

// NewProxy starts a proxy to target (host:port) until t ends.
func NewProxy(t testing.TB, target string) *Proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, done: make(chan struct{})}
	t.Cleanup(func() { close(p.done); ln.Close() })
	go p.serve()
	return p
}

// Freeze holds every byte until Thaw.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate == nil {
		p.gate = make(chan struct{})
	}
}

// Thaw forwards again what Freeze held.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate != nil {
		close(p.gate)
		p.gate = nil
	}
}

// wait returns once the proxy is not frozen; false if the test ended.
func (p *Proxy) wait() bool {
	p.mu.Lock()
	gate := p.gate
	p.mu.Unlock()
	if gate == nil {
		return true
	}
	select {
	case <-gate:
		return true
	case <-p.done:
		return false
	}
}

// Port is the proxy's port on 127.0.0.1.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *Proxy) handle(c net.Conn) {
	defer c.Close()
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	if down {
		return
	}
	if !p.wait() {
		return
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	defer p.track(c, s)()
	go func() {
		p.pipe(c, s)
		c.Close()
	}()
	p.pipe(s, c)
}

// pipe copies src to dst until either ends, holding data back while the
// proxy is frozen.
func (p *Proxy) pipe(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if !p.wait() {
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Down cuts every connection and closes every new one at once, as a
// server that stopped would (connections refused fast).
func (p *Proxy) Down() {
	p.mu.Lock()
	p.down = true
	p.mu.Unlock()
	p.Cut()
}

// Up lets new connections through again.
func (p *Proxy) Up() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// Through returns dsn with its connections made through a new proxy to the
// server dsn names, and the proxy.
func Through(t testing.TB, dsn string) (string, *Proxy) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := NewProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	return WithParam(t, WithParam(t, dsn, "host", "127.0.0.1"), "port", strconv.Itoa(p.Port())), p
}
