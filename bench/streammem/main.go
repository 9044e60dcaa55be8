// Command streammem measures what live streams cost a podium server in
// memory and in write throughput, under the two shapes that issue 6 item 7
// reported:
//
//   - ws: --conns WebSockets (32, one IP's cap) each subscribing to --subs
//     windows (64) at distinct (board, limit) pairs, limits near 1000, on
//     boards kept busy by --writers submitters;
//   - sse: --conns idle SSE readers at limits near 1000 on one board, with
//     the server started with a short --stream-snapshot-every (1s).
//
// With --noread the clients never read what the server sends (and ask
// for a 4 KiB receive buffer), the shape of issue 17 item 5; with
// --addrs N they connect from N loopback source addresses (127.0.1.1 and
// on), so per-address shares of the budget are exercised as from N
// hosts. --boards spreads SSE streams too when more than one is given.
//
// It starts nothing itself: it drives a running server and reads the
// server's resident memory from /proc/<pid>/status (--pid) and its Go heap
// from /metrics. It first measures the submitters alone for --baseline,
// then opens the streams and measures again for --duration, sampling
// memory every second; it prints one report with the command, ready for
// docs/BENCHMARKS.md.
//
//	PODIUM_ADMIN_KEY=k podium serve --addr 127.0.0.1:18099 --data $(mktemp -d) --sync normal &
//	PODIUM_ADMIN_KEY=k go run ./bench/streammem --url http://127.0.0.1:18099 --pid $! --shape ws
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

type config struct {
	url      string
	key      string
	pid      int
	shape    string
	boards   int
	players  int
	conns    int
	subs     int
	noread   bool
	addrs    int
	writers  int
	baseline time.Duration
	duration time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.url, "url", "http://127.0.0.1:8080", "podium base URL")
	flag.IntVar(&c.pid, "pid", 0, "server pid, to read its resident memory from /proc")
	flag.StringVar(&c.shape, "shape", "ws", "ws: WebSockets with many subscriptions; sse: idle SSE readers")
	flag.IntVar(&c.boards, "boards", 3, "boards to spread the windows over (ws)")
	flag.IntVar(&c.players, "players", 2000, "entries preloaded per board")
	flag.IntVar(&c.conns, "conns", 32, "stream connections")
	flag.IntVar(&c.subs, "subs", 64, "subscriptions per WebSocket (ws)")
	flag.BoolVar(&c.noread, "noread", false, "clients never read their streams (4 KiB receive buffers)")
	flag.IntVar(&c.addrs, "addrs", 0, "source addresses to connect from, 127.0.1.1 and on (0: the default)")
	flag.IntVar(&c.writers, "writers", 4, "concurrent submitters (0: none)")
	flag.DurationVar(&c.baseline, "baseline", 10*time.Second, "submitters alone, before the streams open")
	flag.DurationVar(&c.duration, "duration", 60*time.Second, "with the streams open")
	flag.Parse()
	c.key = os.Getenv("PODIUM_ADMIN_KEY")
	if c.key == "" {
		fmt.Fprintln(os.Stderr, "streammem: set PODIUM_ADMIN_KEY")
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "streammem:", err)
		os.Exit(1)
	}
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}

func (c config) do(method, path, body string) ([]byte, int, error) {
	req, _ := http.NewRequest(method, c.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return b, res.StatusCode, err
}

func boardID(i int) string { return fmt.Sprintf("mem-%d", i) }

func (c config) setup() error {
	for b := 0; b < c.nboards(); b++ {
		id := boardID(b)
		c.do("DELETE", "/v1/boards/"+id, "")
		if _, st, err := c.do("PUT", "/v1/boards/"+id, `{"title":"memory","keys":[{"name":"points","order":"desc"}],"mode":"latest","public":true}`); err != nil || st != 201 {
			return fmt.Errorf("create board %s: %d %v", id, st, err)
		}
		var items []string
		for p := 0; p < c.players; p++ {
			items = append(items, fmt.Sprintf(`{"board":%q,"player":"player-%05d","keys":[%d],"meta":{"team":"t%d"}}`, id, p, p*7%10007, p%17))
		}
		if b, st, err := c.do("POST", "/v1/scores", `{"scores":[`+strings.Join(items, ",")+`]}`); err != nil || st != 200 {
			return fmt.Errorf("preload %s: %d %v %.200s", id, st, err, b)
		}
	}
	return nil
}

// nboards is how many boards the shape uses: --boards, but one for sse
// unless --boards says more than the default.
func (c config) nboards() int {
	if c.shape == "sse" && c.boards == 3 {
		return 1
	}
	return c.boards
}

// dialer is the dialer of stream connection i: from its source address
// with --addrs, with a 4 KiB receive buffer with --noread.
func (c config) dialer(i int) *net.Dialer {
	d := &net.Dialer{}
	if c.addrs > 0 {
		a := i % c.addrs
		d.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, byte(1+a/250), byte(1+a%250))}
	}
	if c.noread {
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		}
	}
	return d
}

