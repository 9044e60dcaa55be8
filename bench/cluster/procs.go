package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// spec says what kind of cluster to start.
type spec struct {
	Name   string // shown in the report: "sqlite", "pg", "pg+redis"
	Nodes  int
	SQLite bool     // one node on SQLite (--sync full) instead of PostgreSQL
	Redis  bool     // PostgreSQL nodes with --redis
	Extra  []string // more `podium serve` flags for every node
}

// node is one `podium serve` process the harness started.
type node struct {
	name string
	addr string // host:port
	url  string
	app  string // application_name of its database sessions ("" on SQLite)
	args []string
	cmd  *exec.Cmd
	logf string        // its stderr
	done chan struct{} // closed when the process has exited
	err  error         // the exit status, once done is closed
}

// cluster is a set of nodes on one database: a schema of its own on
// PostgreSQL (dropped by close), or a data directory on SQLite.
type cluster struct {
	h      *harness
	spec   spec
	schema string
	dsn    string // the --db URL without application_name
	data   string // SQLite: the data directory
	env    string // PostgreSQL: the --env of this cluster (its notice channel and Redis keys)
	nodes  []*node
	// listener counts the notices on the cluster's LISTEN/NOTIFY channel.
	listener *noticeListener
}

// randHex returns n random bytes in hex.
func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// withDatabase returns the PostgreSQL URL dsn naming database name.
func withDatabase(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// withParams returns the PostgreSQL URL dsn with the given query
// parameters set.
func withParams(dsn string, kv ...string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("--db %q: want a postgres:// URL", redact(dsn))
	}
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// redact hides a password in a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxx")
	}
	return u.String()
}

