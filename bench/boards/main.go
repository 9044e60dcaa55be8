// Command boards measures what a board costs as their number grows (issue
// 17 item 9), through the HTTP API of a podium it starts: it creates -n
// boards with PUT /v1/boards/{id} from -clients concurrent clients, and
// reports, for each tenth of the run, the PUT rate, the latency (p50, p99)
// and the server's CPU per PUT (from /proc); then the first and the last
// thousand PUTs side by side, and a restart: the time from starting the
// process until /readyz answers 200, and its CPU.
//
//	go build -o /tmp/podium ./cmd/podium
//	go run ./bench/boards -podium /tmp/podium -n 100000 -clients 8
//	go run ./bench/boards -podium /tmp/podium -n 100000 -clients 8 -db postgres://postgres@127.0.0.1:5432/test?sslmode=disable
//
// On PostgreSQL it works in a schema of its own (dropped at the end unless
// -keep). The server runs with the rate limits off.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

const adminKey = "bench-boards-admin-key"

type config struct {
	podium  string
	n       int
	clients int
	db      string
	sync    string
	keep    bool
	debug   string
}

func main() {
	var c config
	flag.StringVar(&c.podium, "podium", "", "the podium binary to start (go build -o /tmp/podium ./cmd/podium)")
	flag.IntVar(&c.n, "n", 100_000, "boards to create")
	flag.IntVar(&c.clients, "clients", 8, "concurrent clients")
	flag.StringVar(&c.db, "db", "", "PostgreSQL URL: run on a schema of its own there (default: SQLite in a temp directory)")
	flag.StringVar(&c.sync, "sync", "full", "SQLite --sync")
	flag.BoolVar(&c.keep, "keep", false, "keep the data directory or schema")
	flag.StringVar(&c.debug, "debug-addr", "", "the server's --debug-addr (pprof), e.g. 127.0.0.1:6061")
	flag.Parse()
	if c.podium == "" {
		fmt.Fprintln(os.Stderr, "boards: -podium is required (go build -o /tmp/podium ./cmd/podium)")
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "boards:", err)
		os.Exit(1)
	}
}

// server is a podium process.
type server struct {
	bin  string
	args []string
	url  string
	cmd  *exec.Cmd
	logf string
}