// latencies collects the submitters' latencies.
var latencies struct {
	sync.Mutex
	d []time.Duration
}

func p99() time.Duration {
	latencies.Lock()
	defer latencies.Unlock()
	if len(latencies.d) == 0 {
		return 0
	}
	slices.Sort(latencies.d)
	v := latencies.d[len(latencies.d)*99/100]
	latencies.d = latencies.d[:0]
	return v
}

// writers submits single scores until stop; done counts successes.
func (c config) submitters(stop <-chan struct{}, done, failed *atomic.Int64, boards int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := 0; w < c.writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				b := boardID((w + i) % boards)
				body := fmt.Sprintf(`{"player":"player-%05d","keys":[%d]}`, (i*31+w*977)%c.players, (i*7919+w)%10007)
				t0 := time.Now()
				if _, st, err := c.do("POST", "/v1/boards/"+b+"/scores", body); err != nil || st != 200 {
					failed.Add(1)
					continue
				}
				d := time.Since(t0)
				latencies.Lock()
				latencies.d = append(latencies.d, d)
				latencies.Unlock()
				done.Add(1)
			}
		}(w)
	}
	return &wg
}

type sample struct {
	rss, heap, stream int64
	peak              int64 // podium_stream_memory_peak_bytes: the most accounted at once
	conns, behind     int64 // open stream connections; times one fell behind its bound
	addrMax           int64 // the most one client address holds now
}

// serverCPU returns the CPU time the server has used (user + system),
// from /proc/<pid>/stat; 0 without --pid.
func (c config) serverCPU() time.Duration {
	if c.pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces): utime
	// and stime are the 12th and 13th, in clock ticks (100 a second).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// memory reads the server's resident set (VmRSS) and, from /metrics, its
// heap in use and (when it has it) podium_stream_memory_bytes.
func (c config) memory() sample {
	var s sample
	if c.pid > 0 {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.pid)); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
					kb, _ := strconv.ParseInt(f[1], 10, 64)
					s.rss = kb << 10
				}
			}
		}
	}
	res, err := client.Get(c.url + "/metrics")
	if err != nil {
		return s
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "go_memstats_heap_inuse_bytes":
			s.heap = int64(v)
		case "podium_stream_memory_bytes":
			s.stream = int64(v)
		case "podium_stream_memory_peak_bytes":
			s.peak = int64(v)
		case "podium_stream_connections":
			s.conns = int64(v)
		case "podium_stream_memory_address_max_bytes":
			s.addrMax = int64(v)
		case "podium_stream_behind_total":
			s.behind = int64(v)
		}
	}
	return s
}

// streams opens the streams of the shape and reads them until ctx ends.
// It returns how many subscriptions the server took and refused.
func (c config) streams(ctx context.Context, opened, refused *atomic.Int64, bytesIn *atomic.Int64) {
	switch c.shape {
	case "sse":
		for i := 0; i < c.conns; i++ {
			go func(i int) {
				board, limit := boardID(i/1000%c.nboards()), 1000-i%1000
				if c.noread {
					conn, err := c.dialer(i).DialContext(ctx, "tcp", strings.TrimPrefix(c.url, "http://"))
					if err != nil {
						refused.Add(1)
						return
					}
					defer conn.Close()
					fmt.Fprintf(conn, "GET /v1/boards/%s/stream?limit=%d HTTP/1.1\r\nHost: x\r\n\r\n", board, limit)
					opened.Add(1)
					<-ctx.Done() // never read
					return
				}
				req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/v1/boards/%s/stream?limit=%d", c.url, board, limit), nil)
				hc := &http.Client{Transport: &http.Transport{DialContext: c.dialer(i).DialContext}}
				res, err := hc.Do(req)
				if err != nil {
					refused.Add(1)
					return
				}
				defer res.Body.Close()
				if res.StatusCode != 200 {
					refused.Add(1)
					return
				}
				opened.Add(1)
				buf := make([]byte, 64<<10)
				for {
					n, err := res.Body.Read(buf)
					bytesIn.Add(int64(n))
					if err != nil {
						return
					}
				}
			}(i)
		}
	case "ws":
		for i := 0; i < c.conns; i++ {
			go func(i int) {
				hc := &http.Client{Transport: &http.Transport{DialContext: c.dialer(i).DialContext}}
				ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(c.url, "http")+"/v1/stream", &websocket.DialOptions{HTTPClient: hc})
				if err != nil {
					refused.Add(int64(c.subs))
					return
				}
				defer ws.CloseNow()
				ws.SetReadLimit(16 << 20)
				for s := 0; s < c.subs; s++ {
					k := i*c.subs + s // a distinct (board, limit) pair each
					msg := fmt.Sprintf(`{"op":"subscribe","board":%q,"limit":%d,"id":"%d"}`, boardID(k/1000%c.boards), 1000-k%1000, k)
					if ws.Write(ctx, websocket.MessageText, []byte(msg)) != nil {
						return
					}
					if c.noread {
						opened.Add(1) // asked; a client that never reads learns nothing
					}
				}
				if c.noread {
					<-ctx.Done() // never read (coder/websocket reads only when asked)
					return
				}
				for {
					_, b, err := ws.Read(ctx)
					if err != nil {
						return
					}
					bytesIn.Add(int64(len(b)))
					if len(b) > 512 { // an event
						continue
					}
					var m struct{ Type, Code, ID string }
					json.Unmarshal(b, &m)
					switch {
					case m.Type == "subscribed":
						opened.Add(1)
					case m.Type == "error" && m.ID != "":
						refused.Add(1)
						if refusals.Add(1) <= 3 {
							fmt.Fprintf(os.Stderr, "refused: %s\n", b)
						}
					}
				}
			}(i)
		}
	}
}

