package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// bigBoard is the board of the start-up phase: two keys, as in engine's
// BenchmarkStartup1M.
const bigBoard = "bench.big"

// startResults are the start-up phase's figures.
type startResults struct {
	entries int
	// fill is how long filling the board through batch submits took.
	fill map[string]time.Duration
	// ready is, per store and run, the time from starting the process to
	// /readyz saying ready; rss is the process's resident memory then.
	ready map[string][]time.Duration
	rss   map[string][]int64
	// goBench is engine's BenchmarkStartup1M, ms per start (0: not run),
	// and goBenchErr why it was not.
	goBench    float64
	goBenchErr string
}

// runStartup fills one board of --startup-entries entries on PostgreSQL
// and on SQLite, then starts a node on each, run after run, and times it
// until /readyz says ready.
func (h *harness) runStartup(ctx context.Context) (*startResults, error) {
	res := &startResults{entries: h.cfg.StartEntries, fill: map[string]time.Duration{},
		ready: map[string][]time.Duration{}, rss: map[string][]int64{}}
	var clusters []*cluster
	defer func() {
		for _, c := range clusters {
			c.close()
		}
	}()
	for _, sp := range []spec{{Name: "sqlite x1", Nodes: 1, SQLite: true}, {Name: "pg x1", Nodes: 1}} {
		h.progress("startup: filling %s with %d entries", sp.Name, h.cfg.StartEntries)
		c, err := h.startCluster(ctx, sp)
		if err != nil {
			return res, err
		}
		clusters = append(clusters, c)
		nd := c.nodes[0]
		if err := h.api.putBoard(ctx, nd.url, bigBoard, boardTwoKeys); err != nil {
			return res, err
		}
		t0 := time.Now()
		err = h.api.fill(ctx, []string{nd.url}, bigBoard, 0, h.cfg.StartEntries, 5000, 4, func(i int) string {
			x := hashScore(uint64(i))
			return strconv.FormatInt(20000+x%200000, 10) + "," + strconv.FormatInt(100+(x/200000)%200, 10)
		})
		if err != nil {
			return res, err
		}
		res.fill[sp.Name] = time.Since(t0)
		h.progress("  filled in %s (%.0f scores/s)", res.fill[sp.Name].Round(time.Millisecond),
			float64(h.cfg.StartEntries)/res.fill[sp.Name].Seconds())
		nd.stop(time.Minute)
	}
	for run := 0; run < h.cfg.Runs; run++ {
		for _, c := range clusters {
			nd := c.nodes[0]
			t0 := time.Now()
			if err := h.exec(nd); err != nil {
				return res, err
			}
			if _, err := waitReady(ctx, nd, 5*time.Minute); err != nil {
				return res, err
			}
			d := time.Since(t0)
			rss := procRSS(nd.cmd.Process.Pid)
			total, err := h.api.total(ctx, nd.url, bigBoard)
			if err != nil {
				return res, err
			}
			if total != int64(h.cfg.StartEntries) {
				return res, fmt.Errorf("%s started with %d entries, want %d", c.spec.Name, total, h.cfg.StartEntries)
			}
			nd.stop(time.Minute)
			res.ready[c.spec.Name] = append(res.ready[c.spec.Name], d)
			res.rss[c.spec.Name] = append(res.rss[c.spec.Name], rss)
			h.progress("startup run %d/%d: %s ready in %s, rss %d MiB", run+1, h.cfg.Runs, c.spec.Name,
				d.Round(time.Millisecond), rss>>20)
		}
	}
	if h.cfg.GoBench && h.cfg.StartEntries == 1_000_000 {
		h.progress("startup: go test -run '^$' -bench Startup1M -benchtime 3x ./engine/")
		res.goBench, res.goBenchErr = h.goBenchStartup(ctx)
	} else {
		res.goBenchErr = "not run (--go-bench=false, or --startup-entries is not 1000000)"
	}
	return res, ctx.Err()
}

var msPerStart = regexp.MustCompile(`BenchmarkStartup1M\S*\s+\d+\s+\d+ ns/op.*?\s([0-9.]+) ms/start`)

// goBenchStartup runs engine's BenchmarkStartup1M and returns its ms per
// start.
func (h *harness) goBenchStartup(ctx context.Context) (float64, string) {
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "Startup1M", "-benchtime", "3x", "./engine/")
	cmd.Dir = h.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Sprintf("go test failed: %v", err)
	}
	return parseGoBench(string(out))
}

// parseGoBench finds the ms/start of BenchmarkStartup1M in go test's
// output.
func parseGoBench(out string) (float64, string) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if m := msPerStart.FindStringSubmatch(sc.Text()); m != nil {
			v, err := strconv.ParseFloat(m[1], 64)
			if err == nil {
				return v, ""
			}
		}
	}
	return 0, "no BenchmarkStartup1M line with ms/start in go test's output"
}
