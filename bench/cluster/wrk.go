package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// wrapperLua runs one of bench/wrk's scripts (named by CLUSTER_SCRIPT,
// none for a plain GET of the URL) and, at the end, prints wrk's summary
// and its whole latency histogram on lines that start with "cluster-", so
// that the histograms of several wrk processes can be merged.
//
// latency(i) is wrk's accessor for the i-th distinct recorded value and
// its count; the values are wrk's own, after its correction for
// coordinated omission, so the merged percentiles are those wrk would
// print.
const wrapperLua = `local inner = os.getenv("CLUSTER_SCRIPT")
if inner ~= nil and inner ~= "" then dofile(inner) end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("cluster-summary %d %d %d %d %d %d %d\n", summary.requests, summary.duration,
    e.connect, e.read, e.write, e.status, e.timeout))
  for i = 1, #latency do
    local v, c = latency(i)
    io.write(string.format("cluster-lat %d %d\n", v, c))
  end
end
`

// wrkJob is one wrk process: one node, one script.
type wrkJob struct {
	URL     string
	Script  string // path of a bench/wrk script, "" for a plain GET of URL
	Threads int
	Conns   int
	Env     []string // BOARD=..., PLAYERS=...
}

// wrkResult is what one or several merged wrk processes measured.
type wrkResult struct {
	Requests uint64  // answers received, any status
	Non2xx   uint64  // of which not 2xx
	SockErrs uint64  // connect, read, write errors and timeouts
	Rate     float64 // 2xx answers per second, summed over processes
	Hist     *hist
}

// ok returns the 2xx answers.
func (r *wrkResult) ok() uint64 { return r.Requests - min(r.Non2xx, r.Requests) }

// parseWrk reads the lines the wrapper prints (wrk's own report around
// them is ignored).
func parseWrk(rd io.Reader) (*wrkResult, error) {
	res := &wrkResult{Hist: newHist()}
	var seen bool
	var durUS int64
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "cluster-summary":
			if len(f) != 8 {
				return nil, fmt.Errorf("wrk: bad summary line %q", sc.Text())
			}
			var v [7]int64
			for i := range v {
				n, err := strconv.ParseInt(f[i+1], 10, 64)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("wrk: bad summary line %q", sc.Text())
				}
				v[i] = n
			}
			seen = true
			res.Requests, durUS = uint64(v[0]), v[1]
			res.Non2xx = uint64(v[5])
			res.SockErrs = uint64(v[2] + v[3] + v[4] + v[6])
		case "cluster-lat":
			if len(f) != 3 {
				return nil, fmt.Errorf("wrk: bad latency line %q", sc.Text())
			}
			us, err1 := strconv.ParseInt(f[1], 10, 64)
			c, err2 := strconv.ParseUint(f[2], 10, 64)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("wrk: bad latency line %q", sc.Text())
			}
			res.Hist.add(us, c)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !seen {
		return nil, fmt.Errorf("wrk printed no summary (is the wrapper script in use?)")
	}
	if durUS > 0 {
		res.Rate = float64(res.ok()) / (float64(durUS) / 1e6)
	}
	return res, nil
}

// mergeWrk adds up the results of processes that ran at the same time.
func mergeWrk(rs []*wrkResult) *wrkResult {
	out := &wrkResult{Hist: newHist()}
	for _, r := range rs {
		out.Requests += r.Requests
		out.Non2xx += r.Non2xx
		out.SockErrs += r.SockErrs
		out.Rate += r.Rate
		out.Hist.merge(r.Hist)
	}
	return out
}

// wrkRunner runs wrk processes.
type wrkRunner struct {
	bin     string
	wrapper string // path of wrapperLua, written once
	scripts string // directory of bench/wrk's scripts
	key     string
}

func newWrkRunner(bin, tmp, scripts, key string) (*wrkRunner, error) {
	p := filepath.Join(tmp, "cluster-wrapper.lua")
	if err := os.WriteFile(p, []byte(wrapperLua), 0o600); err != nil {
		return nil, err
	}
	return &wrkRunner{bin: bin, wrapper: p, scripts: scripts, key: key}, nil
}

// run runs the jobs at once for d and returns the merged result.
func (w *wrkRunner) run(ctx context.Context, jobs []wrkJob, d time.Duration) (*wrkResult, error) {
	results := make([]*wrkResult, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = w.runOne(ctx, j, d)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return mergeWrk(results), nil
}

func (w *wrkRunner) runOne(ctx context.Context, j wrkJob, d time.Duration) (*wrkResult, error) {
	secs := max(int(d.Round(time.Second)/time.Second), 1)
	args := []string{"-t" + strconv.Itoa(j.Threads), "-c" + strconv.Itoa(j.Conns), "-d" + strconv.Itoa(secs) + "s",
		"--timeout", "10s", "-s", w.wrapper, j.URL}
	cmd := exec.CommandContext(ctx, w.bin, args...)
	script := ""
	if j.Script != "" {
		script = filepath.Join(w.scripts, j.Script)
	}
	cmd.Env = append(append(os.Environ(), "CLUSTER_SCRIPT="+script, "PODIUM_ADMIN_KEY="+w.key), j.Env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("wrk %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	res, err := parseWrk(strings.NewReader(string(out)))
	if err != nil {
		return nil, fmt.Errorf("wrk %s: %w", strings.Join(args, " "), err)
	}
	return res, nil
}

// spreadConns splits conns connections over n processes as evenly as
// possible (the first ones get one more), at least one each.
func spreadConns(conns, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = conns / n
		if i < conns%n {
			out[i]++
		}
		out[i] = max(out[i], 1)
	}
	return out
}
