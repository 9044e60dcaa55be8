package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// report collects what a run measured and prints it.
type report struct {
	cfg       *config
	date      time.Time
	pid       string
	nofile    uint64
	nofileErr error

	preload     time.Duration
	ramp        time.Duration
	clients     []*client
	interrupted bool

	before, after, final [nCounters]int64 // counter sums at the start and end of the measurement, and at the end
	measured             time.Duration
	cpu, srvCPU          time.Duration // CPU used during the measurement
	serverRSS            [4]int64      // after preload, after ramp-up, after the measurement, peak (-1: unknown)
	selfRSS              int64         // the harness's peak
	drive                *driveResult
	lat                  *latencies

	mismatches, firstMismatches int
	mismatchSample              string
	checks                      int
	samples                     []string
	h2cConns                    int64 // --h2c: connections dialed
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
	fmt.Fprintf(w, "# podium fan-out harness\n")
	fmt.Fprintf(w, "date:     %s\n", r.date.Format(time.RFC3339))
	fmt.Fprintf(w, "go:       %s %s/%s, GOMAXPROCS=%d, NumCPU=%d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())
	if m := cpuModel(); m != "" {
		fmt.Fprintf(w, "cpu:      %s\n", m)
	}
	fmt.Fprintf(w, "command:  %s\n", r.cfg.command)
	fmt.Fprintf(w, "flags:    %s\n", strings.Join(r.cfg.flags, " "))
	if r.nofileErr != nil {
		fmt.Fprintf(w, "nofile:   could not raise RLIMIT_NOFILE: %v\n", r.nofileErr)
	} else {
		fmt.Fprintf(w, "nofile:   RLIMIT_NOFILE raised to %d\n", r.nofile)
		if !r.cfg.H2C && r.nofile < uint64(r.cfg.Clients)+64 {
			fmt.Fprintf(w, "WARNING:  fewer open files allowed than --clients needs\n")
		}
	}
	fmt.Fprintf(w, "note:     the harness and the server share the machine's %d CPUs; its clients read and\n", runtime.NumCPU())
	fmt.Fprintf(w, "          apply every event (each decoded once for all of them), which takes CPU from\n")
	fmt.Fprintf(w, "          the server and adds to the latencies.\n")
	fmt.Fprintln(w)
}

func (r *report) serverMem(field string) int64 {
	if r.cfg.PID == 0 {
		return -1
	}
	v, err := procStatus(r.pid, field)
	if err != nil {
		return -1
	}
	return v
}

func (r *report) serverCPU() time.Duration {
	if r.cfg.PID == 0 {
		return 0
	}
	d, _ := procCPU(r.pid)
	return d
}

// checkWindows compares every connected client's window with top.
func (r *report) checkWindows(top *page, round int) {
	r.mismatches, r.mismatchSample = 0, ""
	for i, c := range r.clients {
		if c == nil || c.gaveUp.Load() {
			continue
		}
		c.mu.Lock()
		diff := c.win.sameAs(top.Entries, top.Total)
		c.mu.Unlock()
		if diff != "" {
			r.mismatches++
			if r.mismatchSample == "" {
				r.mismatchSample = fmt.Sprintf("client %d: %s", i, diff)
			}
		}
	}
	if round == 0 {
		r.firstMismatches = r.mismatches
	}
	r.checks = round + 1
}

// summary holds the headline numbers, printed and sent as JSON.
type summary struct {
	Clients           int              `json:"clients"`
	ClientsLive       int              `json:"clients_live"`
	RampSeconds       float64          `json:"ramp_s"`
	MeasuredSeconds   float64          `json:"measured_s"`
	Submissions       int              `json:"submissions"`
	SubmitErrors      int              `json:"submit_errors"`
	RateAchieved      float64          `json:"rate_achieved"`
	Affecting         int              `json:"submissions_changing_top"`
	SubmitP50ms       float64          `json:"submit_p50_ms"`
	SubmitP99ms       float64          `json:"submit_p99_ms"`
	EventP50ms        float64          `json:"event_latency_p50_ms"`
	EventP99ms        float64          `json:"event_latency_p99_ms"`
	EventMaxms        float64          `json:"event_latency_max_ms"`
	EventN            uint64           `json:"event_latency_n"`
	VisibleP50ms      float64          `json:"visible_latency_p50_ms"`
	VisibleP99ms      float64          `json:"visible_latency_p99_ms"`
	VisibleMaxms      float64          `json:"visible_latency_max_ms"`
	Undelivered       uint64           `json:"undelivered"`
	BytesPerClientMin float64          `json:"bytes_per_client_min"`
	DeltaBytesPCMin   float64          `json:"delta_bytes_per_client_min"`
	SnapBytesPCMin    float64          `json:"snapshot_bytes_per_client_min"`
	AsSnapshotsPCMin  float64          `json:"as_snapshots_bytes_per_client_min"`
	Ratio             float64          `json:"as_snapshots_ratio"`
	DeltaRatio        float64          `json:"per_delta_ratio"`
	Events            map[string]int64 `json:"events"`
	Counters          map[string]int64 `json:"counters_whole_run"`
	Mismatches        int              `json:"window_mismatches"`
	FirstMismatches   int              `json:"window_mismatches_first_check"`
	HarnessCores      float64          `json:"harness_cpu_cores"`
	ServerCores       float64          `json:"server_cpu_cores"`
	ServerRSS         [4]int64         `json:"server_rss_bytes"`
	HarnessPeakRSS    int64            `json:"harness_peak_rss_bytes"`
	Interrupted       bool             `json:"interrupted"`
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (r *report) summarize() *summary {
	d := func(i int) int64 { return r.after[i] - r.before[i] }
	live := 0
	for _, c := range r.clients {
		if c != nil && !c.gaveUp.Load() {
			live++
		}
	}
	var submit latHist
	affecting := 0
	for _, s := range r.drive.subs {
		submit.add(s.commit - s.sent)
		if s.affects {
			affecting++
		}
	}
	perCM := func(b int64) float64 {
		if live == 0 || r.measured <= 0 {
			return 0
		}
		return float64(b) / float64(live) / r.measured.Minutes()
	}
	s := &summary{Clients: r.cfg.Clients, ClientsLive: live, RampSeconds: r.ramp.Seconds(), MeasuredSeconds: r.measured.Seconds(),
		Submissions: len(r.drive.subs) + r.drive.errors, SubmitErrors: r.drive.errors,
		RateAchieved: float64(len(r.drive.subs)) / r.drive.elapsed.Seconds(), Affecting: affecting,
		SubmitP50ms: msf(submit.quantile(0.5)), SubmitP99ms: msf(submit.quantile(0.99)),
		EventP50ms: msf(r.lat.event.quantile(0.5)), EventP99ms: msf(r.lat.event.quantile(0.99)),
		EventMaxms: msf(r.lat.event.max), EventN: r.lat.event.n,
		VisibleP50ms: msf(r.lat.visible.quantile(0.5)), VisibleP99ms: msf(r.lat.visible.quantile(0.99)),
		VisibleMaxms: msf(r.lat.visible.max), Undelivered: r.lat.undelivered,
		BytesPerClientMin: perCM(d(cSSE)), DeltaBytesPCMin: perCM(d(cDeltaBytes)), SnapBytesPCMin: perCM(d(cSnapBytes)),
		AsSnapshotsPCMin: perCM(d(cEquiv)),
		Events: map[string]int64{"snapshot": d(cSnapshots), "delta": d(cDeltas), "period": d(cPeriods),
			"error": d(cErrors), "other": d(cOther), "comment": d(cComments)},
		Counters:   map[string]int64{},
		Mismatches: r.mismatches, FirstMismatches: r.firstMismatches,
		ServerRSS: r.serverRSS, HarnessPeakRSS: r.selfRSS, Interrupted: r.interrupted}
	if b := d(cSSE); b > 0 {
		s.Ratio = float64(d(cEquiv)) / float64(b)
	}
	if b := d(cDeltaBytes); b > 0 {
		s.DeltaRatio = float64(d(cEquiv)-d(cSnapBytes)) / float64(b)
	}
	for i, n := range counterNames {
		s.Counters[n] = r.final[i]
	}
	if r.measured > 0 {
		s.HarnessCores = r.cpu.Seconds() / r.measured.Seconds()
		s.ServerCores = r.srvCPU.Seconds() / r.measured.Seconds()
	}
	return s
}

func rss(b int64) string {
	if b < 0 {
		return "?"
	}
	return mib(b)
}

// print writes the results and reports whether the run failed.
func (r *report) print(w io.Writer) (failed bool) {
	s := r.summarize()
	d := func(i int) int64 { return r.after[i] - r.before[i] }
	fin := func(i int) int64 { return r.final[i] }
	if r.interrupted {
		fmt.Fprintln(w, "interrupted: the results below are partial")
	}
	fmt.Fprintf(w, "setup:     board %s (mode %s, %d entries preloaded in %s), %d clients on /stream?limit=%d, %d with a snapshot after %s of ramp-up\n",
		r.cfg.Board, r.cfg.Mode, r.cfg.Players, r.preload.Round(time.Millisecond), r.cfg.Clients, r.cfg.Limit, s.ClientsLive, r.ramp.Round(time.Millisecond))
	if r.cfg.H2C {
		fmt.Fprintf(w, "transport: h2c, %d streams a connection, %d connections dialed\n", r.cfg.H2CStreams, r.h2cConns)
	}
	fmt.Fprintf(w, "workload:  %d submissions (%d failed) in %s = %.1f/s; %d aimed at the top %d, %d changed it; submit p50 %s, p99 %s\n",
		s.Submissions, s.SubmitErrors, r.drive.elapsed.Round(time.Millisecond), s.RateAchieved,
		countTop(r.drive.subs), r.cfg.Limit, s.Affecting, ms(time.Duration(s.SubmitP50ms*1e6)), ms(time.Duration(s.SubmitP99ms*1e6)))
	fmt.Fprintln(w, "\ndelivery latency (commit answer at the driver -> event read by a client)")
	fmt.Fprintln(w, "  (the commit time is when the submit answer arrived; answers slowed by a busy machine shorten these figures)")
	fmt.Fprintf(w, "  per event   (from its newest change)       p50 %s  p99 %s  max %s  mean %s  n=%d  (%d read before the answer)\n",
		ms(r.lat.event.quantile(0.5)), ms(r.lat.event.quantile(0.99)), ms(r.lat.event.max), ms(r.lat.event.mean()), r.lat.event.n, r.lat.eventEarly)
	fmt.Fprintf(w, "  per change  (each top-%d change x client)  p50 %s  p99 %s  max %s  mean %s  n=%d  (%d not delivered, %d read before the answer)\n",
		r.cfg.Limit, ms(r.lat.visible.quantile(0.5)), ms(r.lat.visible.quantile(0.99)), ms(r.lat.visible.max), ms(r.lat.visible.mean()),
		r.lat.visible.n, r.lat.undelivered, r.lat.visibleEarly)

	fmt.Fprintf(w, "\ntraffic while submitting (%s), per client per minute\n", r.measured.Round(time.Millisecond))
	fmt.Fprintf(w, "  SSE stream %8.0f B  (deltas %.0f B, snapshots %.0f B, the rest pings); on the wire with HTTP chunking %.0f B\n",
		s.BytesPerClientMin, s.DeltaBytesPCMin, s.SnapBytesPCMin, perClientMin(d(cWire), s.ClientsLive, r.measured))
	fmt.Fprintf(w, "  as snapshots %6.0f B  (every applied event sent as a full snapshot of the resulting window)\n", s.AsSnapshotsPCMin)
	fmt.Fprintf(w, "  ratio as-snapshots / SSE stream: %.1fx   (per delta event alone: %.1fx)\n", s.Ratio, s.DeltaRatio)
	if n := d(cDeltas); n > 0 {
		fmt.Fprintf(w, "  average delta event %d B", d(cDeltaBytes)/n)
		if k := d(cSnapshots); k > 0 {
			fmt.Fprintf(w, ", average snapshot event %d B", d(cSnapBytes)/k)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  events: %d snapshot, %d delta, %d period, %d error, %d other; %d pings\n",
		d(cSnapshots), d(cDeltas), d(cPeriods), d(cErrors), d(cOther), d(cComments))

	fmt.Fprintln(w, "\ncorrectness (whole run)")
	fmt.Fprintf(w, "  gaps %d, unappliable deltas %d, resyncs %d, dropped streams %d, connection failures %d, clients given up %d\n",
		fin(cGaps), fin(cBadDeltas), fin(cResyncs), fin(cDrops), fin(cConnFails), s.Clients-s.ClientsLive)
	fmt.Fprintf(w, "  new snapshot chains %d (periodic or server-side resync), deltas ignored awaiting a snapshot %d, error events %d\n",
		fin(cNewChains), fin(cIgnored), fin(cErrors))
	fmt.Fprintf(w, "  seq regressions %d, snapshot size model misses %d (of %d snapshots)\n", fin(cSeqBack), fin(cModelMiss), fin(cSnapshots))
	fmt.Fprintf(w, "  final windows != GET entries?limit=%d: %d of %d (first check %d, %d check(s), %s settle)\n",
		r.cfg.Limit, r.mismatches, s.ClientsLive, r.firstMismatches, r.checks, r.cfg.Settle)
	if r.mismatchSample != "" {
		fmt.Fprintf(w, "  first mismatch: %s\n", r.mismatchSample)
	}

	fmt.Fprintln(w, "\nresources")
	fmt.Fprintf(w, "  harness CPU %.2f cores while submitting, peak RSS %s\n", s.HarnessCores, rss(r.selfRSS))
	if r.cfg.PID != 0 {
		fmt.Fprintf(w, "  server (pid %d) CPU %.2f cores while submitting; RSS %s after preload, %s with the clients, %s at the end, peak since it started %s\n",
			r.cfg.PID, s.ServerCores, rss(r.serverRSS[0]), rss(r.serverRSS[1]), rss(r.serverRSS[2]), rss(r.serverRSS[3]))
	}
	samples := append(append([]string(nil), r.drive.samples...), r.samples...)
	if len(samples) > 0 {
		fmt.Fprintln(w, "\nerrors (the first few distinct ones)")
		for _, e := range samples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	if r.cfg.JSON {
		b, err := json.Marshal(s)
		if err != nil {
			panic(err) // plain data: cannot fail
		}
		fmt.Fprintf(w, "\n%s\n", b)
	}
	return r.interrupted || fin(cGaps) > 0 || fin(cBadDeltas) > 0 || fin(cSeqBack) > 0 || r.mismatches > 0 ||
		s.ClientsLive < s.Clients || r.drive.errors > 0
}

func perClientMin(b int64, clients int, d time.Duration) float64 {
	if clients == 0 || d <= 0 {
		return 0
	}
	return float64(b) / float64(clients) / d.Minutes()
}

func countTop(subs []submission) int {
	n := 0
	for _, s := range subs {
		if s.top {
			n++
		}
	}
	return n
}
