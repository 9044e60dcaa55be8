package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// report prints the sections of the harness's output.
type report struct {
	h    *harness
	date time.Time
}

func newReport(h *harness) *report { return &report{h: h, date: time.Now().UTC()} }

// header prints what is needed to reproduce and judge the numbers.
func (r *report) header(w io.Writer) {
	cfg := r.h.cfg
	fmt.Fprintf(w, "# podium on several nodes (bench/cluster)\n")
	fmt.Fprintf(w, "date:    %s\n", r.date.Format(time.RFC3339))
	fmt.Fprintf(w, "go:      %s, NumCPU=%d", runtime.Version(), runtime.NumCPU())
	if m := cpuModel(); m != "" {
		fmt.Fprintf(w, ", %s", m)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "command: %s\n", cfg.command)
	fmt.Fprintf(w, "runs:    %d; every figure is the median of the runs with the range in brackets; a ratio\n", cfg.Runs)
	fmt.Fprintf(w, "         is taken within each run (against the reference measured in that run) before\n")
	fmt.Fprintf(w, "         the median is. Every node, wrk, this harness, Redis and PostgreSQL share this\n")
	fmt.Fprintf(w, "         machine's %d CPUs: more nodes add no CPU, they divide the same cores.\n", runtime.NumCPU())
	if r.h.redis != nil {
		fmt.Fprintf(w, "redis:   a redis-server of the harness's own (%s)\n", r.h.redis.addr)
	}
	if r.h.dbNote != "" {
		fmt.Fprintf(w, "note:    %s\n", r.h.dbNote)
	} else {
		fmt.Fprintf(w, "db:      a database of the harness's own on the --db server, a schema per cluster\n")
	}
	fmt.Fprintln(w)
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

// table is a tab-separated table printed with aligned columns.
func table(w io.Writer, header string, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

// fmtDur prints a duration with about three significant digits; a
// negative one (not measured) as "-".
func fmtDur(d time.Duration) string {
	ms := float64(d) / 1e6
	switch {
	case d < 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", ms)
	case d < 100*time.Millisecond:
		return fmt.Sprintf("%.1fms", ms)
	case d < time.Second:
		return fmt.Sprintf("%.0fms", ms)
	case d < 10*time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d < 100*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return fmt.Sprintf("%.0fs", d.Seconds())
	}
}

// fmtNum prints a count or a rate compactly: 950, 25.3k, 312k, 1.25M.
func fmtNum(x float64) string {
	switch {
	case math.IsNaN(x):
		return "-"
	case math.Abs(x) >= 1e6:
		return fmt.Sprintf("%.3gM", x/1e6)
	case math.Abs(x) >= 1e4:
		return fmt.Sprintf("%.0fk", x/1e3)
	case math.Abs(x) >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	case math.Abs(x) >= 10 || x == 0:
		return fmt.Sprintf("%.0f", x)
	default:
		return fmt.Sprintf("%.2g", x)
	}
}

// cell prints a spread with f: "25.3k (24.1k-26.0k)"; one run prints no
// range, no run prints "-".
func cell(s spread, f func(float64) string) string {
	switch {
	case s.N == 0:
		return "-"
	case s.N == 1 || f(s.Lo) == f(s.Hi):
		return f(s.Med)
	default:
		return fmt.Sprintf("%s (%s-%s)", f(s.Med), f(s.Lo), f(s.Hi))
	}
}

// ratioFmt prints a ratio: 0.84x.
func ratioFmt(x float64) string { return fmt.Sprintf("%.2fx", x) }

// durFmt prints seconds as a duration; +Inf (never happened) as "never".
func durFmt(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "never"
	case math.IsNaN(x):
		return "-"
	}
	return fmtDur(time.Duration(x * float64(time.Second)))
}

// coresFmt prints CPU cores.
func coresFmt(x float64) string { return fmt.Sprintf("%.2f", x) }

// durs is summarize over durations.
func durs(ds []time.Duration) spread { return summarize(seconds(ds)) }

// throughput prints the throughput tables and the database load.
func (r *report) throughput(w io.Writer, res *tpResults) {
	if res == nil {
		return
	}
	cfg := r.h.cfg
	ref := res.specs[0].Name
	fmt.Fprintf(w, "## Throughput (wrk; %d connections, batches of 1000 scores on %d; %s warm-up + %s each)\n\n",
		cfg.Conns, cfg.BatchConns, cfg.Warmup, cfg.Duration)
	fmt.Fprintf(w, "Every cluster gets the same client: %d wrk processes of 1 thread, the connections split evenly;\n", cfg.Nodes)
	fmt.Fprintf(w, "process i loads node i (all of them node 1 of a single node); rates added, latency histograms\n")
	fmt.Fprintf(w, "merged. Boards of %d players, preloaded. Rates are\n", cfg.Players)
	fmt.Fprintf(w, "2xx answers/s (batch: scores/s). CPU: cores used by the podium nodes and by the PostgreSQL\n")
	fmt.Fprintf(w, "backends serving them, from /proc.\n\n")
	var rows [][]string
	for _, sc := range tpScenarios {
		refRates := column(res.m[tpKey(ref, "single")], func(m *measure) float64 { return m.Rate })
		if sc.Name == "top100" || sc.Name == "rank" || sc.Name == "batch-1000" {
			refRates = column(res.m[tpKey(ref, sc.Name)], func(m *measure) float64 { return m.Rate })
		}
		for _, sp := range res.specs {
			ms := res.m[tpKey(sp.Name, sc.Name)]
			if ms == nil {
				continue
			}
			rates := column(ms, func(m *measure) float64 { return m.Rate })
			errs := 0.0
			for _, e := range column(ms, func(m *measure) float64 { return float64(m.Non2xx + m.SockErrs) }) {
				if !math.IsNaN(e) {
					errs += e
				}
			}
			rows = append(rows, []string{sc.Name, sp.Name,
				cell(summarize(rates), fmtNum),
				cell(summarize(ratios(rates, refRates)), ratioFmt),
				cell(summarize(column(ms, func(m *measure) float64 { return m.P50.Seconds() })), durFmt),
				cell(summarize(column(ms, func(m *measure) float64 { return m.P99.Seconds() })), durFmt),
				fmtNum(errs),
				cell(summarize(column(ms, func(m *measure) float64 { return m.Load.NodeCores })), coresFmt),
				dbCell(ms, func(m *measure) float64 { return m.Load.DBCores }, coresFmt),
			})
		}
	}
	table(w, "scenario\tcluster\trate/s\tvs "+ref+"\tp50\tp99\terrors\tnode CPU\tdb CPU", rows)
	fmt.Fprintf(w, "\n(\"single, all to n1\" and \"single, own board per node\" are compared with %s's single submits.)\n\n", ref)
	r.dbLoad(w, res)
}

// dbCell prints a database figure, "-" for clusters without a database.
func dbCell(ms []*measure, f func(*measure) float64, p func(float64) string) string {
	xs := column(ms, func(m *measure) float64 {
		if !m.Load.PG {
			return math.NaN()
		}
		return f(m)
	})
	return cell(summarize(xs), p)
}

// dbLoad prints what the database (and Redis) did per cluster: idle, at a
// fixed submit rate, and under the saturating single-submit load.
func (r *report) dbLoad(w io.Writer, res *tpResults) {
	fmt.Fprintf(w, "### Database load (for \"when to add Redis\")\n\n")
	fmt.Fprintf(w, "xact/s: pg_stat_database commits+rollbacks of the harness's database (every statement outside\n")
	fmt.Fprintf(w, "a transaction block is one; the harness's own counter reads add ~0.3/s);\n")
	fmt.Fprintf(w, "scans/s: table scans in the cluster's schema (pg_stat_user_tables); db CPU: cores of the\n")
	fmt.Fprintf(w, "cluster's PostgreSQL backends; notices/s: NOTIFYs on the cluster's channel; publish/s: PUBLISH\n")
	fmt.Fprintf(w, "calls on the harness's redis-server. A backend flushes its counters up to 1 s late (10 s once\n")
	fmt.Fprintf(w, "it is idle), so a window's figures may be off by about a second's work.\n\n")
	var rows [][]string
	per := func(ms []*measure, f func(*measure) float64) spread {
		return summarize(column(ms, func(m *measure) float64 {
			if !m.Load.PG {
				return math.NaN()
			}
			return f(m)
		}))
	}
	redisCell := func(ms []*measure) string {
		return cell(summarize(column(ms, func(m *measure) float64 {
			if !m.Load.Redis {
				return math.NaN()
			}
			return m.Load.RedisPublish
		})), fmtNum)
	}
	for _, sp := range res.specs {
		if sp.SQLite {
			continue
		}
		for _, win := range []struct {
			name string
			ms   []*measure
		}{
			{"idle", res.idle[sp.Name]},
			{fmt.Sprintf("%d submits/s", r.h.cfg.FixedRate), res.fixed[sp.Name]},
			{"single (saturated)", res.m[tpKey(sp.Name, "single")]},
			{"single, all to n1", res.m[tpKey(sp.Name, "single, all to n1")]},
			{"single, own boards", res.m[tpKey(sp.Name, "single, own board per node")]},
		} {
			if win.ms == nil {
				continue
			}
			perWrite := "-"
			if win.name != "idle" {
				perWrite = cell(per(win.ms, func(m *measure) float64 {
					if m.Rate == 0 {
						return math.NaN()
					}
					return m.Load.Xacts / m.Rate
				}), func(x float64) string { return fmt.Sprintf("%.2f", x) })
			}
			rows = append(rows, []string{sp.Name, win.name,
				cell(summarize(column(win.ms, func(m *measure) float64 { return m.Rate })), fmtNum),
				cell(per(win.ms, func(m *measure) float64 { return m.Load.Xacts }), fmtNum), perWrite,
				cell(per(win.ms, func(m *measure) float64 { return m.Load.Scans }), fmtNum),
				cell(per(win.ms, func(m *measure) float64 { return m.Load.DBCores }), coresFmt),
				cell(per(win.ms, func(m *measure) float64 { return m.Load.Notices }), fmtNum),
				redisCell(win.ms)})
		}
	}
	table(w, "cluster\tload\twrites/s\txact/s\txact per write\tscans/s\tdb CPU\tnotices/s\tpublish/s", rows)
	fmt.Fprintln(w)
}

// forward prints the forwarding phase.
func (r *report) forward(w io.Writer, res *fwdResults) {
	if res == nil {
		return
	}
	fmt.Fprintf(w, "## Write forwarding: one reverse-proxy hop (net/http/httputil, its own process) in front of one\n")
	fmt.Fprintf(w, "## PostgreSQL node, against the node directly (wrk submit.lua; ratios against \"direct\" in the same run)\n\n")
	var rows [][]string
	for _, fc := range fwdCases {
		ms := res.m[fc.Name]
		ref := "direct"
		if fc.Conns == 1 {
			ref = "direct, 1 connection"
		}
		rates := column(ms, func(m *measure) float64 { return m.Rate })
		refRates := column(res.m[ref], func(m *measure) float64 { return m.Rate })
		p50 := column(ms, func(m *measure) float64 { return m.P50.Seconds() })
		refP50 := column(res.m[ref], func(m *measure) float64 { return m.P50.Seconds() })
		added := make([]float64, len(p50))
		for i := range p50 {
			added[i] = p50[i] - refP50[i]
		}
		proxy := "-"
		if fc.Proxy {
			proxy = cell(summarize(res.proxyCores[fc.Name]), coresFmt)
		}
		addedCell := "-"
		if fc.Proxy {
			addedCell = cell(summarize(added), durFmt)
		}
		rows = append(rows, []string{fc.Name, cell(summarize(rates), fmtNum), cell(summarize(ratios(rates, refRates)), ratioFmt),
			cell(summarize(p50), durFmt), addedCell,
			cell(summarize(column(ms, func(m *measure) float64 { return m.P99.Seconds() })), durFmt),
			cell(summarize(column(ms, func(m *measure) float64 { return m.Load.NodeCores })), coresFmt), proxy})
	}
	table(w, "case\tsubmits/s\tvs direct\tp50\tp50 added\tp99\tnode CPU\tproxy CPU", rows)
	fmt.Fprintln(w)
}

// lag prints the visibility lag per mode.
func (r *report) lag(w io.Writer, res *lagResults) {
	if res == nil {
		return
	}
	coal := "podium's default 200ms"
	if r.h.cfg.LagCoalesce > 0 {
		coal = r.h.cfg.LagCoalesce.String()
	}
	fmt.Fprintf(w, "## Visibility lag A->B (from A's answer to the first sight on B; %d submissions per mode and run,\n", r.h.cfg.LagSamples)
	fmt.Fprintf(w, "## each a new first place; REST: B's entry polled every %s; SSE: B's stream of the top 10,\n", r.h.cfg.LagPoll)
	fmt.Fprintf(w, "## --stream-coalesce %s; nodes --poll-every %s)\n\n", coal, r.h.cfg.PollEvery)
	var rows [][]string
	var pollingOnly []string
	pct := func(ss []*lagSamples, f func(*lagSamples) []time.Duration, q float64) spread {
		xs := make([]float64, len(ss))
		for i, s := range ss {
			xs[i] = math.NaN()
			if d := f(s); len(d) > 0 {
				xs[i] = quantile(d, q).Seconds()
			}
		}
		return summarize(xs)
	}
	for _, m := range res.modes {
		if m.Note != "" {
			rows = append(rows, []string{m.Name, "skipped: " + m.Note})
			continue
		}
		ss := res.runs[m.Name]
		ab := func(s *lagSamples) []time.Duration { return s.RestAB }
		sab := func(s *lagSamples) []time.Duration { return s.SSEAB }
		if m.Spec.Nodes == 1 {
			ab = func(s *lagSamples) []time.Duration { return s.RestBB }
			sab = func(s *lagSamples) []time.Duration { return s.SSEBB }
		}
		missed := 0
		for _, s := range ss {
			missed += s.Missed
		}
		listen, notices := "-", "-"
		polling := m.Spec.Nodes > 1
		for _, s := range ss {
			polling = polling && s.Listening == 0 && !m.Spec.Redis
		}
		if polling {
			pollingOnly = append(pollingOnly, m.Name)
		}
		if m.Spec.Nodes > 1 {
			ls := make([]float64, len(ss))
			ns := make([]float64, len(ss))
			for i, s := range ss {
				ls[i], ns[i] = float64(s.Listening), s.Notices
			}
			listen = cell(summarize(ls), fmtNum) + " of " + fmt.Sprint(m.Spec.Nodes)
			notices = cell(summarize(ns), func(x float64) string { return fmt.Sprintf("%.1f", x) })
		}
		rows = append(rows, []string{m.Name, listen, notices,
			cell(pct(ss, ab, .5), durFmt), cell(pct(ss, ab, .99), durFmt),
			cell(pct(ss, sab, .5), durFmt), cell(pct(ss, sab, .99), durFmt),
			cell(pct(ss, func(s *lagSamples) []time.Duration { return s.SSEBB }, .5), durFmt),
			cell(pct(ss, func(s *lagSamples) []time.Duration { return s.SSEBB }, .99), durFmt),
			fmt.Sprint(missed)})
	}
	table(w, "mode\tLISTENing\tNOTIFYs per write\tREST p50\tREST p99\tSSE p50\tSSE p99\tSSE same node p50\tSSE same node p99\tmissed", rows)
	fmt.Fprintf(w, "\n(The reference has one node, so its A->B columns are its same-node lag. LISTENing: nodes seen\n")
	fmt.Fprintf(w, "with a database session whose last statement was LISTEN; NOTIFYs per write: notifications on\n")
	fmt.Fprintf(w, "the cluster's channel per submission. \"missed\": not seen within 10 s.)\n")
	for _, name := range pollingOnly {
		fmt.Fprintf(w, "%s: no node LISTENs and there is no Redis: its nodes learn of each other's writes by\n", name)
		fmt.Fprintf(w, "polling alone (--poll-every %s).\n", r.h.cfg.PollEvery)
	}
	fmt.Fprintln(w)
}

// failover prints the failover trials.
func (r *report) failover(w io.Writer, res *failResults) {
	if res == nil {
		return
	}
	fmt.Fprintf(w, "## Failover: %d PostgreSQL nodes, %d writers each on one hot board; the victim is paused\n", res.nodes, r.h.cfg.FailWorkers)
	fmt.Fprintf(w, "## (SIGSTOP) until another node's session is seen waiting on its lock, then killed or left paused\n\n")
	var rows [][]string
	for _, ts := range [][]*trial{res.kills, res.pause} {
		if len(ts) == 0 {
			continue
		}
		f := func(g func(*trial) float64) spread {
			xs := make([]float64, len(ts))
			for i, t := range ts {
				xs[i] = g(t)
			}
			return summarize(xs)
		}
		stall := f(func(t *trial) float64 {
			if t.Stall < 0 {
				return math.Inf(1)
			}
			return t.Stall.Seconds()
		})
		errRate := f(func(t *trial) float64 {
			if t.OtherOK+t.OtherErr == 0 {
				return math.NaN()
			}
			return float64(t.OtherErr) / float64(t.OtherOK+t.OtherErr)
		})
		rows = append(rows, []string{ts[0].Kind,
			cell(stall, durFmt), cell(f(func(t *trial) float64 { return t.Gap.Seconds() }), durFmt),
			cell(errRate, func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }),
			cell(f(func(t *trial) float64 { return float64(t.OtherErr) }), fmtNum),
			cell(f(func(t *trial) float64 { return t.Rejoin.Seconds() }), durFmt),
			cell(f(func(t *trial) float64 { return float64(t.Attempts) }), fmtNum)})
	}
	table(w, "event\tstall\tlongest gap\terror rate\terrors\tvictim back\tpauses to catch", rows)
	fmt.Fprintf(w, "\nstall: from the kill (or from catching the paused holder) to the next successful write on\n")
	fmt.Fprintf(w, "another node; longest gap: between two successful writes on the other nodes around it; error\n")
	fmt.Fprintf(w, "rate: the other nodes' writes that failed, from the event to 1 s after the stall; victim back:\n")
	fmt.Fprintf(w, "restart to ready (kill), or SIGCONT to its next successful write (pause).\n")
	for _, t := range append(append([]*trial{}, res.kills...), res.pause...) {
		for _, s := range t.Samples {
			fmt.Fprintf(w, "  %s, an error on another node: %.200s\n", t.Kind, s)
		}
	}
	fmt.Fprintln(w)
}

