package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

// clientWindow keeps a window the way docs/CLIENT.md tells a client to: a
// snapshot replaces it; a delta applies only when it follows the state
// held (same snapshot_id, prev_seq the seq held), its changed entries go
// to their new ranks and the others fill the free ranks in their old
// order.
type clientWindow struct {
	snapID  uint64
	seq     uint64
	entries []Entry
}

// apply applies one event and returns the number of entries it carried
// (a snapshot's entries, a delta's changed and removed ones).
func (cw *clientWindow) apply(t testing.TB, ev *Event) int {
	t.Helper()
	var m struct {
		SnapshotID uint64    `json:"snapshot_id"`
		Seq        uint64    `json:"seq"`
		PrevSeq    uint64    `json:"prev_seq"`
		Entries    []Entry   `json:"entries"`
		Changes    []Entry   `json:"changes"`
		Removed    []Removed `json:"removed"`
	}
	if err := json.Unmarshal(ev.JSON, &m); err != nil {
		t.Fatalf("%s event: %v", ev.Type, err)
	}
	switch ev.Type {
	case "snapshot":
		cw.snapID, cw.seq, cw.entries = m.SnapshotID, m.Seq, m.Entries
		return len(m.Entries)
	case "delta":
		if m.SnapshotID != cw.snapID || m.PrevSeq != cw.seq {
			t.Fatalf("a delta that does not follow the state held (snapshot %d seq %d): %s", cw.snapID, cw.seq, ev.JSON)
		}
		gone := map[string]bool{}
		for _, r := range m.Removed {
			gone[r.Player] = true
		}
		for _, c := range m.Changes {
			gone[c.Player] = true
		}
		var kept []Entry
		for _, e := range cw.entries {
			if !gone[e.Player] {
				kept = append(kept, e)
			}
		}
		n := len(kept) + len(m.Changes)
		next := make([]Entry, n)
		placed := make([]bool, n)
		for _, c := range m.Changes {
			if c.Rank < 1 || c.Rank > n || placed[c.Rank-1] {
				t.Fatalf("a delta places %s at rank %d of %d: %s", c.Player, c.Rank, n, ev.JSON)
			}
			c.PrevRank = nil
			next[c.Rank-1], placed[c.Rank-1] = c, true
		}
		for i := range next {
			if !placed[i] {
				next[i], kept = kept[0], kept[1:]
				next[i].Rank = i + 1
			}
		}
		cw.seq, cw.entries = m.Seq, next
		return len(m.Changes) + len(m.Removed)
	}
	return 0
}

// topScore returns the score at rank r (1-based) of a board's top.
func topScore(t *testing.T, src *fakeSource, board string, r int) int64 {
	t.Helper()
	v, err := src.View(context.Background(), board, r)
	if err != nil || len(v.Entries) < r {
		t.Fatalf("read rank %d: %v (%d entries)", r, err, len(v.Entries))
	}
	return v.Entries[r-1].Keys[0]
}

// TestUniformChurnDeliveredWithinRounds is bench/fanout's worst case,
// `--top-moves uniform`, on the hub's fake clock: every round one to three
// newcomers land anywhere in a top 50, so each rewrites on average half
// the window and the window changes by more than its rate (4x its size in
// entries a second) now and then. Every change must reach every
// subscriber within two rounds after the one it was due in (the window's
// debt, at most one event's entries, is paid back within two rounds at
// the default rate), and every window must end equal to the board's top.
// Before, the window switched to one snapshot a second once past its rate,
// and a change waited up to five rounds.
func TestUniformChurnDeliveredWithinRounds(t *testing.T) {
	const (
		players = 2000
		rounds  = 150 // 30 s of 200 ms rounds
		lag     = 2   // a change reaches every subscriber at most lag rounds after the one it was due in
	)
	rnd := newRand(seed(t))
	src := newFakeSource()
	src.put("u", true)
	for i := range players {
		src.score("u", fmt.Sprint("p", i), int64(i)*1_000_000)
	}
	h, clk := newTestHub(t, src, Config{})
	type client struct {
		c     *Conn
		limit int
		cw    clientWindow
	}
	var clients []*client
	for _, limit := range []int{50, 50, 10} {
		c, err := h.Connect("192.0.2.1", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Subscribe(context.Background(), "u", limit, ""); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, &client{c: c, limit: limit})
	}
	read := func() {
		for _, cl := range clients {
			for _, ev := range drain(cl.c) {
				cl.cw.apply(t, ev)
			}
		}
	}
	read()
	type change struct {
		seq   uint64
		round int // the round it was due in
		rank  int // where it landed
	}
	var pending []change
	worst, newcomer := 0, 0
	for round := range rounds {
		for range 1 + rnd.IntN(4) {
			rank := 1 + rnd.IntN(50)
			// Just above the entry at rank: the newcomer takes its place.
			seq := src.score("u", fmt.Sprint("n", newcomer), topScore(t, src, "u", rank)+1)
			newcomer++
			h.Applied("u", "all", seq, nil)
			pending = append(pending, change{seq: seq, round: round, rank: rank})
		}
		clk.Add(200 * time.Millisecond)
		h.Tick()
		read()
		// A change has reached a subscriber once it holds a state at or
		// after the change's seq (a change to rank 11-50 is none of the
		// top 10's business).
		pending = slices.DeleteFunc(pending, func(ch change) bool {
			for _, cl := range clients {
				if ch.rank <= cl.limit && cl.cw.seq < ch.seq {
					if round-ch.round >= lag {
						t.Fatalf("round %d: the change at seq %d (rank %d, due in round %d) has not reached a top %d, which holds seq %d",
							round, ch.seq, ch.rank, ch.round, cl.limit, cl.cw.seq)
					}
					return false
				}
			}
			worst = max(worst, round-ch.round)
			return true
		})
	}
	t.Logf("%d changes in %d rounds, %d rounds deferred; the slowest reached every subscriber %d round(s) after the one it was due in",
		newcomer, rounds, h.Stats().Deferred, worst)
	// Calm: the windows end equal to the board's top (what REST reads).
	clk.Add(time.Second)
	h.Tick()
	read()
	for i, cl := range clients {
		v, err := src.View(context.Background(), "u", cl.limit)
		if err != nil {
			t.Fatal(err)
		}
		for j := range v.Entries {
			v.Entries[j].PrevRank = nil
		}
		if cl.cw.seq != v.Seq || !sameEntries(cl.cw.entries, v.Entries) {
			t.Fatalf("client %d (top %d) ends at seq %d with %v\nthe board at seq %d: %v", i, cl.limit, cl.cw.seq, cl.cw.entries, v.Seq, v.Entries)
		}
	}
}

