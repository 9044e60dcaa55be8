package main

import (
	"testing"
	"time"
)

func TestAnalyseTrial(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ok := func(node, endMS int) write { return write{node: node, start: at(endMS - 5), end: at(endMS), ok: true} }
	bad := func(node, endMS int, msg string) write {
		return write{node: node, start: at(endMS - 5), end: at(endMS), status: 503, err: msg}
	}
	// The victim is node 0; the event is at 100 ms.
	ws := []write{
		ok(1, 90), ok(2, 95), ok(0, 98), // before
		bad(0, 150, "connection refused"), // the victim's own failures
		bad(1, 400, "503 lock timeout"),
		ok(2, 700), // the first success on another node: 600 ms after the event
		ok(1, 710),
		bad(2, 1500, "503 again"),
		ok(1, 3000), // after the 1 s window that follows the first success
	}
	tr := analyse(ws, 0, at(100), at(5000))
	if tr.Stall != 600*time.Millisecond {
		t.Errorf("stall %v, want 600ms", tr.Stall)
	}
	if tr.Gap != 605*time.Millisecond { // from 95 ms to 700 ms
		t.Errorf("gap %v, want 605ms", tr.Gap)
	}
	if tr.OtherOK != 2 || tr.OtherErr != 2 || tr.VictimErr != 1 {
		t.Errorf("counts ok %d err %d victim %d, want 2 2 1", tr.OtherOK, tr.OtherErr, tr.VictimErr)
	}
	if len(tr.Samples) != 2 {
		t.Errorf("samples %v", tr.Samples)
	}

	// Nobody wrote again: no stall figure, and the gap runs to the end.
	tr = analyse([]write{ok(1, 90)}, 0, at(100), at(5000))
	if tr.Stall != -1 || tr.Gap != 4910*time.Millisecond {
		t.Errorf("no recovery: stall %v gap %v", tr.Stall, tr.Gap)
	}
}

func TestFirstOK(t *testing.T) {
	t0 := time.Unix(0, 0)
	ws := []write{
		{node: 1, end: t0.Add(3 * time.Second), ok: true},
		{node: 0, end: t0.Add(2 * time.Second), ok: true},
		{node: 2, end: t0.Add(4 * time.Second), ok: false},
		{node: 2, end: t0.Add(2500 * time.Millisecond), ok: true},
	}
	if w := firstOK(ws, 0, t0.Add(time.Second), true); w == nil || w.node != 2 {
		t.Fatalf("first success on another node: %+v", w)
	}
	if w := firstOK(ws, 0, t0.Add(time.Second), false); w == nil || w.node != 0 {
		t.Fatalf("first success on the victim: %+v", w)
	}
	if w := firstOK(ws, 0, t0.Add(3*time.Second), true); w != nil {
		t.Fatalf("nothing after 3 s: %+v", w)
	}
}
