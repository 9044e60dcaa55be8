package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// WatchOptions tune Watch. Zero values are the defaults.
type WatchOptions struct {
	// Limit is how many top entries to follow, 1 to 1000 (default 50).
	Limit int
	// LastEventID resumes from State.EventID of an earlier watch: the
	// server sends what was missed, or a fresh snapshot.
	LastEventID string
	// MinDelay and MaxDelay bound the reconnect backoff (1s and 30s):
	// the wait before attempt n is random in [0, min(MaxDelay, MinDelay×2^n)].
	MinDelay, MaxDelay time.Duration
	// HealthyAfter is how long a connection must stay live for the
	// backoff to start over (5s).
	HealthyAfter time.Duration
	// IdleTimeout drops a connection that sends nothing, not even the
	// server's 15 s pings, for this long (45s).
	IdleTimeout time.Duration
	// OnStatus, if set, is called when the connection's status changes.
	OnStatus func(Status)
}

// Status is the state of a watch's connection.
type Status struct {
	State   string        // connecting, live, reconnecting
	Attempt int           // consecutive failed connections
	Delay   time.Duration // reconnecting: the wait before the next attempt
	Err     error         // reconnecting: why the last connection ended
}

// State is the followed window: the top Limit entries in rank order. Treat
// it as read-only: each update hands over a new Entries slice.
type State struct {
	Board      string
	Title      string
	Keys       []RankKey
	Period     string
	NextReset  *time.Time
	Seq        uint64
	SnapshotID uint64
	Limit      int
	Total      int // entries in the period, not only in the window
	Entries    []Entry
}

// EventID is the id of the last event applied, "<snapshot_id>.<seq>":
// pass it as WatchOptions.LastEventID to resume later.
func (s State) EventID() string {
	return strconv.FormatUint(s.SnapshotID, 10) + "." + strconv.FormatUint(s.Seq, 10)
}

// Change is an entry new to the window or changed, with its rank before
// (nil when it is new to the window).
type Change struct {
	Entry
	PrevRank *int `json:"prev_rank"`
}

// Removed is an entry that left the window.
type Removed struct {
	Player   string `json:"player"`
	PrevRank int    `json:"prev_rank"`
}

// Update says what an event changed.
type Update struct {
	Type    string // snapshot or delta
	Initial bool   // the first snapshot of this watch
	// Changed lists every entry that is new or whose rank, keys, name or
	// meta changed; Left the players that left the window. A snapshot
	// after a reconnect or a gap is compared with the state held before.
	Changed []Change
	Left    []Removed
	// PreviousPeriod is set on the snapshot that follows a period reset:
	// the period that ended (nothing is reported as changed then).
	PreviousPeriod string
}

// fatalCodes end a watch: retrying cannot help (as the JS client).
var fatalCodes = map[string]bool{"board_not_found": true, "not_found": true, "unauthenticated": true,
	"forbidden": true, "invalid_argument": true, "invalid_json": true}

// fatal says whether an answer or an error event ends the watch: a 400,
// 401, 403, 404 or 410, or an error event with a code of fatalCodes.
func fatal(e *Error) bool {
	switch e.Status {
	case 0:
		return fatalCodes[e.Code]
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusGone:
		return true
	}
	return false
}

// errGap ends a connection whose events no longer follow the state held.
var errGap = errors.New("podium: the stream skipped an event")

// maxEvent bounds one SSE event (a snapshot of 1,000 entries with 4 KiB of
// meta each is about 4 MiB).
const maxEvent = 32 << 20

// Watch follows the top entries of board live over Server-Sent Events
// (GET /v1/boards/{board}/stream) and calls fn, in Watch's goroutine,
// after every snapshot and every applied delta. It checks that each delta
// follows the state held (same snapshot_id, prev_seq equal to the last
// seq); when one does not, it drops the connection and starts over from a
// fresh snapshot. After a disconnect it reconnects with backoff and full
// jitter and resumes with Last-Event-ID, getting only what it missed (or
// a snapshot when the server can no longer tell, after a restart say).
//
// Watch runs until ctx ends, which is its normal stop: then it returns
// nil, whether ctx was cancelled or passed its deadline (a program that
// needs to tell the two asks ctx.Err()). It returns an *Error when the
// server says retrying cannot help (board_not_found, unauthenticated,
// forbidden, invalid_argument: at the first request or as an error event).
func (c *Client) Watch(ctx context.Context, board string, o WatchOptions, fn func(State, Update)) error {
	return c.watch(ctx, path("boards", board, "stream"), board, o, fn)
}

// WatchContest follows the public standings of a CTF contest (GET
// /v1/contests/{contest}/stream) as Watch follows a board: each entry is a
// team, Keys is [score].
func (c *Client) WatchContest(ctx context.Context, contest string, o WatchOptions, fn func(State, Update)) error {
	return c.watch(ctx, path("contests", contest, "stream"), contest, o, fn)
}

type watcher struct {
	c     *Client
	url   string
	board string
	o     WatchOptions
	fn    func(State, Update)

	state      *State    // the last state handed to fn
	following  bool      // the next delta may follow state; false while a snapshot is awaited
	lastID     string    // the id to resume from
	prevPeriod string    // set by a period event, reported with the next snapshot
	attempt    int       // consecutive failed connections
	liveSince  time.Time // when the current connection went live
	lastResync time.Time
	status     Status
}

