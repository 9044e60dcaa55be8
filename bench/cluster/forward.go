package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// proxyMain is `cluster proxy --listen ADDR --target URL`: a reverse proxy
// (net/http/httputil) in a process of its own, standing for the hop a
// node would add if it forwarded writes to a board's owner.
func proxyMain(args []string) int {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	target := fs.String("target", "", "base URL of the node behind the proxy")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	u, err := url.Parse(*target)
	if err != nil || u.Host == "" {
		fmt.Fprintln(os.Stderr, "proxy: --target must be http://host:port")
		return 2
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) },
		// Keep-alive connections to the node, as many as clients: a
		// forwarding node would pool its connections to the owner.
		Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 90 * time.Second,
			DisableCompression: true},
	}
	srv := &http.Server{Addr: *listen, Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		return 1
	}
	return 0
}

// fwdCases are the forwarding measurements: submits directly to a node
// and through the proxy, at full load and one at a time (the latency of a
// hop).
var fwdCases = []struct {
	Name  string
	Proxy bool
	Conns int // 0: --conns
}{
	{"direct", false, 0}, {"through proxy", true, 0},
	{"direct, 1 connection", false, 1}, {"through proxy, 1 connection", true, 1},
}

// fwdResults are the forwarding phase's measures by case, one per run, and
// the proxy's own CPU use.
type fwdResults struct {
	runs       int
	m          map[string][]*measure
	proxyCores map[string][]float64
}

// runForward measures one PostgreSQL node directly and through a reverse
// proxy started as a separate process, alternating the order per run.
func (h *harness) runForward(ctx context.Context) (*fwdResults, error) {
	res := &fwdResults{runs: h.cfg.Runs, m: map[string][]*measure{}, proxyCores: map[string][]float64{}}
	for run := 0; run < h.cfg.Runs; run++ {
		h.progress("forward run %d/%d", run+1, h.cfg.Runs)
		if err := h.forwardOnce(ctx, run, res); err != nil {
			return res, fmt.Errorf("forward, run %d: %w", run+1, err)
		}
	}
	return res, nil
}

func (h *harness) forwardOnce(ctx context.Context, run int, res *fwdResults) error {
	c, err := h.startCluster(ctx, spec{Name: "pg x1", Nodes: 1})
	if err != nil {
		return err
	}
	defer c.close()
	nd := c.nodes[0]
	if err := h.api.putBoard(ctx, nd.url, tpBoard, boardOneKey); err != nil {
		return err
	}
	if err := h.api.fill(ctx, []string{nd.url}, tpBoard, 1, h.cfg.Players, 5000, 4, func(i int) string {
		return strconv.Itoa(int(hashScore(uint64(i))))
	}); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	proxyAddr := "127.0.0.1:" + strconv.Itoa(port)
	proxy := exec.Command(self, "proxy", "--listen", proxyAddr, "--target", nd.url)
	proxy.Stderr = h.log
	proxy.SysProcAttr = childAttr()
	if err := proxy.Start(); err != nil {
		return err
	}
	defer func() { proxy.Process.Kill(); proxy.Wait() }()
	if err := waitListening(ctx, proxyAddr, 10*time.Second); err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	order := []int{0, 1, 2, 3}
	if run%2 == 1 {
		order = []int{1, 0, 3, 2}
	}
	for _, i := range order {
		fc := fwdCases[i]
		conns := fc.Conns
		if conns == 0 {
			conns = h.cfg.Conns
		}
		u := nd.url
		if fc.Proxy {
			u = "http://" + proxyAddr
		}
		job := wrkJob{URL: u, Script: "submit.lua", Threads: min(2, conns), Conns: conns,
			Env: []string{"BOARD=" + tpBoard, "PLAYERS=" + strconv.Itoa(h.cfg.Players)}}
		if h.cfg.Warmup > 0 {
			if _, err := h.wrk.run(ctx, []wrkJob{job}, h.cfg.Warmup); err != nil {
				return err
			}
		}
		a := h.snapshot(ctx, c)
		p0, _ := procCPU(proxy.Process.Pid)
		r, err := h.wrk.run(ctx, []wrkJob{job}, h.cfg.Duration)
		if err != nil {
			return err
		}
		p1, _ := procCPU(proxy.Process.Pid)
		b := h.snapshot(ctx, c)
		m := &measure{Rate: r.Rate, P50: r.Hist.quantile(0.5), P99: r.Hist.quantile(0.99), Non2xx: r.Non2xx,
			SockErrs: r.SockErrs, Load: rate(a, b)}
		if res.m[fc.Name] == nil {
			res.m[fc.Name] = make([]*measure, res.runs)
		}
		res.m[fc.Name][run] = m
		res.proxyCores[fc.Name] = append(res.proxyCores[fc.Name], (p1-p0).Seconds()/b.at.Sub(a.at).Seconds())
		h.progress("  %-30s %8.0f/s  p50 %-9s p99 %-9s", fc.Name, m.Rate, fmtDur(m.P50), fmtDur(m.P99))
	}
	return nil
}

// waitListening waits until something accepts connections on addr.
func waitListening(ctx context.Context, addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %s", addr, within)
		}
		if err := sleepCtx(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
}
