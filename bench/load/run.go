package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// opFunc performs one operation (one HTTP request, one Redis command or
// command pair) and reports how many items were applied (1, or up to the
// batch size), how many the server refused individually, and an error.
// With itemErrs > 0 the error describes the refused items and the
// operation itself counts as done; otherwise an error means it failed.
type opFunc func() (items, itemErrs int, err error)

// answerError is a failure the server answered with: a non-2xx status, a
// Redis error reply, a missing member. The connection is fine, so the
// worker goes on at once; any other error (refused, reset, timed out)
// makes the worker pause briefly so that a dead server is not spun on.
type answerError struct{ msg string }

func (e *answerError) Error() string { return e.msg }

// maxErrorSamples is how many distinct error messages a scenario keeps.
const maxErrorSamples = 5

// result is what one scenario measured on one target.
type result struct {
	Target     string // "podium" or "redis"
	Scenario   string // single, batch, top, rank
	Op         string // what one operation is, e.g. "ZADD GT+ZREVRANK"
	Ops        uint64 // successful operations in the measured window
	Items      uint64 // items those operations carried (batch: scores)
	Errors     uint64 // failed operations in the measured window
	ItemErrors uint64 // items refused inside successful batch operations
	Seconds    float64
	CPU        float64  // the harness's own CPU seconds in the window
	Samples    []string // the first few distinct error messages
	hist       histogram
}

// opsPerSec is the rate of successful operations.
func (r *result) opsPerSec() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Seconds
}

// itemsPerSec is the rate of successfully applied items.
func (r *result) itemsPerSec() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Items) / r.Seconds
}

// clientCores is how many CPUs the harness itself kept busy on average.
func (r *result) clientCores() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return r.CPU / r.Seconds
}

// rate is the figure scenarios are compared by: items/s for batch work,
// operations/s otherwise.
func (r *result) rate() float64 {
	if r.Scenario == "batch" {
		return r.itemsPerSec()
	}
	return r.opsPerSec()
}

// errorLog keeps the first few distinct error messages of a scenario.
type errorLog struct {
	mu      sync.Mutex
	samples []string
}

func (l *errorLog) add(phase string, err error) {
	msg := err.Error()
	if phase != "" {
		msg = "[" + phase + "] " + msg
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.samples) >= maxErrorSamples {
		return
	}
	for _, s := range l.samples {
		if s == msg {
			return
		}
	}
	l.samples = append(l.samples, msg)
}

// Phases of a scenario run, read by every worker before each operation.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// runScenario runs one goroutine per op until warmup+dur has passed (or
// ctx is cancelled) and returns the merged measurements. Only operations
// that start inside the measured window are counted; the window's length
// is measured, not assumed.
func runScenario(ctx context.Context, target, scenario, opName string, ops []opFunc, warmup, dur time.Duration) *result {
	res := &result{Target: target, Scenario: scenario, Op: opName}
	var (
		phase atomic.Int32
		wg    sync.WaitGroup
		mu    sync.Mutex
		errs  errorLog
	)
	for _, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Counted locally and merged once, so that the hot loop
			// shares no cache lines with other workers.
			h := new(histogram)
			var n, items, failed, itemErrs uint64
			for {
				p := phase.Load()
				if p == phaseStop {
					break
				}
				t0 := time.Now()
				ni, ie, err := op()
				d := time.Since(t0)
				if err != nil && ie > 0 {
					if p == phaseMeasure {
						errs.add("", err)
					} else {
						errs.add("warmup", err)
					}
				} else if err != nil {
					if p == phaseMeasure {
						failed++
						errs.add("", err)
					} else {
						errs.add("warmup", err)
					}
					var ae *answerError
					if !errors.As(err, &ae) {
						time.Sleep(10 * time.Millisecond)
					}
					continue
				}
				if p == phaseMeasure {
					h.record(d)
					n++
					items += uint64(ni)
					itemErrs += uint64(ie)
				}
			}
			mu.Lock()
			res.hist.merge(h)
			res.Ops += n
			res.Items += items
			res.Errors += failed
			res.ItemErrors += itemErrs
			mu.Unlock()
		}()
	}
	sleep(ctx, warmup)
	phase.Store(phaseMeasure)
	start, cpu0 := time.Now(), processCPU()
	sleep(ctx, dur)
	phase.Store(phaseStop)
	res.Seconds = time.Since(start).Seconds()
	res.CPU = (processCPU() - cpu0).Seconds()
	wg.Wait()
	res.Samples = errs.samples
	return res
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// playerNames returns the ids p0 .. p(n-1) that every scenario draws from,
// built once so that the hot loops do not format them.
func playerNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("p%d", i)
	}
	return names
}
