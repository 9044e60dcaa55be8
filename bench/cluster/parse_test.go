package main

import (
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with spaces and parentheses; utime 250 and stime 50
	// ticks of 10 ms.
	stat := "4242 (podium (x) y) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 8 0 100 0 0"
	got, ok := parseStatCPU(stat)
	if !ok || got != 3*time.Second {
		t.Fatalf("parseStatCPU = %v %v, want 3s", got, ok)
	}
	for _, bad := range []string{"", "4242 podium S 1", "1 (x) S 1 2 3 4 5 6 7 8 9 10 -3 5"} {
		if d, ok := parseStatCPU(bad); ok {
			t.Errorf("parseStatCPU(%q) = %v, want failure", bad, d)
		}
	}
}

func TestParseRedisInfo(t *testing.T) {
	info := "# Stats\r\ntotal_connections_received:12\r\ntotal_commands_processed:98765\r\n\r\n# Commandstats\r\n" +
		"cmdstat_ping:calls=3,usec=4,usec_per_call=1.33,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_publish:calls=4321,usec=9000,usec_per_call=2.08,rejected_calls=0,failed_calls=0\r\n"
	cmds, pub := parseRedisInfo(info)
	if cmds != 98765 || pub != 4321 {
		t.Fatalf("parseRedisInfo = %d, %d", cmds, pub)
	}
	if cmds, pub := parseRedisInfo("# Stats\r\n"); cmds != 0 || pub != 0 {
		t.Fatalf("no counters: %d %d", cmds, pub)
	}
}

func TestRateBetweenSnapshots(t *testing.T) {
	t0 := time.Unix(100, 0)
	a := usage{at: t0, nodeCPU: map[int]time.Duration{1: time.Second}, dbCPU: map[int]time.Duration{7: 0},
		xacts: 1000, scans: 10, pg: true}
	b := usage{at: t0.Add(10 * time.Second), nodeCPU: map[int]time.Duration{1: 6 * time.Second, 2: 5 * time.Second},
		dbCPU: map[int]time.Duration{7: 2 * time.Second}, xacts: 6000, scans: 110, pg: true}
	l := rate(a, b)
	// Node 1 used 5 s and node 2 (started in between) 5 s in 10 s.
	if l.NodeCores != 1 || l.DBCores != 0.2 || l.Xacts != 500 || l.Scans != 10 || !l.PG || l.Redis {
		t.Fatalf("rate = %+v", l)
	}
	if l := rate(b, a); l.Seconds != 0 {
		t.Fatalf("snapshots out of order give no rate: %+v", l)
	}
}

func TestParseGoBench(t *testing.T) {
	out := "goos: linux\nBenchmarkStartup1M-2   \t       3\t 785078183 ns/op\t   1280772 entries/s\t       780.0 ms/start\nPASS\n"
	if ms, why := parseGoBench(out); ms != 780 || why != "" {
		t.Fatalf("parseGoBench = %v %q", ms, why)
	}
	if ms, why := parseGoBench("PASS\n"); ms != 0 || why == "" {
		t.Fatalf("no benchmark line: %v %q", ms, why)
	}
}

func TestPollOnlyFlagPattern(t *testing.T) {
	for help, want := range map[string]string{
		"  -poll-every duration\n    \tpoll\n  -notify\n    \tuse LISTEN/NOTIFY (default true)\n": "notify",
		"  --no-notices\n    \tpoll only\n":         "no-notices",
		"  -poll-every duration\n  -redis string\n": "",
	} {
		m := notifyFlag.FindStringSubmatch(help)
		got := ""
		if m != nil {
			got = m[2]
		}
		if got != want {
			t.Errorf("in %q found %q, want %q", help, got, want)
		}
	}
}

func TestLagPeriodCoversThePollAndCoalescingTicks(t *testing.T) {
	h := &harness{cfg: &config{LagEvery: 50 * time.Millisecond, PollEvery: time.Second}}
	if got := h.lagPeriod(); got != time.Second {
		t.Errorf("poll every 1s: %v", got)
	}
	h.cfg.PollEvery = 100 * time.Millisecond
	if got := h.lagPeriod(); got != 200*time.Millisecond {
		t.Errorf("podium's default coalescing (200ms) is the longest: %v", got)
	}
	h.cfg.LagCoalesce = 10 * time.Millisecond
	if got := h.lagPeriod(); got != 100*time.Millisecond {
		t.Errorf("coalescing 10ms, poll 100ms: %v", got)
	}
	h.cfg.LagEvery = 300 * time.Millisecond
	if got := h.lagPeriod(); got != 300*time.Millisecond {
		t.Errorf("--lag-every longest: %v", got)
	}
}