// TestWindowRateBounded: a board whose whole top 50 is replaced every
// round (far past the window's rate) still costs each subscriber at most
// the window's rate in entries a second, plus one second's burst and one
// event's debt: the guard bounds bandwidth and the events' encoding. And
// a change still waits at most two rounds after the one it was due in
// (before: four, at one snapshot a second).
func TestWindowRateBounded(t *testing.T) {
	const (
		limit   = 50
		rounds  = 100 // 20 s
		seconds = rounds / 5
	)
	src := newFakeSource()
	src.put("hot", true)
	h, clk := newTestHub(t, src, Config{})
	c, err := h.Connect("192.0.2.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Subscribe(context.Background(), "hot", limit, ""); err != nil {
		t.Fatal(err)
	}
	var cw clientWindow
	for _, ev := range drain(c) {
		cw.apply(t, ev)
	}
	sent, events := 0, 0
	var seqs, held []uint64 // the board's seq after each round's changes, the subscriber's after the round
	for round := range rounds {
		var seq uint64
		for i := range limit {
			seq = src.score("hot", fmt.Sprintf("r%d-%d", round, i), int64(1000*(round+1)+i))
		}
		seqs = append(seqs, seq)
		h.Applied("hot", "all", seq, nil)
		clk.Add(200 * time.Millisecond)
		h.Tick()
		for _, ev := range drain(c) {
			sent += cw.apply(t, ev)
			events++
		}
		held = append(held, cw.seq)
	}
	// Past the rate changes wait, but only until the debt of one event
	// (at most a delta of limit changed and limit removed entries, 2.5
	// rounds at the rate) is paid: a change is sent at most two rounds
	// after the one it was due in.
	worst := 0
	for due, seq := range seqs {
		r := due
		for r < len(held) && held[r] < seq {
			r++
		}
		if r-due > 2 {
			t.Fatalf("the change due in round %d (seq %d) reached the subscriber %d rounds later", due, seq, r-due)
		}
		worst = max(worst, r-due)
	}
	rate := 4 * limit
	if bound := rate*seconds + rate + 2*limit; sent > bound {
		t.Fatalf("%d entries in %d events over %d s, more than the bound %d (%d a second)", sent, events, seconds, bound, rate)
	}
	if h.Stats().Deferred == 0 {
		t.Fatal("no round held a change back: the workload never passed the window's rate")
	}
	t.Logf("%d entries in %d events over %d s (rate %d a second), %d rounds deferred; changes waited at most %d round(s)",
		sent, events, seconds, rate, h.Stats().Deferred, worst)
	clk.Add(time.Second)
	h.Tick()
	for _, ev := range drain(c) {
		cw.apply(t, ev)
	}
	v, _ := src.View(context.Background(), "hot", limit)
	if cw.seq != v.Seq || !sameEntries(cw.entries, v.Entries) {
		t.Fatalf("the window ends at seq %d, the board at %d", cw.seq, v.Seq)
	}
}