var refusals atomic.Int64

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func run(c config) error {
	fmt.Printf("streammem %s, go %s, GOMAXPROCS %d\n", time.Now().UTC().Format(time.RFC3339), runtime.Version(), runtime.GOMAXPROCS(0))
	fmt.Printf("flags: --shape %s --conns %d --subs %d --boards %d --players %d --writers %d --baseline %s --duration %s --noread=%v --addrs %d\n",
		c.shape, c.conns, c.subs, c.boards, c.players, c.writers, c.baseline, c.duration, c.noread, c.addrs)
	if err := c.setup(); err != nil {
		return err
	}
	boards := c.nboards()
	start := c.memory()
	fmt.Printf("after preload: rss %s, heap %s\n", mib(start.rss), mib(start.heap))

	var done, failed atomic.Int64
	stop := make(chan struct{})
	cpu0 := c.serverCPU()
	wg := c.submitters(stop, &done, &failed, boards)
	time.Sleep(c.baseline)
	base := done.Swap(0)
	baseRate := float64(base) / c.baseline.Seconds()
	cpu1 := c.serverCPU()
	before := c.memory()
	fmt.Printf("baseline (%s, no streams): %.0f submissions/s (p99 %s), server cpu %.2f cores, rss %s, heap %s\n", c.baseline, baseRate, p99(),
		(cpu1-cpu0).Seconds()/c.baseline.Seconds(), mib(before.rss), mib(before.heap))

	ctx, cancel := context.WithCancel(context.Background())
	var opened, refused, bytesIn atomic.Int64
	c.streams(ctx, &opened, &refused, &bytesIn)
	var peak sample
	t0 := time.Now()
	for time.Since(t0) < c.duration {
		time.Sleep(time.Second)
		m := c.memory()
		peak.rss, peak.heap, peak.stream = max(peak.rss, m.rss), max(peak.heap, m.heap), max(peak.stream, m.stream)
		peak.addrMax = max(peak.addrMax, m.addrMax)
	}
	attack := done.Swap(0)
	elapsed := time.Since(t0)
	attackRate := float64(attack) / elapsed.Seconds()
	cpu2 := c.serverCPU()
	end := c.memory()
	cancel()
	close(stop)
	wg.Wait()
	fmt.Printf("with streams (%s): subscriptions taken %d, refused %d, %s received\n", c.duration, opened.Load(), refused.Load(), mib(bytesIn.Load()))
	fmt.Printf("  submissions: %.0f/s (%.0f%% of baseline, p99 %s), %d failed; server cpu %.2f cores\n", attackRate, 100*attackRate/max(baseRate, 1),
		p99(), failed.Load(), (cpu2-cpu1).Seconds()/elapsed.Seconds())
	fmt.Printf("  peak: rss %s, heap %s, stream accounting %s; at the end: rss %s, heap %s\n",
		mib(peak.rss), mib(peak.heap), mib(peak.stream), mib(end.rss), mib(end.heap))
	fmt.Printf("  server: accounted peak %s (podium_stream_memory_peak_bytes), one address at most %s (sampled), fell behind %d times, %d stream connections open at the end\n",
		mib(end.peak), mib(peak.addrMax), end.behind, end.conns)
	return nil
}