// pgExec runs statements on a connection of their own to the database
// that dsn names.
func pgExec(ctx context.Context, dsn string, sql ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", redact(dsn), err)
	}
	defer conn.Close(context.Background())
	for _, s := range sql {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// startCluster creates the cluster's schema or data directory and starts
// its nodes, each ready before the next starts (the first one migrates).
func (h *harness) startCluster(ctx context.Context, sp spec) (*cluster, error) {
	c := &cluster{h: h, spec: sp}
	if sp.SQLite {
		c.data = filepath.Join(h.tmp, "sqlite-"+randHex(4))
	} else {
		c.schema = "bench_cluster_" + randHex(5)
		if err := pgExec(ctx, h.db, "CREATE SCHEMA "+c.schema); err != nil {
			return nil, err
		}
		h.schemas[c.schema] = true
		var err error
		if c.dsn, err = withParams(h.db, "search_path", c.schema); err != nil {
			c.close()
			return nil, err
		}
		c.env = "bench-" + randHex(4)
		if c.listener, err = listenNotices(ctx, h.db, c.env); err != nil {
			c.close()
			return nil, fmt.Errorf("listen for the cluster's notices: %w", err)
		}
	}
	for i := 0; i < sp.Nodes; i++ {
		if err := c.addNode(ctx); err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

// addNode starts one more node and waits until it is ready.
func (c *cluster) addNode(ctx context.Context) error {
	i := len(c.nodes)
	nd := &node{name: fmt.Sprintf("n%d", i+1)}
	c.nodes = append(c.nodes, nd)
	port, err := freePort()
	if err != nil {
		return err
	}
	nd.addr = "127.0.0.1:" + strconv.Itoa(port)
	nd.url = "http://" + nd.addr
	nd.args = []string{"serve", "--addr", nd.addr, "--log-level", "warn",
		// One harness address and key: the default limits would answer most
		// of the load with 429.
		"--rate-submit", "off", "--rate-key", "off", "--rate-anon", "off", "--conns-per-ip", "0"}
	if c.spec.SQLite {
		nd.args = append(nd.args, "--data", c.data, "--sync", "full")
	} else {
		nd.app = c.schema + "-" + nd.name
		dsn, err := withParams(c.dsn, "application_name", nd.app)
		if err != nil {
			return err
		}
		nd.args = append(nd.args, "--db", dsn, "--node", nd.name, "--poll-every", c.h.cfg.PollEvery.String(), "--env", c.env)
		if c.spec.Redis {
			nd.args = append(nd.args, "--redis", c.h.redisURL)
		}
	}
	nd.args = append(nd.args, c.spec.Extra...)
	if err := c.h.exec(nd); err != nil {
		return err
	}
	if _, err := waitReady(ctx, nd, 2*time.Minute); err != nil {
		return err
	}
	return nil
}

// exec starts nd's process (again, after a kill), its stderr appended to
// a log file in the harness's directory.
func (h *harness) exec(nd *node) error {
	if nd.logf == "" {
		nd.logf = filepath.Join(h.tmp, "node-"+randHex(4)+".log")
	}
	f, err := os.OpenFile(nd.logf, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(h.podium, nd.args...)
	cmd.Env = append(os.Environ(), "PODIUM_ADMIN_KEY="+h.key)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", h.podium, err)
	}
	f.Close()
	nd.cmd, nd.done, nd.err = cmd, make(chan struct{}), nil
	done := nd.done
	go func() {
		err := cmd.Wait()
		nd.err = err
		close(done)
	}()
	return nil
}

// exited reports whether nd's process has ended.
func (nd *node) exited() bool {
	select {
	case <-nd.done:
		return true
	default:
		return false
	}
}

// logTail returns the last lines of nd's log, for error messages.
func (nd *node) logTail() string {
	f, err := os.Open(nd.logf)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 8 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// signal sends sig to nd's process.
func (nd *node) signal(sig syscall.Signal) error {
	if nd.cmd == nil || nd.exited() {
		return errors.New(nd.name + " is not running")
	}
	return nd.cmd.Process.Signal(sig)
}

// stop ends nd gracefully (SIGTERM), or with SIGKILL after a timeout.
func (nd *node) stop(timeout time.Duration) {
	if nd.cmd == nil || nd.exited() {
		return
	}
	nd.cmd.Process.Signal(syscall.SIGCONT) // a paused node cannot shut down
	nd.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-nd.done:
	case <-time.After(timeout):
		nd.cmd.Process.Kill()
		<-nd.done
	}
}

// close stops every node and drops the schema or the data directory.
func (c *cluster) close() {
	for _, nd := range c.nodes {
		nd.stop(15 * time.Second)
	}
	if c.listener != nil {
		c.listener.close()
	}
	if c.schema != "" {
		if err := pgExec(context.Background(), c.h.db, "DROP SCHEMA IF EXISTS "+c.schema+" CASCADE"); err != nil {
			fmt.Fprintf(c.h.log, "cluster: dropping schema %s: %v\n", c.schema, err)
		} else {
			delete(c.h.schemas, c.schema)
		}
	}
	if c.data != "" {
		os.RemoveAll(c.data)
	}
}

// urls returns the nodes' base URLs.
func (c *cluster) urls() []string {
	out := make([]string, len(c.nodes))
	for i, nd := range c.nodes {
		out[i] = nd.url
	}
	return out
}

// redisServer is a redis-server of the harness's own, without persistence.
type redisServer struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

// startRedis starts redis-server (the binary path given) on a free port.
func startRedis(ctx context.Context, bin string) (*redisServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &redisServer{addr: "127.0.0.1:" + strconv.Itoa(port), done: make(chan struct{})}
	r.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	r.cmd.SysProcAttr = childAttr()
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { r.cmd.Wait(); close(r.done) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", r.addr, 200*time.Millisecond); err == nil {
			c.Close()
			return r, nil
		}
		select {
		case <-r.done:
			return nil, fmt.Errorf("%s exited at start", bin)
		case <-ctx.Done():
			r.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	r.stop()
	return nil, fmt.Errorf("%s on %s did not come up", bin, r.addr)
}

func (r *redisServer) stop() {
	r.cmd.Process.Kill()
	<-r.done
}
