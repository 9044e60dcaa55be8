package client

import (
	"context"
	"errors"
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
