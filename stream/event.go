package stream

import (
	"encoding/json"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium"
)

// Entry is one ranked entry in a snapshot or a delta.
type Entry struct {
	Rank     int             `json:"rank"`
	PrevRank *int            `json:"prev_rank,omitempty"` // deltas only; null when new to the window
	Player   string          `json:"player"`
	Name     string          `json:"name"`
	Keys     []int64         `json:"keys"`
	AtText   string          `json:"at"`
	Meta     json.RawMessage `json:"meta"`
	// Results are a best_k board's kept results, best first: at most
	// MaxResults of them (the REST read has them all).
	Results []Result `json:"results,omitempty"`
	// Value is a current points board's decayed points when the entry
	// was read, as the REST read shows them (6 decimals); the keys stay
	// the exact ranking. Empty on other boards.
	Value json.Number `json:"value,omitempty"`
	// RankShared is the standard competition rank (1, 2, 2, 4) on a board
	// with rank_style shared, 0 (left out) on others. Deltas carry it
	// exactly: an entry whose shared rank moved is a change, like one
	// whose rank moved (sameEntry). Last, so that the bytes of the fields
	// before it are unchanged. There is no percentile: it moves for every
	// entry whenever the total does, so clients compute it from rank and
	// the event's total (docs/API.md, "Live updates").
	RankShared int `json:"rank_shared,omitempty"`
}

// Result is one kept result of a best_k board's entry.
type Result struct {
	Keys   []int64 `json:"keys"`
	AtText string  `json:"at"`
}

// MaxResults bounds the kept results a stream entry carries, so that a
// window's events stay small whatever a board's keep (up to 100): a live
// page shows a player's best few, and the REST read has the rest.
const MaxResults = 10

// Removed is an entry that left a window.
type Removed struct {
	Player   string `json:"player"`
	PrevRank int    `json:"prev_rank"`
}

// snapshotMsg is the data of a snapshot event.
type snapshotMsg struct {
	Type       string          `json:"type"`
	Board      string          `json:"board"`
	Title      string          `json:"title"`
	Keys       []podium.KeyDef `json:"keys"`
	Period     string          `json:"period"`
	NextReset  *string         `json:"next_reset"`
	Seq        uint64          `json:"seq"`
	SnapshotID uint64          `json:"snapshot_id"`
	Limit      int             `json:"limit"`
	Total      int             `json:"total"`
	Entries    []Entry         `json:"entries"`
}

// deltaMsg is the data of a delta event: what changed in the window since
// the event with seq prev_seq.
type deltaMsg struct {
	Type       string    `json:"type"`
	Board      string    `json:"board"`
	Period     string    `json:"period"`
	Seq        uint64    `json:"seq"`
	PrevSeq    uint64    `json:"prev_seq"`
	SnapshotID uint64    `json:"snapshot_id"`
	Total      int       `json:"total"`
	Changes    []Entry   `json:"changes"`
	Removed    []Removed `json:"removed"`
}

// periodMsg announces a period rollover; a snapshot of the new period follows.
type periodMsg struct {
	Type      string  `json:"type"`
	Board     string  `json:"board"`
	Period    string  `json:"period"`
	Previous  string  `json:"previous"`
	NextReset *string `json:"next_reset"`
}

// errorMsg ends a subscription (board deleted, bad request, shutdown).
type errorMsg struct {
	Type    string `json:"type"`
	Board   string `json:"board,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Event is one encoded event, shared by every subscriber of a window: it
// is encoded once, whatever the number of subscribers.
type Event struct {
	Type       string // snapshot, delta, period, error
	ID         string // "<snapshot_id>.<seq>" (".period" added for a period event); "error" for errors
	Seq        uint64
	SnapshotID uint64
	JSON       []byte // the data, one line, for WebSocket messages (a slice of SSE)
	SSE        []byte // the full SSE frame
	Changes    int    // entries changed or removed (deltas)

	prev string       // a delta: the id of the event it follows
	size int64        // heap bytes the event holds
	refs atomic.Int32 // holders: a history, a window's cached snapshot, queues
}

// eventOverhead approximates an Event's own bytes besides its frame.
const eventOverhead = 160

// EventID is the id of an event at seq in the chain of snapshot snap.
func EventID(snap, seq uint64) string {
	return strconv.FormatUint(snap, 10) + "." + strconv.FormatUint(seq, 10)
}

func newEvent(typ string, snap, seq uint64, data any) *Event {
	j, err := json.Marshal(data)
	if err != nil {
		panic(err) // the messages are plain structs: cannot fail
	}
	ev := &Event{Type: typ, Seq: seq, SnapshotID: snap}
	switch typ {
	case "snapshot", "delta":
		ev.ID = EventID(snap, seq)
	case "period":
		// Its own id, so that a client that reconnects right after it
		// resumes with the snapshot of the new period that follows it.
		ev.ID = EventID(snap, seq) + ".period"
	default:
		// An error ends the stream; a reconnect with this id finds
		// nothing to resume and starts afresh.
		ev.ID = typ
	}
	ev.SSE, ev.JSON = sseFrame(ev.ID, typ, j)
	ev.size = int64(cap(ev.SSE)) + eventOverhead
	return ev
}

// sseFrame returns the SSE frame of an event and the data within it: the
// WebSocket message is a slice of the frame, not a second copy.
func sseFrame(id, typ string, data []byte) (frame, inner []byte) {
	b := make([]byte, 0, len(data)+len(id)+len(typ)+24)
	if id != "" {
		b = append(b, "id: "...)
		b = append(b, id...)
		b = append(b, '\n')
	}
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: "...)
	start := len(b)
	b = append(b, data...) // json.Marshal output has no newlines
	return append(b, '\n', '\n'), b[start : start+len(data) : start+len(data)]
}

func errorEvent(board, code, msg string) *Event {
	return newEvent("error", 0, 0, errorMsg{Type: "error", Board: board, Code: code, Message: msg})
}

func timeText(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

func optTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timeText(*t)
	return &s
}
