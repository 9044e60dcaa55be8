package postgres

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium/internal/pgtest"
)

// proxy forwards TCP connections to a server. While frozen it keeps every
// connection open and forwards nothing, like a server that stopped
// answering (a partition, a hung host); thawed, it forwards what it held.
type proxy struct {
	ln     net.Listener
	target string
	done   chan struct{} // closed when the test ends

	mu    sync.Mutex
	gate  chan struct{}         // while frozen: closed by thaw
	conns map[net.Conn]struct{} // both ends of every forwarded connection
}

// cut closes every connection the proxy forwards, at both ends, as a
// network failure would.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

func (p *proxy) track(cs ...net.Conn) (untrack func()) {
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

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, done: make(chan struct{})}
	t.Cleanup(func() { close(p.done); ln.Close() })
	go p.serve()
	return p
}

func (p *proxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate == nil {
		p.gate = make(chan struct{})
	}
}

func (p *proxy) thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate != nil {
		close(p.gate)
		p.gate = nil
	}
}

// wait returns once the proxy is not frozen; false if the test ended.
func (p *proxy) wait() bool {
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

func (p *proxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *proxy) handle(c net.Conn) {
	defer c.Close()
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
func (p *proxy) pipe(dst io.Writer, src io.Reader) {
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

// throughProxy returns a store on a schema of its own whose connections go
// through a proxy that the test can freeze.
func throughProxy(t *testing.T, opts Options) (*Store, *proxy, string) {
	dsn, schema := pgtest.Schema(t)
	dsn = pgtest.WithParam(t, dsn, "application_name", schema)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	dsn = pgtest.WithParam(t, dsn, "host", "127.0.0.1")
	dsn = pgtest.WithParam(t, dsn, "port", strconv.Itoa(p.port()))
	return openDSN(t, dsn, opts), p, dsn
}

// Ping reports a server that stopped answering within the connect timeout,
// even when its caller gives no deadline.
func TestPingFailsWhenServerHangs(t *testing.T) {
	t.Parallel() // it mostly waits: for locks, timeouts or the disk
	s, p, dsn := throughProxy(t, Options{ConnectTimeout: time.Second, MaxConns: 2})
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping through the proxy: %v", err)
	}
	p.freeze()
	// Thawed before the store closes: pgx gives a connection it gives up
	// on 15 s to say goodbye to a server that does not answer.
	defer p.thaw()
	done := make(chan error, 1)
	go func() { done <- s.Ping(context.Background()) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Ping succeeded though the server no longer answers")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Ping did not return: it waits for a server that does not answer")
	}

	// Opening a store on a server that does not answer fails too.
	go func() {
		s2, err := Open(context.Background(), dsn, Options{ConnectTimeout: time.Second})
		if err == nil {
			s2.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Open succeeded though the server does not answer")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Open did not return: it waits for a server that does not answer")
	}
}

// Options reach every connection; a zero Option keeps what the connection
// string says, or the default.
func TestOpenOptions(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	show := func(s *Store, name string) string {
		t.Helper()
		var v string
		if err := s.pool.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		name        string
		dsn         string
		opts        Options
		timeout     string // statement_timeout as PostgreSQL shows it
		app         string
		maxConns    int32
		connTimeout time.Duration
		lock, idle  string // lock_timeout, idle_in_transaction_session_timeout
	}{
		{"defaults", dsn, Options{}, "30s", "podium", -1, DefaultConnectTimeout, "5s", "10s"},
		{"options", dsn, Options{StatementTimeout: 1500 * time.Millisecond, MaxConns: 3, ConnectTimeout: time.Second,
			LockTimeout: 700 * time.Millisecond, IdleInTransactionTimeout: 3 * time.Second}, "1500ms", "podium", 3, time.Second, "700ms", "3s"},
		{"no timeout", dsn, Options{StatementTimeout: -1, LockTimeout: -1, IdleInTransactionTimeout: -1}, "0", "podium", -1, DefaultConnectTimeout, "0", "0"},
		{"from the dsn", pgtest.WithParam(t, pgtest.WithParam(t, pgtest.WithParam(t, pgtest.WithParam(t, pgtest.WithParam(t, dsn,
			"statement_timeout", "7000"), "application_name", "mine"), "pool_max_conns", "5"), "connect_timeout", "4"), "lock_timeout", "2500"),
			Options{}, "7s", "mine", 5, 4 * time.Second, "2500ms", "10s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openDSN(t, c.dsn, c.opts)
			if got := show(s, "statement_timeout"); got != c.timeout {
				t.Errorf("statement_timeout = %s, want %s", got, c.timeout)
			}
			if got := show(s, "lock_timeout"); got != c.lock {
				t.Errorf("lock_timeout = %s, want %s", got, c.lock)
			}
			if got := show(s, "idle_in_transaction_session_timeout"); got != c.idle {
				t.Errorf("idle_in_transaction_session_timeout = %s, want %s", got, c.idle)
			}
			if got := show(s, "application_name"); got != c.app {
				t.Errorf("application_name = %s, want %s", got, c.app)
			}
			if c.maxConns > 0 && s.pool.Config().MaxConns != c.maxConns {
				t.Errorf("pool size = %d, want %d", s.pool.Config().MaxConns, c.maxConns)
			}
			if got := s.pool.Config().ConnConfig.ConnectTimeout; got != c.connTimeout {
				t.Errorf("connect timeout = %v, want %v", got, c.connTimeout)
			}
		})
	}
	if s, err := Open(ctx, "postgres://%zz", Options{}); err == nil {
		s.Close()
		t.Error("Open of a malformed connection string succeeded")
	}
}

