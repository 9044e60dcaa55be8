package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// entry is one ranked entry as the stream sends it.
type entry struct {
	Rank     int             `json:"rank"`
	PrevRank *int            `json:"prev_rank,omitempty"` // deltas only
	Player   string          `json:"player"`
	Name     string          `json:"name"`
	Keys     []int64         `json:"keys"`
	At       string          `json:"at"`
	Meta     json.RawMessage `json:"meta"`
}

// removedEntry is a player that left the window.
type removedEntry struct {
	Player   string `json:"player"`
	PrevRank int    `json:"prev_rank"`
}

// eventMsg is the data of any stream event; which fields are set depends
// on its type (snapshot, delta, period, error).
type eventMsg struct {
	Type       string          `json:"type"`
	Board      string          `json:"board"`
	Title      string          `json:"title"`
	Keys       json.RawMessage `json:"keys"`
	Period     string          `json:"period"`
	NextReset  json.RawMessage `json:"next_reset"`
	Seq        uint64          `json:"seq"`
	PrevSeq    uint64          `json:"prev_seq"`
	SnapshotID uint64          `json:"snapshot_id"`
	Limit      int             `json:"limit"`
	Total      *int            `json:"total"`
	Entries    []entry         `json:"entries"`
	Changes    []entry         `json:"changes"`
	Removed    []removedEntry  `json:"removed"`
	Code       string          `json:"code"`
	Message    string          `json:"message"`
}

// Errors of applyDelta. Both mean the client must drop its state and take
// a fresh snapshot.
var (
	// errGap: the delta does not follow the state held (another
	// snapshot_id, or prev_seq is not the last seq applied).
	errGap = errors.New("gap")
	// errInconsistent: the delta follows by its ids but cannot be applied
	// (a rank out of range or taken twice, a window over its limit).
	errInconsistent = errors.New("inconsistent delta")
)

// window is a client's copy of the top limit entries, kept the way
// docs/CLIENT.md and the JavaScript client keep it.
type window struct {
	live    bool // holds a snapshot chain; deltas apply only then
	snapID  uint64
	seq     uint64
	limit   int
	total   int
	entries []entry // rank order, entries[i].Rank == i+1

	// The rest of the last snapshot, to rebuild one for size comparisons.
	board, title, period string
	keys, nextReset      json.RawMessage
}

// applySnapshot replaces the state with the snapshot m.
func (w *window) applySnapshot(m *eventMsg) {
	w.live = true
	w.snapID, w.seq = m.SnapshotID, m.Seq
	w.limit = m.Limit
	if m.Total != nil {
		w.total = *m.Total
	}
	w.entries = slices.Clone(m.Entries) // m may be shared by other clients
	for i := range w.entries {
		w.entries[i].PrevRank = nil
	}
	w.board, w.title, w.period = m.Board, m.Title, m.Period
	w.keys, w.nextReset = m.Keys, m.NextReset
}

// applyDelta applies the delta m. The changed entries go to their new
// ranks; every other entry keeps its place relative to the others and
// fills the free ranks in its old order. On an error the state is left
// as it was.
func (w *window) applyDelta(m *eventMsg) error {
	if !w.live || m.SnapshotID != w.snapID || m.PrevSeq != w.seq {
		return errGap
	}
	gone := make(map[string]bool, len(m.Removed)+len(m.Changes))
	for _, r := range m.Removed {
		gone[r.Player] = true
	}
	for _, c := range m.Changes {
		gone[c.Player] = true
	}
	n := len(m.Changes)
	for _, e := range w.entries {
		if !gone[e.Player] {
			n++
		}
	}
	if n > w.limit {
		return fmt.Errorf("%w: %d entries in a window of %d", errInconsistent, n, w.limit)
	}
	next := make([]entry, n)
	taken := make([]bool, n)
	for _, c := range m.Changes {
		if c.Rank < 1 || c.Rank > n || taken[c.Rank-1] {
			return fmt.Errorf("%w: %q at rank %d of %d", errInconsistent, c.Player, c.Rank, n)
		}
		c.PrevRank = nil
		next[c.Rank-1] = c
		taken[c.Rank-1] = true
	}
	j := 0
	for _, e := range w.entries {
		if gone[e.Player] {
			continue
		}
		for taken[j] {
			j++
		}
		e.Rank = j + 1
		next[j] = e
		j++
	}
	w.entries = next
	w.seq = m.Seq
	if m.Period != "" {
		w.period = m.Period
	}
	if m.Total != nil {
		w.total = *m.Total
	}
	return nil
}

// snapshotJSON mirrors the server's snapshot event data, field for field
// and in the same order, so that its encoding has the server's size.
type snapshotJSON struct {
	Type       string          `json:"type"`
	Board      string          `json:"board"`
	Title      string          `json:"title"`
	Keys       json.RawMessage `json:"keys"`
	Period     string          `json:"period"`
	NextReset  json.RawMessage `json:"next_reset"`
	Seq        uint64          `json:"seq"`
	SnapshotID uint64          `json:"snapshot_id"`
	Limit      int             `json:"limit"`
	Total      int             `json:"total"`
	Entries    []entry         `json:"entries"`
}

// snapshotFrameSize returns the size of the SSE frame of a snapshot of the
// current state: what the server would have sent had it restated the
// window instead of sending a delta.
func (w *window) snapshotFrameSize() int {
	entries := w.entries
	if entries == nil {
		entries = []entry{}
	}
	data, err := json.Marshal(snapshotJSON{Type: "snapshot", Board: w.board, Title: w.title, Keys: rawOrNull(w.keys),
		Period: w.period, NextReset: rawOrNull(w.nextReset), Seq: w.seq, SnapshotID: w.snapID, Limit: w.limit,
		Total: w.total, Entries: entries})
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	id := strconv.FormatUint(w.snapID, 10) + "." + strconv.FormatUint(w.seq, 10)
	return len("id: ") + len(id) + len("\nevent: snapshot\ndata: ") + len(data) + len("\n\n")
}

func rawOrNull(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("null")
	}
	return r
}

// sameAs compares the window with the entries endpoint's answer and
// returns the first difference, or "" when they agree on rank, player,
// name, keys and time of every entry, and on the total.
func (w *window) sameAs(top []entry, total int) string {
	if !w.live {
		return "no snapshot held"
	}
	if len(w.entries) != len(top) {
		return fmt.Sprintf("%d entries, the board's top has %d", len(w.entries), len(top))
	}
	for i := range top {
		a, b := &w.entries[i], &top[i]
		if a.Rank != b.Rank || a.Player != b.Player || a.Name != b.Name || a.At != b.At || !slices.Equal(a.Keys, b.Keys) {
			return fmt.Sprintf("rank %d: window has %s %v (rank %d), board has %s %v (rank %d)",
				i+1, a.Player, a.Keys, a.Rank, b.Player, b.Keys, b.Rank)
		}
	}
	if w.total != total {
		return fmt.Sprintf("total %d, the board says %d", w.total, total)
	}
	return ""
}