func run(c config) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "podium-bench-boards-")
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s := &server{bin: c.podium, url: "http://" + addr, logf: filepath.Join(dir, "podium.log"),
		args: []string{"serve", "--addr", addr, "--log-level", "warn", "--rate-submit", "off", "--rate-key", "off", "--rate-anon", "off"}}
	if c.debug != "" {
		s.args = append(s.args, "--debug-addr", c.debug)
	}
	store := "sqlite --sync " + c.sync
	if c.db != "" {
		schema := "podium_bench_boards_" + randHex(4)
		base := c.db
		if err := pgExec(ctx, base, "CREATE SCHEMA "+schema); err != nil {
			return err
		}
		if !c.keep {
			defer pgExec(ctx, base, "DROP SCHEMA "+schema+" CASCADE")
		}
		u, err := url.Parse(base)
		if err != nil {
			return err
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		s.args = append(s.args, "--db", u.String(), "--node", "bench", "--data", dir)
		store = "postgres (schema " + schema + ")"
	} else {
		s.args = append(s.args, "--data", dir, "--sync", c.sync)
	}
	if !c.keep {
		defer os.RemoveAll(dir)
	} else {
		fmt.Println("# data:", dir)
	}
	fmt.Printf("# go run ./bench/boards -n %d -clients %d, store %s\n", c.n, c.clients, store)
	if _, _, err := s.start(); err != nil {
		return err
	}
	defer s.stop()

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c.clients}, Timeout: time.Minute}
	lat := make([]time.Duration, c.n)
	cpuAt := make([]time.Duration, 11) // server CPU at each tenth
	var next, doneN atomic.Int64
	var firstErr atomic.Value
	tenth := max(c.n/10, 1)
	cpuAt[0] = s.cpu()
	t0 := time.Now()
	marks := make([]time.Time, 11)
	marks[0] = t0
	var mmu sync.Mutex
	var wg sync.WaitGroup
	for range c.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= c.n || firstErr.Load() != nil {
					return
				}
				body := fmt.Sprintf(`{"title":"Level %d","public":true,"keys":[{"name":"time_ms","order":"asc"},{"name":"moves","order":"asc"}],"reset":{"every":"day"}}`, i)
				t := time.Now()
				if err := put(hc, s.url+"/v1/boards/"+fmt.Sprintf("b%07d", i), body); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				lat[i] = time.Since(t)
				if d := int(doneN.Add(1)); d%tenth == 0 && d/tenth <= 10 {
					mmu.Lock()
					marks[d/tenth], cpuAt[d/tenth] = time.Now(), s.cpu()
					mmu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	total := time.Since(t0)
	fmt.Printf("\ncreated %d boards in %v (%.0f PUTs/s), server CPU %v (%.0f us a PUT)\n\n", c.n, total.Round(time.Millisecond),
		float64(c.n)/total.Seconds(), (s.cpu() - cpuAt[0]).Round(time.Millisecond), float64((s.cpu()-cpuAt[0]).Microseconds())/float64(c.n))
	fmt.Println("| boards | PUTs/s | p50 | p99 | server CPU a PUT |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: |")
	for k := 1; k <= 10 && k*tenth <= c.n; k++ {
		// Latencies by the order the PUTs were started in, a fair cut.
		part := slices.Clone(lat[(k-1)*tenth : k*tenth])
		slices.Sort(part)
		dt := marks[k].Sub(marks[k-1])
		fmt.Printf("| %d-%d | %.0f | %s | %s | %.0f us |\n", (k-1)*tenth, k*tenth, float64(tenth)/dt.Seconds(),
			ms(part[len(part)/2]), ms(part[len(part)*99/100]), float64((cpuAt[k]-cpuAt[k-1]).Microseconds())/float64(tenth))
	}
	w := min(1000, c.n)
	first, last := slices.Clone(lat[:w]), slices.Clone(lat[c.n-w:])
	slices.Sort(first)
	slices.Sort(last)
	fmt.Printf("\nPUT latency, first %d: p50 %s p99 %s; last %d (at %d boards): p50 %s p99 %s\n", w, ms(first[w/2]), ms(first[w*99/100]),
		w, c.n, ms(last[w/2]), ms(last[w*99/100]))

	rss := s.rss()
	fmt.Printf("server RSS with %d boards: %.0f MiB (%.0f B a board, the empty server's included)\n", c.n, float64(rss)/(1<<20), float64(rss)/float64(c.n))

	// Pages of the list (the first, and one near the end: the same cost if
	// a page is O(page)), and a restart.
	for _, q := range []string{"", "?cursor=" + base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "b%07d", max(c.n-1001, 0)))} {
		t := time.Now()
		if _, err := get(hc, s.url+"/v1/boards"+q); err != nil {
			return err
		}
		fmt.Printf("GET /v1/boards%s (a page of 1000): %s\n", q, ms(time.Since(t)))
	}
	s.stop()
	ready, cpu, err := s.start()
	if err != nil {
		return err
	}
	rss = s.rss()
	fmt.Printf("restart with %d boards: ready in %v, %v of CPU; RSS %.0f MiB (%.0f B a board)\n", c.n, ready.Round(time.Millisecond),
		cpu.Round(time.Millisecond), float64(rss)/(1<<20), float64(rss)/float64(c.n))
	return nil
}

// rss is the server's resident set size in bytes (0 if unknown).
func (s *server) rss() int64 {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// start starts the server and waits for /readyz; it returns how long that
// took and the CPU the process used until then.
func (s *server) start() (time.Duration, time.Duration, error) {
	logf, err := os.OpenFile(s.logf, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, 0, err
	}
	s.cmd = exec.Command(s.bin, s.args...)
	s.cmd.Env = append(os.Environ(), "PODIUM_ADMIN_KEY="+adminKey)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	t0 := time.Now()
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return 0, 0, err
	}
	logf.Close()
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		res, err := hc.Get(s.url + "/readyz")
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return time.Since(t0), s.cpu(), nil
			}
		}
		if time.Since(t0) > 10*time.Minute {
			return 0, 0, fmt.Errorf("podium not ready after 10 minutes (log: %s)", s.logf)
		}
		if s.cmd.ProcessState != nil {
			return 0, 0, fmt.Errorf("podium exited (log: %s)", s.logf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop ends the server with SIGTERM and waits for it.
func (s *server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
	s.cmd = nil
}

// cpu is the CPU time (user and system) the server process has used.
func (s *server) cpu() time.Duration {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which is in parentheses): utime and
	// stime are the 14th and 15th fields of the line, in clock ticks.
	rest := string(b[bytes.LastIndexByte(b, ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ
	return time.Duration(ut+st) * time.Second / ticks
}

func put(hc *http.Client, u, body string) error {
	req, err := http.NewRequest(http.MethodPut, u, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+adminKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK {
		return fmt.Errorf("PUT %s: %d %s", u, res.StatusCode, b)
	}
	return nil
}

func get(hc *http.Client, u string) ([]byte, error) {
	res, err := hc.Get(u)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %d %s", u, res.StatusCode, b)
	}
	return b, err
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// pgExec runs one statement on a connection of its own.
func pgExec(ctx context.Context, dsn, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	if err != nil {
		return errors.New(sql + ": " + err.Error())
	}
	return nil
}