func (c *Client) watch(ctx context.Context, p, board string, o WatchOptions, fn func(State, Update)) error {
	if o.Limit <= 0 {
		o.Limit = 50
	}
	if o.MinDelay <= 0 {
		o.MinDelay = time.Second
	}
	if o.MaxDelay < o.MinDelay {
		o.MaxDelay = max(o.MinDelay, 30*time.Second)
	}
	if o.HealthyAfter <= 0 {
		o.HealthyAfter = 5 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 45 * time.Second
	}
	q := url.Values{}
	q.Set("limit", strconv.Itoa(o.Limit))
	w := &watcher{c: c, url: c.base + p + "?" + q.Encode(), board: board, o: o, fn: fn, lastID: o.LastEventID}
	w.setStatus(Status{State: "connecting"})
	for {
		err := w.connect(ctx)
		if ctx.Err() != nil {
			return nil // the caller's stop, not a failure
		}
		var e *Error
		if errors.As(err, &e) && fatal(e) {
			return e
		}
		if errors.Is(err, errGap) {
			w.following, w.lastID = false, ""
			again := time.Since(w.lastResync) < 2*time.Second
			w.lastResync = time.Now()
			if !again {
				w.setStatus(Status{State: "reconnecting", Attempt: w.attempt, Err: err})
				continue // at once: the server is fine, the chain is not
			}
			// gaps in a row: back off instead of spinning
		}
		if !w.liveSince.IsZero() && time.Since(w.liveSince) >= o.HealthyAfter {
			w.attempt = 0
		}
		w.liveSince = time.Time{}
		ceil := o.MinDelay << min(w.attempt, 30)
		if ceil > o.MaxDelay || ceil <= 0 {
			ceil = o.MaxDelay
		}
		delay := rand.N(ceil + 1)
		if errors.As(err, &e) && e.RetryAfter > delay {
			delay = e.RetryAfter
		}
		w.attempt++
		w.setStatus(Status{State: "reconnecting", Attempt: w.attempt, Delay: delay, Err: err})
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

func (w *watcher) setStatus(s Status) {
	if s.State == w.status.State && s.Attempt == w.status.Attempt && s.Delay == w.status.Delay {
		return
	}
	w.status = s
	if w.o.OnStatus != nil {
		w.o.OnStatus(s)
	}
}

func (w *watcher) live() {
	if w.status.State != "live" {
		w.liveSince = time.Now()
		w.setStatus(Status{State: "live", Attempt: w.attempt})
	}
}

// connect runs one connection until it ends, and says why.
func (w *watcher) connect(ctx context.Context) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, w.url, nil)
	if err != nil {
		return &Error{Code: "invalid_argument", Message: err.Error()}
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	if w.c.token != "" {
		req.Header.Set("Authorization", "Bearer "+w.c.token)
	}
	if w.c.ua != "" {
		req.Header.Set("User-Agent", w.c.ua)
	}
	if w.lastID != "" {
		req.Header.Set("Last-Event-ID", w.lastID)
	}
	// The idle timer cuts a connection that went silent: a half-open TCP
	// connection would otherwise wait forever.
	idle := time.AfterFunc(w.o.IdleTimeout, cancel)
	defer idle.Stop()
	resp, err := w.c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return answerError(resp, b)
	}
	if w.following {
		w.live() // resuming: the server sends only what was missed, maybe nothing
	} else {
		w.setStatus(Status{State: "connecting", Attempt: w.attempt})
	}
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var typ string
	var data bytes.Buffer
	for {
		line, err := readLine(r)
		if err != nil {
			if cctx.Err() != nil && ctx.Err() == nil {
				return fmt.Errorf("podium: the stream was silent for %s", w.o.IdleTimeout)
			}
			return err
		}
		idle.Reset(w.o.IdleTimeout)
		switch {
		case len(line) == 0: // the end of an event
			if data.Len() > 0 {
				if err := w.event(typ, data.Bytes()); err != nil {
					return err
				}
			}
			typ = ""
			data.Reset()
		case line[0] == ':': // a comment (ping)
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "event":
				typ = string(value)
			case "data":
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				if data.Len()+len(value) > maxEvent {
					return fmt.Errorf("podium: a stream event is over %d bytes", maxEvent)
				}
				data.Write(value)
			}
			// id: the watcher resumes from the events it applied, not
			// from the last id seen; retry: it has its own backoff.
		}
	}
}

// readLine reads one line without its end (\n, \r\n), up to maxEvent.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		buf := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			if len(buf) > maxEvent {
				return nil, fmt.Errorf("podium: a stream line is over %d bytes", maxEvent)
			}
			line, err = r.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // the server never ends a stream by itself
		}
		return nil, err
	}
	line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
	return line, nil
}

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
	if a.Name != b.Name || len(a.Keys) != len(b.Keys) || !bytes.Equal(a.Meta, b.Meta) || len(a.Results) != len(b.Results) {
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
	w.state = &st
	w.following = true
	w.lastID = st.EventID()
	w.live()
	w.fn(st, u)
}
