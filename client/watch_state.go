package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// How a watch applies the stream's events to the state it holds: a
// snapshot replaces it (compared with the state before, after a reconnect
// or a gap), a delta must follow it exactly or the connection starts over.

// message is any event's data.
type message struct {
	Type       string     `json:"type"`
	Board      string     `json:"board"`
	Title      string     `json:"title"`
	Keys       []RankKey  `json:"keys"`
	Period     string     `json:"period"`
	Previous   string     `json:"previous"`
	NextReset  *time.Time `json:"next_reset"`
	Seq        uint64     `json:"seq"`
	PrevSeq    uint64     `json:"prev_seq"`
	SnapshotID uint64     `json:"snapshot_id"`
	Limit      int        `json:"limit"`
	Total      *int       `json:"total"`
	Entries    []Entry    `json:"entries"`
	Changes    []Change   `json:"changes"`
	Removed    []Removed  `json:"removed"`
	Code       string     `json:"code"`
	Message    string     `json:"message"`
}

// event applies one event; an error ends the connection.
func (w *watcher) event(typ string, data []byte) error {
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("podium: a %s event is not JSON: %w", typ, err)
	}
	if m.Type == "" {
		m.Type = typ
	}
	switch m.Type {
	case "snapshot":
		w.snapshot(&m)
	case "delta":
		return w.delta(&m)
	case "period":
		// A snapshot of the new period follows; deltas wait for it.
		if w.state != nil && w.prevPeriod == "" {
			w.prevPeriod = m.Previous
			if w.prevPeriod == "" {
				w.prevPeriod = w.state.Period
			}
		}
		w.following = false
	case "error":
		return &Error{Status: 0, Code: m.Code, Message: m.Message}
	}
	return nil // types added later are ignored
}

func (w *watcher) snapshot(m *message) {
	old := w.state
	st := State{Board: m.Board, Title: m.Title, Keys: m.Keys, Period: m.Period, NextReset: m.NextReset,
		Seq: m.Seq, SnapshotID: m.SnapshotID, Limit: m.Limit, Entries: m.Entries}
	if st.Limit == 0 {
		st.Limit = w.o.Limit
	}
	if m.Total != nil {
		st.Total = *m.Total
	}
	if st.Entries == nil {
		st.Entries = []Entry{}
	}
	u := Update{Type: "snapshot", Initial: old == nil}
	switch {
	case w.prevPeriod != "" || (old != nil && old.Period != st.Period):
		u.PreviousPeriod = w.prevPeriod
		if u.PreviousPeriod == "" {
			u.PreviousPeriod = old.Period
		}
	case old != nil:
		// After a reconnect or a gap: report what changed meanwhile.
		before := make(map[string]*Entry, len(old.Entries))
		for i := range old.Entries {
			before[old.Entries[i].Player] = &old.Entries[i]
		}
		for _, e := range st.Entries {
			o := before[e.Player]
			delete(before, e.Player)
			if o == nil {
				u.Changed = append(u.Changed, Change{Entry: e})
			} else if o.Rank != e.Rank || !sameEntry(o, &e) {
				r := o.Rank
				u.Changed = append(u.Changed, Change{Entry: e, PrevRank: &r})
			}
		}
		for _, e := range old.Entries {
			if before[e.Player] != nil {
				u.Left = append(u.Left, Removed{Player: e.Player, PrevRank: e.Rank})
			}
		}
	}
	w.prevPeriod = ""
	w.commit(st, u)
}

func sameEntry(a, b *Entry) bool {
	if a.Name != b.Name || a.RankShared != b.RankShared || len(a.Keys) != len(b.Keys) || !bytes.Equal(a.Meta, b.Meta) || len(a.Results) != len(b.Results) {
		return false
	}
	for i := range a.Keys {
		if a.Keys[i] != b.Keys[i] {
			return false
		}
	}
	return true
}

func (w *watcher) delta(m *message) error {
	old := w.state
	if !w.following || old == nil {
		return nil // waiting for a snapshot
	}
	if m.SnapshotID != old.SnapshotID || m.PrevSeq != old.Seq {
		return errGap
	}
	// Remove the removed and the changed players, put each change at its
	// rank, and fill the ranks left free with the rest in their old order
	// (their keys did not change, so neither did their order).
	gone := make(map[string]bool, len(m.Removed)+len(m.Changes))
	u := Update{Type: "delta", Left: m.Removed}
	for _, r := range m.Removed {
		gone[r.Player] = true
	}
	for _, c := range m.Changes {
		gone[c.Player] = true
	}
	rest := make([]Entry, 0, len(old.Entries))
	for _, e := range old.Entries {
		if !gone[e.Player] {
			rest = append(rest, e)
		}
	}
	entries := make([]Entry, len(rest)+len(m.Changes))
	set := make([]bool, len(entries))
	for _, c := range m.Changes {
		if c.Rank < 1 || c.Rank > len(entries) || set[c.Rank-1] {
			return errGap // ranks that cannot fit: an event was lost
		}
		entries[c.Rank-1], set[c.Rank-1] = c.Entry, true
		u.Changed = append(u.Changed, c)
	}
	j := 0
	for i := range entries {
		if set[i] {
			continue
		}
		entries[i] = rest[j]
		entries[i].Rank = i + 1
		j++
	}
	if len(entries) > old.Limit {
		return errGap
	}
	st := *old
	st.Seq, st.SnapshotID, st.Entries = m.Seq, m.SnapshotID, entries
	if m.Period != "" {
		st.Period = m.Period
	}
	if m.Total != nil {
		st.Total = *m.Total
	}
	w.commit(st, u)
	return nil
}

// commit makes st the state, live, and hands it to fn.
func (w *watcher) commit(st State, u Update) {
	// Events carry no percentile (it moves for every entry whenever the
	// total does): it follows from each rank and the total.
	for i := range st.Entries {
		st.Entries[i].Percentile = Percentile(st.Entries[i].Rank, st.Total)
	}
	w.state = &st
	w.following = true
	w.lastID = st.EventID()
	w.live()
	w.fn(st, u)
}
