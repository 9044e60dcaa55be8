package stream

import (
	"context"
	"encoding/json"
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

// deltas makes n changes on board b, each its own round, and returns the
// ids of the deltas a subscriber of the window of 10 got. Each newcomer
// enters at the bottom, so a delta lists one entry.
func deltas(t *testing.T, h *Hub, src *fakeSource, c *Conn, b string, n int) []string {
	t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		h.Applied(b, "all", src.score(b, fmt.Sprint("n", len(ids), "-", i), int64(-1000-i)), nil)
		h.Tick()
		evs := drain(c)
		if len(evs) != 1 || evs[0].Type != "delta" {
			t.Fatalf("change %d sent:\n%s", i, describe(evs))
		}
		ids = append(ids, evs[0].ID)
	}
	return ids
}

// resume subscribes a new connection from lastID and returns what it got.
func resume(t *testing.T, h *Hub, b, lastID string) []*Event {
	t.Helper()
	c, err := h.Connect("192.0.2.7", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Subscribe(context.Background(), b, 10, lastID); err != nil {
		t.Fatal(err)
	}
	return drain(c)
}

// TestHistoryIsBounded: a window keeps its last History deltas for
// resume; a resume from within them gets exactly the deltas after, one
// from before them a snapshot.
func TestHistoryIsBounded(t *testing.T) {
	src := newFakeSource()
	src.put("b", true)
	h, _ := newTestHub(t, src, Config{History: 3})
	c := subscribed(t, h, nil, "b")
	ids := deltas(t, h, src, c, "b", 5)
	h.mu.Lock()
	w := h.windows[windowKey{board: "b", limit: 10}]
	h.mu.Unlock()
	if len(w.history) != 3 {
		t.Fatalf("history holds %d events, want 3", len(w.history))
	}
	if evs := resume(t, h, "b", ids[2]); len(evs) != 2 || evs[0].ID != ids[3] || evs[1].ID != ids[4] {
		t.Fatalf("resume after %s:\n%s", ids[2], describe(evs))
	}
	if evs := resume(t, h, "b", ids[1]); len(evs) != 3 || evs[0].ID != ids[2] {
		t.Fatalf("resume after %s, the oldest delta kept follows it:\n%s", ids[1], describe(evs))
	}
	if evs := resume(t, h, "b", ids[0]); len(evs) != 1 || evs[0].Type != "snapshot" {
		t.Fatalf("resume from before the history:\n%s", describe(evs))
	}
	if evs := resume(t, h, "b", ids[4]); len(evs) != 0 {
		t.Fatalf("resume from the latest id:\n%s", describe(evs))
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("event id %s repeats", id)
		}
		seen[id] = true
	}
}

// TestHistoryBytesBounded: a window's history is bounded in bytes too,
// and a new snapshot chain forgets the old chain's deltas.
func TestHistoryBytesBounded(t *testing.T) {
	src := newFakeSource()
	src.put("b", true)
	h, clk := newTestHub(t, src, Config{HistoryBytes: 1000, SnapshotEvery: time.Hour})
	c := subscribed(t, h, nil, "b")
	deltas(t, h, src, c, "b", 8)
	st := h.Stats()
	if st.HistoryBytes == 0 || st.HistoryBytes > 1000 {
		t.Fatalf("history holds %d bytes, bound 1000", st.HistoryBytes)
	}
	clk.Add(2 * time.Hour)
	h.Tick() // the safety-net snapshot: a new chain
	if evs := drain(c); len(evs) != 1 || evs[0].Type != "snapshot" {
		t.Fatalf("periodic snapshot:\n%s", describe(evs))
	}
	if st := h.Stats(); st.HistoryBytes != 0 {
		t.Fatalf("a new chain kept %d bytes of the old one's deltas", st.HistoryBytes)
	}
}

// TestWindowsShareOneRead: the windows of one board are flushed from one
// read per round, at the largest limit; each still gets exactly its own
// top.
func TestWindowsShareOneRead(t *testing.T) {
	src := newFakeSource()
	src.put("b", true)
	for i := 0; i < 20; i++ {
		src.score("b", fmt.Sprint("p", i), int64(i))
	}
	h, _ := newTestHub(t, src, Config{})
	conns := map[int]*Conn{}
	for _, l := range []int{1, 3, 10} {
		c, _ := h.Connect("192.0.2.1", nil)
		defer c.Close()
		if _, err := c.Subscribe(context.Background(), "b", l, ""); err != nil {
			t.Fatal(err)
		}
		drain(c)
		conns[l] = c
	}
	src.mu.Lock()
	before := src.reads
	src.mu.Unlock()
	h.Applied("b", "all", src.score("b", "p5", 100), nil) // p5 takes the lead
	h.Tick()
	src.mu.Lock()
	reads := src.reads - before
	src.mu.Unlock()
	if reads != 1 {
		t.Fatalf("one round read the board %d times for three windows", reads)
	}
	for l, c := range conns {
		evs := drain(c)
		if len(evs) != 1 {
			t.Fatalf("window of %d got:\n%s", l, describe(evs))
		}
		var d struct {
			Changes []Entry
			Removed []Removed
		}
		json.Unmarshal(evs[0].JSON, &d)
		if len(d.Changes) != l || d.Changes[0].Player != "p5" || len(d.Removed) != 1 {
			t.Fatalf("window of %d: %s", l, evs[0].JSON)
		}
	}
}

// TestSameContentFormats: a best_k entry whose kept results changed is a
// change even with the same keys; a current points entry whose value
// alone moved (the clock, not the ranking) is not.
func TestSameContentFormats(t *testing.T) {
	a := Entry{Player: "a", Keys: []int64{28, 1 << 30}, AtText: "t", Value: "64.000000",
		Results: []Result{{Keys: []int64{1}, AtText: "t"}}}
	b := a
	b.Value = "63.999999"
	if !sameContent(&a, &b) {
		t.Fatal("a value that decayed with the clock alone counts as a change")
	}
	b.Results = []Result{{Keys: []int64{1}, AtText: "t"}, {Keys: []int64{2}, AtText: "u"}}
	if sameContent(&a, &b) {
		t.Fatal("a new kept result is not a change")
	}
	b.Results = []Result{{Keys: []int64{1}, AtText: "u"}}
	if sameContent(&a, &b) {
		t.Fatal("a kept result with another time is not a change")
	}
}