// startup prints the start-up phase.
func (r *report) startup(w io.Writer, res *startResults) {
	if res == nil {
		return
	}
	fmt.Fprintf(w, "## Start-up with %s entries (one 2-key board): process start to /readyz ready\n\n", fmtNum(float64(res.entries)))
	var rows [][]string
	ref := res.ready["sqlite x1"]
	for _, name := range []string{"sqlite x1", "pg x1"} {
		ds := res.ready[name]
		if ds == nil {
			continue
		}
		rss := make([]float64, len(res.rss[name]))
		for i, b := range res.rss[name] {
			rss[i] = float64(b) / (1 << 20)
		}
		fill := "-"
		if d := res.fill[name]; d > 0 {
			fill = fmt.Sprintf("%s (%s scores/s)", fmtDur(d), fmtNum(float64(res.entries)/d.Seconds()))
		}
		rows = append(rows, []string{name, cell(durs(ds), durFmt), cell(summarize(ratios(seconds(ds), seconds(ref))), ratioFmt),
			cell(summarize(rss), func(x float64) string { return fmt.Sprintf("%.0f MiB", x) }), fill})
	}
	table(w, "store\tready after\tvs sqlite x1\tRSS\tfilled by batch submits in", rows)
	if res.goBench > 0 {
		fmt.Fprintf(w, "\nengine's BenchmarkStartup1M (SQLite, in-process, no HTTP), same run: %.0f ms/start\n", res.goBench)
	} else {
		fmt.Fprintf(w, "\nengine's BenchmarkStartup1M: %s\n", res.goBenchErr)
	}
	fmt.Fprintln(w)
}
