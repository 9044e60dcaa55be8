// Package closetest checks that a component's Close joins its goroutines:
// once Close returns, none of them may still be running a call (on its
// store, its broker).
//
// A test wraps the calls its component makes in the background with
// Gate.Hold, which holds each call until the gate opens, and closes the
// component with Gate.Close. Close opens the gate once the component's
// Close has returned (a goroutine left behind: the held calls then return
// after it, and are reported) or is waiting in a sync.WaitGroup with every
// other goroutine of the component gone or held (it joins them: they
// return before it does). Goroutine stacks tell the two apart, so the test
// needs no timing.
package closetest

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Gate holds background calls until the component is closing.
type Gate struct {
	release chan struct{}
	once    sync.Once
	armed   atomic.Bool
	closed  atomic.Bool
	held    atomic.Int32 // calls waiting in Hold
	calls   sync.WaitGroup

	// mu guards late.
	mu   sync.Mutex
	late []string
}

// New returns a gate that holds nothing until Arm.
func New() *Gate { return &Gate{release: make(chan struct{})} }

// Arm makes Hold hold calls (after the component's start).
func (g *Gate) Arm() { g.armed.Store(true) }

// Held returns how many calls wait in Hold.
func (g *Gate) Held() int { return int(g.held.Load()) }

// Hold holds a call named what until the gate opens, if armed, and
// returns what the call must run when it returns (defer g.Hold("x")()):
// it notes a call that returns after the component's Close did.
func (g *Gate) Hold(what string) func() {
	if !g.armed.Load() {
		return func() {}
	}
	g.calls.Add(1)
	g.held.Add(1)
	<-g.release
	g.held.Add(-1)
	return func() {
		if g.closed.Load() {
			g.mu.Lock()
			g.late = append(g.late, what)
			g.mu.Unlock()
		}
		g.calls.Done()
	}
}

// Close runs closeFn (the component's Close) once holds calls wait in
// Hold, and returns the calls that returned after closeFn did. pkg names
// the component's package in stacks ("podium/engine."): its goroutines.
func (g *Gate) Close(t *testing.T, holds int, pkg string, closeFn func()) []string {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a failure timeout only
	for g.Held() < holds {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d background calls reached the gate", g.Held(), holds)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() {
		closeFn()
		close(done)
	}()
	for {
		select {
		case <-done:
			g.closed.Store(true)
		default:
		}
		if g.closed.Load() || joining(pkg) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Close neither returned nor waits for its goroutines")
		}
		time.Sleep(time.Millisecond)
	}
	g.once.Do(func() { close(g.release) })
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Close did not return once the held calls were let go")
	}
	g.closed.Store(true)
	g.calls.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.late...)
}

// joining reports whether the goroutine running Close waits in a
// sync.WaitGroup while every other goroutine of pkg waits in Hold.
func joining(pkg string) bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	waiting := false
	for _, gr := range bytes.Split(buf, []byte("\n\n")) {
		s := string(gr)
		switch {
		case strings.Contains(s, "closetest.(*Gate).Close.func"):
			waiting = strings.Contains(s, "sync.(*WaitGroup).Wait(")
		case strings.Contains(s, "closetest.(*Gate).Hold("), strings.Contains(s, "closetest.(*Gate).Close("):
			// held, or the test waiting in Close
		case containsFrame(s, pkg):
			return false
		}
	}
	return waiting
}

// containsFrame reports whether a goroutine's stack runs a function of pkg
// (not only was created by one).
func containsFrame(stack, pkg string) bool {
	for _, line := range strings.Split(stack, "\n") {
		if strings.HasPrefix(line, "created by ") || strings.HasPrefix(line, "\t") {
			continue
		}
		if strings.Contains(line, pkg) {
			return true
		}
	}
	return false
}
