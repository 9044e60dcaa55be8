package http

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// Request deadlines, set per request from Handler rather than with
// http.Server's ReadTimeout and WriteTimeout: those are one figure for every
// route and measure the body as a whole, so a body could not be cut for
// making no progress without also cutting a large upload on a slow link,
// and the live streams would survive them only because their handlers
// happen to reset the deadlines.
//
//   - a body must make progress: each read that returns data moves the read
//     deadline to BodyTimeout from then (to within an eighth of it, so that
//     a fast body does not reset a timer on every read). A body that stalls
//     is cut with 408 and the connection closed.
//   - a request must finish within RequestTimeout: the read deadline never
//     passes it, and the answer must be written by then. A body that trickles
//     in a byte at a time still ends there, and so does a client that does
//     not read its answer.
//   - a body must keep a minimum rate (issue 17 item 7): by BodyTimeout after
//     the request started plus one second per BodyMinRate bytes received
//     (the rule of Apache's mod_reqtimeout, body=10,MinRate=1024 with the
//     defaults), to within an eighth of BodyTimeout. A body that trickles a
//     byte every few seconds used to hold its connection for the whole
//     RequestTimeout; it is now cut after about BodyTimeout, while a 1 MiB
//     body may take up to the request timeout at 18 KiB/s or more.
//   - a body that the handler did not read to its end (an error answered
//     before or while reading it: 401, 403, 413, 429) is not read after the
//     answer either: the answer says Connection: close and the connection
//     closes at once (see statusWriter and Handler). net/http would otherwise
//     read up to 256 KiB of it before answering, waiting on the client.
//
// The live streams get no deadline (they bound their own writes), and the
// admin check and reload, which may run long on a large database, only the
// body timeout. net/http clears the read deadline once the body is read,
// the write deadline after each request and both on a hijack, so nothing
// carries over to the next request on a kept-alive connection or to a
// WebSocket. Handlers get no context deadline: a submission waiting for the
// disk is not abandoned half-way.

// codeRequestTimeout answers a body that was too slow (408).
const codeRequestTimeout = "request_timeout"

// routeTiming is how much of the deadlines a route gets.
type routeTiming uint8

const (
	timedFully    routeTiming = iota // body progress and total time
	timedBodyOnly                    // body progress only
	untimed                          // none: live streams
)

// deadliner is what http.ResponseController reaches for; the server's own
// ResponseWriter has it, so no controller needs to be allocated.
type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// bodyTimer wraps a request body and keeps moving its read deadline while
// it makes progress.
type bodyTimer struct {
	io.ReadCloser
	conn    deadliner
	timeout time.Duration
	end     time.Time     // the request's deadline; zero if none
	total   time.Duration // what end allows, for the message
	start   time.Time     // when the request started
	rate    int64         // bytes/s the body must keep after timeout; 0: none
	read    int64         // bytes read so far
	until   time.Time     // the read deadline set last
	eof     bool          // the body was read to its end
}

// errBodyTimeout is the error a timed-out body read returns.
type errBodyTimeout struct{ msg string }

func (e *errBodyTimeout) Error() string { return e.msg }

func (b *bodyTimer) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		if err == io.EOF {
			b.eof = true
			return n, err
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The request's write deadline may have passed too: leave
			// a moment to write the 408 (a small answer that does not
			// wait for the client unless its buffers are full).
			b.conn.SetWriteDeadline(time.Now().Add(time.Second))
			switch {
			case !b.end.IsZero() && !time.Now().Before(b.end):
				return n, &errBodyTimeout{fmt.Sprintf("the request was not complete within %s", roundD(b.total))}
			case b.rate > 0 && !b.rateDeadline().After(b.until):
				return n, &errBodyTimeout{fmt.Sprintf("the request body arrived slower than %d bytes/s (after the first %s)", b.rate, roundD(b.timeout))}
			}
			return n, &errBodyTimeout{fmt.Sprintf("the request body made no progress for %s", roundD(b.timeout))}
		}
		return n, err
	}
	if n > 0 {
		b.read += int64(n)
		now := time.Now()
		if until := b.deadline(now); until.Sub(b.until) >= b.timeout/8 {
			b.until = until
			b.conn.SetReadDeadline(until)
		}
	}
	return n, nil
}

// deadline is the read deadline at now: no progress for timeout, the
// minimum rate, the request's end, whichever comes first.
func (b *bodyTimer) deadline(now time.Time) time.Time {
	until := now.Add(b.timeout)
	if b.rate > 0 {
		until = earliest(until, b.rateDeadline())
	}
	return earliest(until, b.end)
}

// rateDeadline is when the body falls below the minimum rate: timeout
// after the start plus a second per rate bytes read (whole seconds, so
// read/rate cannot overflow).
func (b *bodyTimer) rateDeadline() time.Time {
	return b.start.Add(b.timeout + time.Duration(b.read/b.rate)*time.Second)
}

func earliest(t, end time.Time) time.Time {
	if !end.IsZero() && end.Before(t) {
		return end
	}
	return t
}

func roundD(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// setDeadlines applies the route's deadlines to the request; w is the
// server's own ResponseWriter and sw the wrapper that holds the body timer.
func (s *Server) setDeadlines(w http.ResponseWriter, sw *statusWriter, r *http.Request, t0 time.Time, timing routeTiming) {
	if timing == untimed {
		return
	}
	conn, ok := w.(deadliner)
	if !ok {
		conn = http.NewResponseController(w)
	}
	var end time.Time
	if timing == timedFully {
		end = t0.Add(s.requestTimeout)
		conn.SetWriteDeadline(end)
	}
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	sw.body = bodyTimer{ReadCloser: r.Body, conn: conn, timeout: s.bodyTimeout, end: end, start: t0, total: s.requestTimeout, rate: s.bodyMinRate}
	sw.body.until = sw.body.deadline(t0)
	conn.SetReadDeadline(sw.body.until)
	r.Body = &sw.body
}
