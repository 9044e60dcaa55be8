package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// latHist counts latencies in buckets of 100 µs up to 30 s; larger values
// share one overflow bucket. The maximum is kept exactly.
type latHist struct {
	counts   []uint64
	over     uint64
	n        uint64
	sum, max time.Duration
}

const (
	histStep = 100 * time.Microsecond
	histSpan = 30 * time.Second
)

func (h *latHist) add(d time.Duration) {
	if h.counts == nil {
		h.counts = make([]uint64, histSpan/histStep)
	}
	d = max(d, 0)
	if i := int(d / histStep); i < len(h.counts) {
		h.counts[i]++
	} else {
		h.over++
	}
	h.n++
	h.sum += d
	h.max = max(h.max, d)
}

// quantile returns the q-quantile by the nearest-rank rule, as the upper
// edge of its bucket (never above the maximum).
func (h *latHist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	target := max(uint64(q*float64(h.n)+0.999999), 1)
	var seen uint64
	for i, c := range h.counts {
		if seen += c; seen >= target {
			return min(time.Duration(i+1)*histStep, h.max)
		}
	}
	return h.max
}

func (h *latHist) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// latencies holds the two delivery-latency measures.
type latencies struct {
	// event: for every snapshot or delta that brought a client a seq it
	// had not seen, the time from the commit of the submission with that
	// seq (the newest change the event carries) to the event's arrival.
	// Events whose seq is not a driver submission are skipped.
	event      latHist
	eventEarly uint64 // events read before the driver had the commit answer (counted as 0)
	// visible: for every submission that changed the top limit and every
	// client, the time from its commit to the first event the client
	// applied with a seq at or after it.
	visible      latHist
	visibleEarly uint64
	undelivered  uint64 // (submission, client) pairs with no such event by the end
	affecting    int    // submissions that changed the top limit
}

// measureLatencies computes both measures from the clients' event logs.
func measureLatencies(clients []*client, subs []submission) *latencies {
	l := &latencies{}
	commit := make(map[uint64]time.Duration, len(subs))
	var affecting []submission
	for _, s := range subs {
		commit[s.seq] = s.commit
		if s.affects {
			affecting = append(affecting, s)
		}
	}
	l.affecting = len(affecting)
	for _, c := range clients {
		for _, r := range c.log {
			if t, ok := commit[r.seq]; ok {
				if r.at < t {
					l.eventEarly++
				}
				l.event.add(r.at - t)
			}
		}
		j := 0
		for _, s := range affecting {
			for j < len(c.log) && c.log[j].seq < s.seq {
				j++
			}
			if j == len(c.log) {
				l.undelivered++
				continue
			}
			if c.log[j].at < s.commit {
				l.visibleEarly++
			}
			l.visible.add(c.log[j].at - s.commit)
		}
	}
	return l
}

// procStatus returns a field of /proc/<pid>/status in bytes (VmRSS,
// VmHWM, ...); pid "self" is this process.
func procStatus(pid, field string) (int64, error) {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		return kb << 10, err
	}
	return 0, fmt.Errorf("/proc/%s/status has no %s", pid, field)
}

// procCPU returns the CPU time (user and system) process pid has used,
// from /proc/<pid>/stat, assuming the usual 100 clock ticks a second.
func procCPU(pid string) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields after it are plain.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%s/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%s/stat: unexpected format", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	st, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%s/stat: unexpected format", pid)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// mib formats a byte count in MiB.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// ms formats a duration in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