// A fresh database gets every migration, once; opening it again applies
// nothing.
func TestOpenMigrates(t *testing.T) {
	s, dsn := openTest(t, Options{})
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		t.Fatalf("migrations() = %v, %v", ms, err)
	}
	check := func(s *Store) {
		t.Helper()
		var rows int
		if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM schema_migrations").Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != len(ms) {
			t.Errorf("schema_migrations has %d rows, want %d", rows, len(ms))
		}
		if v, err := s.SchemaVersion(ctx); err != nil || v != ms[len(ms)-1].Version {
			t.Errorf("SchemaVersion = %d, %v; want %d", v, err, ms[len(ms)-1].Version)
		}
	}
	check(s)
	if err := s.Commit(ctx, scores("b", 1, 3)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for range 2 {
		s = openDSN(t, dsn, Options{})
		check(s)
		if n := countEntries(t, s, "b"); n != 3 {
			t.Errorf("after reopening, %d entries, want 3", n)
		}
		s.Close()
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	s, dsn := openTest(t, Options{})
	if _, err := s.pool.Exec(ctx, "INSERT INTO schema_migrations (version, name, applied_ms) VALUES (9999, 'future', 0)"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s2, err := Open(ctx, dsn, Options{}); err == nil {
		s2.Close()
		t.Fatal("Open of a database from a newer podium succeeded")
	} else if !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open error %q does not say the schema is newer", err)
	}
}

// Several podium processes starting at once on a fresh database: every
// Open succeeds and the migrations are applied once.
func TestConcurrentOpen(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	const openers = 4
	var wg sync.WaitGroup
	start := make(chan struct{})
	stores := make([]*Store, openers)
	errs := make([]error, openers)
	for i := range openers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			stores[i], errs[i] = Open(ctx, dsn, Options{})
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
			continue
		}
		defer stores[i].Close()
	}
	if t.Failed() {
		return
	}
	var rows int
	if err := stores[0].pool.QueryRow(ctx, "SELECT count(*) FROM schema_migrations").Scan(&rows); err != nil || rows != len(ms) {
		t.Errorf("schema_migrations has %d rows (%v), want %d", rows, err, len(ms))
	}
}
