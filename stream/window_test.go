package stream

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func entries(players ...string) []Entry {
	out := make([]Entry, len(players))
	for i, p := range players {
		out[i] = Entry{Rank: i + 1, Player: p, Name: p, Keys: []int64{int64(100 - i)}, AtText: "t"}
	}
	return out
}

// TestDiff: a delta lists every entry that is new or moved or changed,
// with its previous rank, and the players that left; untouched entries
// are not listed.
func TestDiff(t *testing.T) {
	prev := entries("a", "b", "c", "d")
	next := entries("x", "a", "b", "d") // x enters first, c leaves, d stays 4th
	next[3].Keys = []int64{97}          // d keeps its keys
	changes, removed := diff(prev, next)
	var got []string
	for _, c := range changes {
		pr := "new"
		if c.PrevRank != nil {
			pr = fmt.Sprint(*c.PrevRank)
		}
		got = append(got, fmt.Sprintf("%s:%d<-%s", c.Player, c.Rank, pr))
	}
	if want := []string{"x:1<-new", "a:2<-1", "b:3<-2"}; !slices.Equal(got, want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
	if len(removed) != 1 || removed[0] != (Removed{Player: "c", PrevRank: 3}) {
		t.Fatalf("removed %v", removed)
	}
	// A rename alone is a change too.
	renamed := entries("a", "b", "c", "d")
	renamed[2].Name = "Cee"
	changes, removed = diff(prev, renamed)
	if len(changes) != 1 || changes[0].Player != "c" || len(removed) != 0 {
		t.Fatalf("rename: %v %v", changes, removed)
	}
}

// TestHistoryIsBounded: a window keeps its last History events for resume
// and says when an id is older than that.
func TestHistoryIsBounded(t *testing.T) {
	h := &Hub{cfg: Config{History: 3, Now: time.Now}}
	w := newWindow(h, windowKey{"b", 10}, View{Seq: 1})
	var ids []string
	for seq := uint64(2); seq <= 6; seq++ {
		ev := newEvent("delta", w.snapID, seq, deltaMsg{Type: "delta", Seq: seq})
		w.view.Seq = seq
		w.broadcastLocked(ev)
		ids = append(ids, ev.ID)
	}
	if len(w.history) != 3 {
		t.Fatalf("history holds %d events, want 3", len(w.history))
	}
	if evs, ok := w.sinceLocked(ids[2]); !ok || len(evs) != 2 || evs[0].ID != ids[3] {
		t.Fatalf("since %s: %d events, ok %v", ids[2], len(evs), ok)
	}
	if _, ok := w.sinceLocked(ids[0]); ok {
		t.Fatal("an id older than the history was resumed")
	}
	if evs, ok := w.sinceLocked(ids[4]); !ok || len(evs) != 0 {
		t.Fatalf("the latest id should resume with nothing: %d %v", len(evs), ok)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("event id %s repeats", id)
		}
		seen[id] = true
	}
}
