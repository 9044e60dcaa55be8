package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func decode(t *testing.T, data string) *eventMsg {
	t.Helper()
	var m eventMsg
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return &m
}

// order returns the window as "player:rank" items.
func order(w *window) string {
	var b strings.Builder
	for i, e := range w.entries {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(e.Player)
		b.WriteByte(':')
		b.WriteString(string(rune('0' + e.Rank)))
	}
	return b.String()
}

// snapshotData is a snapshot as the server encodes it (the field order of
// stream.snapshotMsg and stream.Entry).
const snapshotData = `{"type":"snapshot","board":"b","title":"T","keys":[{"name":"score","order":"desc"}],"period":"all",` +
	`"next_reset":null,"seq":10,"snapshot_id":7,"limit":4,"total":9,"entries":[` +
	`{"rank":1,"player":"a","name":"a","keys":[100],"at":"2026-01-01T00:00:00.000Z","meta":null},` +
	`{"rank":2,"player":"b","name":"b","keys":[90],"at":"2026-01-01T00:00:00.000Z","meta":null},` +
	`{"rank":3,"player":"c","name":"c","keys":[80],"at":"2026-01-01T00:00:00.000Z","meta":null},` +
	`{"rank":4,"player":"d","name":"d","keys":[70],"at":"2026-01-01T00:00:00.000Z","meta":null}]}`

func TestWindowApply(t *testing.T) {
	var w window
	w.applySnapshot(decode(t, snapshotData))
	if got, want := order(&w), "a:1 b:2 c:3 d:4"; got != want {
		t.Fatalf("after the snapshot: %s, want %s", got, want)
	}

	// A new leader: only it and the entry it pushes out are in the delta;
	// a, b and c shift down by themselves.
	err := w.applyDelta(decode(t, `{"type":"delta","seq":11,"prev_seq":10,"snapshot_id":7,"total":10,`+
		`"changes":[{"rank":1,"player":"x","name":"x","keys":[200],"at":"t","meta":null}],"removed":[{"player":"d","prev_rank":4}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := order(&w), "x:1 a:2 b:3 c:4"; got != want {
		t.Fatalf("after a new leader: %s, want %s", got, want)
	}
	if w.total != 10 || w.seq != 11 {
		t.Fatalf("total %d seq %d, want 10 and 11", w.total, w.seq)
	}

	// A removal (b) and an entry from below taking the last rank.
	err = w.applyDelta(decode(t, `{"type":"delta","seq":12,"prev_seq":11,"snapshot_id":7,"total":9,`+
		`"changes":[{"rank":4,"player":"e","name":"e","keys":[75],"at":"t","meta":null}],"removed":[{"player":"b","prev_rank":3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := order(&w), "x:1 a:2 c:3 e:4"; got != want {
		t.Fatalf("after a removal: %s, want %s", got, want)
	}

	// An entry moving down (mode latest): a goes from 2 to 4, the others
	// close up.
	err = w.applyDelta(decode(t, `{"type":"delta","seq":15,"prev_seq":12,"snapshot_id":7,"total":9,`+
		`"changes":[{"rank":4,"prev_rank":2,"player":"a","name":"a","keys":[60],"at":"t","meta":null}],"removed":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := order(&w), "x:1 c:2 e:3 a:4"; got != want {
		t.Fatalf("after a move down: %s, want %s", got, want)
	}
	if w.entries[3].Keys[0] != 60 {
		t.Fatalf("a's keys %v, want [60]", w.entries[3].Keys)
	}

	// Gaps: a skipped seq, another snapshot chain. The state stays.
	for _, d := range []string{
		`{"type":"delta","seq":17,"prev_seq":16,"snapshot_id":7,"changes":[],"removed":[]}`,
		`{"type":"delta","seq":16,"prev_seq":15,"snapshot_id":8,"changes":[],"removed":[]}`,
	} {
		if err := w.applyDelta(decode(t, d)); !errors.Is(err, errGap) {
			t.Fatalf("%s: err %v, want a gap", d, err)
		}
	}
	// Two changes at one rank cannot be applied.
	err = w.applyDelta(decode(t, `{"type":"delta","seq":16,"prev_seq":15,"snapshot_id":7,`+
		`"changes":[{"rank":1,"player":"y","keys":[1]},{"rank":1,"player":"z","keys":[1]}],"removed":[{"player":"a","prev_rank":4},{"player":"e","prev_rank":3}]}`))
	if !errors.Is(err, errInconsistent) {
		t.Fatalf("two changes at rank 1: err %v, want errInconsistent", err)
	}
	if got, want := order(&w), "x:1 c:2 e:3 a:4"; got != want || w.seq != 15 {
		t.Fatalf("after refused deltas: %s seq %d, want %s seq 15", got, w.seq, want)
	}
}

// The snapshot size model must give the size of the server's own frame.
func TestSnapshotFrameSize(t *testing.T) {
	var w window
	w.applySnapshot(decode(t, snapshotData))
	frame := "id: 7.10\nevent: snapshot\ndata: " + snapshotData + "\n\n"
	if got := w.snapshotFrameSize(); got != len(frame) {
		t.Fatalf("model says %d bytes, the frame has %d", got, len(frame))
	}
}
