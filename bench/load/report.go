package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// report collects the results and prints them.
type report struct {
	cfg          *config
	date         time.Time
	cpu          string
	redisVersion string
	all          []*result
}

func newReport(cfg *config) *report {
	return &report{cfg: cfg, date: time.Now().UTC(), cpu: cpuModel()}
}

// cpuModel returns the processor's name from /proc/cpuinfo, or "".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// header prints what is needed to reproduce and judge the numbers.
func (r *report) header(w io.Writer) {
	fmt.Fprintf(w, "# podium load harness\n")
	fmt.Fprintf(w, "date:     %s\n", r.date.Format(time.RFC3339))
	fmt.Fprintf(w, "go:       %s %s/%s, GOMAXPROCS=%d, NumCPU=%d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())
	if r.cpu != "" {
		fmt.Fprintf(w, "cpu:      %s\n", r.cpu)
	}
	fmt.Fprintf(w, "command:  %s\n", r.cfg.command)
	fmt.Fprintf(w, "flags:    %s\n", strings.Join(r.cfg.flags, " "))
	fmt.Fprintf(w, "note:     this harness, the server and Redis share the machine's %d CPUs; the client's own\n", runtime.NumCPU())
	fmt.Fprintf(w, "          work (building requests, parsing answers, timing) takes CPU from the server, so\n")
	fmt.Fprintf(w, "          these numbers understate a server that has the machine to itself. \"client CPU\"\n")
	fmt.Fprintf(w, "          is how many of the CPUs the harness itself kept busy during a scenario.\n")
	fmt.Fprintln(w)
}

// preload prints how long loading the players took.
func (r *report) preload(w io.Writer, target string, players int, d time.Duration, total int64) {
	fmt.Fprintf(w, "preload %-6s %d players in %s (%.0f scores/s); the board now holds %d entries\n",
		target, players, fmtDur(d), float64(players)/d.Seconds(), total)
	if total < int64(players) {
		fmt.Fprintf(w, "WARNING: fewer entries than players: rank reads will miss\n")
	}
}

// add records one scenario's result.
func (r *report) add(res *result) { r.all = append(r.all, res) }

// find returns the result of scenario on target, or nil.
func (r *report) find(target, scenario string) *result {
	for _, res := range r.all {
		if res.Target == target && res.Scenario == scenario {
			return res
		}
	}
	return nil
}

// results prints the tables, the error samples and, when asked, the JSON
// line. It reports whether any operation failed.
func (r *report) results(w io.Writer) (failed bool) {
	for _, target := range []string{"podium", "redis"} {
		var rows []*result
		for _, res := range r.all {
			if res.Target == target {
				rows = append(rows, res)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintln(w)
		if target == "podium" {
			fmt.Fprintf(w, "podium %s, board %s, %d keep-alive connections, %s per scenario after %s warmup\n",
				r.cfg.URL, r.cfg.Board, r.cfg.Conns, r.cfg.Duration, r.cfg.Warmup)
		} else {
			v := r.redisVersion
			if v == "" {
				v = "version unknown"
			}
			fmt.Fprintf(w, "redis %s (%s), %d goroutines with a connection each, unpipelined, go-redis v9\n",
				r.cfg.Redis, v, r.cfg.Conns)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "scenario\toperation\tops\tops/s\titems/s\tp50\tp99\tmax\tmean\tclient CPU\terrors")
		for _, res := range rows {
			items := "-"
			if res.Scenario == "batch" {
				items = fmt.Sprintf("%.0f", res.itemsPerSec())
			}
			errs := fmt.Sprint(res.Errors)
			if res.ItemErrors > 0 {
				errs += fmt.Sprintf(" (+%d items)", res.ItemErrors)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%.2f cores\t%s\n", res.Scenario, res.Op, res.Ops, res.opsPerSec(), items,
				fmtDur(res.hist.quantile(0.50)), fmtDur(res.hist.quantile(0.99)), fmtDur(res.hist.maximum()), fmtDur(res.hist.mean()),
				res.clientCores(), errs)
			if res.Errors > 0 || res.ItemErrors > 0 {
				failed = true
			}
		}
		tw.Flush()
	}

	r.comparison(w)

	first := true
	for _, res := range r.all {
		if len(res.Samples) == 0 {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nerrors (the first few distinct ones per scenario):")
			first = false
		}
		for _, s := range res.Samples {
			fmt.Fprintf(w, "  %s/%s: %s\n", res.Target, res.Scenario, s)
		}
	}

	if r.cfg.JSON {
		fmt.Fprintln(w)
		b, err := json.Marshal(r.jsonReport())
		if err != nil {
			panic(err) // plain data: cannot fail
		}
		fmt.Fprintln(w, string(b))
	}
	return failed
}

// comparison prints podium next to Redis for every scenario both ran.
func (r *report) comparison(w io.Writer) {
	var pairs [][2]*result
	for _, sc := range r.cfg.Scenarios {
		p, q := r.find("podium", sc), r.find("redis", sc)
		if p != nil && q != nil {
			pairs = append(pairs, [2]*result{p, q})
		}
	}
	if len(pairs) == 0 {
		return
	}
	fmt.Fprintln(w, "\npodium vs Redis (batch compares scores/s, the rest operations/s)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tpodium ops/s\tp50\tp99\t| redis op\tops/s\tp50\tp99\t| podium/redis")
	for _, pr := range pairs {
		p, q := pr[0], pr[1]
		name := p.Scenario
		if name == "batch" {
			name = "batch (scores/s)"
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t| %s\t%.0f\t%s\t%s\t| %s\n", name,
			p.rate(), fmtDur(p.hist.quantile(0.50)), fmtDur(p.hist.quantile(0.99)),
			q.Op, q.rate(), fmtDur(q.hist.quantile(0.50)), fmtDur(q.hist.quantile(0.99)),
			ratio(p.rate(), q.rate()))
	}
	tw.Flush()
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// fmtDur prints a latency with about three significant digits.
func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d < 10*time.Microsecond:
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
}

// jsonResult is one scenario's result in the JSON line; latencies are in
// microseconds.
type jsonResult struct {
	Target       string   `json:"target"`
	Scenario     string   `json:"scenario"`
	Op           string   `json:"op"`
	Ops          uint64   `json:"ops"`
	Items        uint64   `json:"items"`
	Errors       uint64   `json:"errors"`
	ItemErrors   uint64   `json:"item_errors"`
	Seconds      float64  `json:"seconds"`
	OpsPerSec    float64  `json:"ops_per_sec"`
	ItemsPerSec  float64  `json:"items_per_sec"`
	P50us        float64  `json:"p50_us"`
	P99us        float64  `json:"p99_us"`
	MaxUs        float64  `json:"max_us"`
	MeanUs       float64  `json:"mean_us"`
	ClientCores  float64  `json:"client_cores"`
	ErrorSamples []string `json:"error_samples,omitempty"`
}

// jsonReport is the whole run as JSON.
type jsonReport struct {
	Date         string             `json:"date"`
	Go           string             `json:"go"`
	GOMAXPROCS   int                `json:"gomaxprocs"`
	NumCPU       int                `json:"num_cpu"`
	CPU          string             `json:"cpu,omitempty"`
	Command      string             `json:"command"`
	Flags        []string           `json:"flags"`
	RedisVersion string             `json:"redis_version,omitempty"`
	Results      []jsonResult       `json:"results"`
	Ratios       map[string]float64 `json:"podium_over_redis,omitempty"`
}

func (r *report) jsonReport() jsonReport {
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	out := jsonReport{
		Date: r.date.Format(time.RFC3339), Go: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		NumCPU: runtime.NumCPU(), CPU: r.cpu, Command: r.cfg.command, Flags: r.cfg.flags,
		RedisVersion: r.redisVersion, Results: []jsonResult{},
	}
	for _, res := range r.all {
		out.Results = append(out.Results, jsonResult{
			Target: res.Target, Scenario: res.Scenario, Op: res.Op,
			Ops: res.Ops, Items: res.Items, Errors: res.Errors, ItemErrors: res.ItemErrors,
			Seconds: res.Seconds, OpsPerSec: res.opsPerSec(), ItemsPerSec: res.itemsPerSec(),
			P50us: us(res.hist.quantile(0.50)), P99us: us(res.hist.quantile(0.99)),
			MaxUs: us(res.hist.maximum()), MeanUs: us(res.hist.mean()), ClientCores: res.clientCores(),
			ErrorSamples: res.Samples,
		})
	}
	for _, sc := range r.cfg.Scenarios {
		p, q := r.find("podium", sc), r.find("redis", sc)
		if p != nil && q != nil && q.rate() > 0 {
			if out.Ratios == nil {
				out.Ratios = map[string]float64{}
			}
			out.Ratios[sc] = p.rate() / q.rate()
		}
	}
	return out
}
