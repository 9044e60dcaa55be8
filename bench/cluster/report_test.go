package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func TestFmtDur(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-1, "-"},
		{0, "0µs"},
		{850 * time.Microsecond, "850µs"},
		{1234 * time.Microsecond, "1.23ms"},
		{12340 * time.Microsecond, "12.3ms"},
		{123400 * time.Microsecond, "123ms"},
		{1500 * time.Millisecond, "1.50s"},
		{61 * time.Second, "61.0s"},
		{250 * time.Second, "250s"},
	} {
		if got := fmtDur(tc.d); got != tc.want {
			t.Errorf("fmtDur(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
	if got := durFmt(math.Inf(1)); got != "never" {
		t.Errorf("durFmt(+Inf) = %q", got)
	}
	if got := durFmt(math.NaN()); got != "-" {
		t.Errorf("durFmt(NaN) = %q", got)
	}
}

func TestFmtNum(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{math.NaN(), "-"}, {0, "0"}, {0.35, "0.35"}, {950, "950"}, {2500, "2.5k"},
		{25300, "25k"}, {312_000, "312k"}, {1_250_000, "1.25M"},
	} {
		if got := fmtNum(tc.x); got != tc.want {
			t.Errorf("fmtNum(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}

func TestCell(t *testing.T) {
	if got := cell(summarize([]float64{3, 1, 2}), ratioFmt); got != "2.00x (1.00x-3.00x)" {
		t.Errorf("three runs: %q", got)
	}
	if got := cell(summarize([]float64{2}), ratioFmt); got != "2.00x" {
		t.Errorf("one run: %q", got)
	}
	if got := cell(summarize([]float64{2, 2}), ratioFmt); got != "2.00x" {
		t.Errorf("equal runs: %q", got)
	}
	if got := cell(summarize(nil), ratioFmt); got != "-" {
		t.Errorf("no run: %q", got)
	}
}

// TestThroughputReport checks the table a reader pastes into
// BENCHMARKS.md: every scenario measured appears, with its ratio against
// the reference taken within each run.
func TestThroughputReport(t *testing.T) {
	h := &harness{cfg: &config{Conns: 64, BatchConns: 6, Players: 1000, Duration: time.Second, FixedRate: 500, Runs: 2}}
	res := &tpResults{specs: throughputSpecs(3, false), runs: 2, m: map[string][]*measure{},
		idle: map[string][]*measure{}, fixed: map[string][]*measure{}}
	mk := func(rate float64, pg bool) *measure {
		return &measure{Rate: rate, P50: time.Millisecond, P99: 10 * time.Millisecond,
			Load: load{PG: pg, Xacts: rate / 10, DBCores: 0.5, NodeCores: 1}}
	}
	// Run 2 is twice as slow for everyone: the ratios must not move.
	for run, f := range []float64{1, 0.5} {
		res.put(res.m, tpKey("sqlite x1", "single"), run, mk(20000*f, false))
		res.put(res.m, tpKey("pg x1", "single"), run, mk(10000*f, true))
		res.put(res.m, tpKey("pg x3", "single"), run, mk(5000*f, true))
		res.put(res.m, tpKey("pg x3", "single, own board per node"), run, mk(15000*f, true))
		res.put(res.idle, "pg x3", run, &measure{Load: load{PG: true, Xacts: 15}})
		res.put(res.fixed, "pg x3", run, mk(500, true))
	}
	var out bytes.Buffer
	(&report{h: h}).throughput(&out, res)
	got := out.String()
	for _, want := range [][]string{
		{"single ", "sqlite x1", "15k (10k-20k)", "1.00x"},
		{"single ", "pg x1", "7.5k (5.0k-10k)", "0.50x"}, // the same ratio in both runs
		{"single ", "pg x3", "0.25x"},
		{"single, own board per node", "pg x3", "0.75x"}, // against sqlite's single submits
		{"pg x3", "idle", "15"},
		{"pg x3", "500 submits/s", "500", "0.10"},
	} {
		if !hasLine(got, want...) {
			t.Errorf("report has no line with %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "top100") {
		t.Errorf("a scenario that was not measured is listed:\n%s", got)
	}
}

// hasLine reports whether one line of s contains every part, in order.
func hasLine(s string, parts ...string) bool {
	for _, line := range strings.Split(s, "\n") {
		rest, ok := line, true
		for _, p := range parts {
			i := strings.Index(rest, p)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(p):]
		}
		if ok {
			return true
		}
	}
	return false
}
