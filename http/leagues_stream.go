package http

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/league"
	"github.com/podiumhq/podium/stream"
)

// A player's live cohort (docs/API.md, "Leagues"; docs/ARCHITECTURE.md,
// "Leagues", Live). A cohort is not a window of the hub: the stream is a
// connection of the boards' hub (its per-address and overall caps, its
// memory budget for the snapshot it holds, the end of a revoked key's
// streams) that watches the league board's changes and, at most once a
// coalescing interval, re-reads the cohort and sends it whole when it
// differs from what it last sent.

// cohortSnapshotOverhead is what a held snapshot costs besides its bytes.
const cohortSnapshotOverhead = 160

// cohortRead is what a cohort stream shows: the player's cohort in the
// current period, or, until they play it, in the last period they were
// placed in since the stream began.
func (s *leagueHandlers) cohortRead(ctx context.Context, board, player string, last *league.Standing) (league.Cohort, league.Standing, error) {
	st, err := s.mod.Standing(ctx, board, player, "")
	if err != nil {
		return league.Cohort{}, st, err
	}
	if !st.Placed {
		if last == nil {
			return league.Cohort{}, st, podium.Errorf(podium.ECodeNotFound, "player %q has not played league %q in period %s", player, board, st.Period)
		}
		st = *last
	}
	c, err := s.mod.Cohort(ctx, board, st.Period, st.Tier, st.Cohort)
	return c, st, err
}

// appendCohortSnapshot is the data of a snapshot event: the cohort read's
// document with its type and the cohort's member count.
func appendCohortSnapshot(b []byte, player string, c *league.Cohort) []byte {
	b = append(b, `{"type":"snapshot","player":`...)
	b = appendString(b, player)
	b = append(b, `,"board":`...)
	b = appendString(b, c.Board)
	b = append(b, `,"period":`...)
	b = appendString(b, c.Period)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(len(c.Entries)), 10)
	b = append(b, ',')
	b = appendCohort(b, c)
	return append(b, '}')
}

// cohortBoard is the read rule of a followed cohort, at subscribe and
// again at each re-read and heartbeat: the board exists, k (nil:
// anonymous) may read it, and it is a league.
func (s *leagueHandlers) cohortBoard(k *podium.APIKey, id string) (engine.BoardInfo, error) {
	bi, err := s.acc.Board(id)
	if err != nil {
		return bi, err
	}
	if !mayRead(k, bi.ID, bi.Public) {
		return bi, podium.BoardNotFound(bi.ID)
	}
	if bi.League == nil {
		return bi, podium.Errorf(podium.ECodeNotFound, "board %q is not a league", bi.ID)
	}
	return bi, nil
}

// cohortSink is where a followed cohort goes: an SSE response, or one
// subscription of a WebSocket (leagues_ws.go).
type cohortSink interface {
	snapshot(b []byte) bool // false: the client is gone
	heartbeat() bool        // the read rule held at a heartbeat; false: gone
	fail(err error)         // err ends the follow
	closed()                // the hub ended the connection (conn.Err says why)
}

// cohortFollow is one followed cohort: the board's watch, the standing
// and snapshot last sent, and the bytes of that snapshot held in the
// connection's memory budget.
type cohortFollow struct {
	conn          *stream.Conn
	board, player string
	key           *podium.APIKey // the principal the read rule is checked for
	wake          <-chan struct{}
	stop          func()
	st            league.Standing
	last          []byte
	held          int64
}

// errCohortMemory refuses a cohort whose snapshot finds no room.
var errCohortMemory = podium.Errorf(podium.ECodeRateLimited, "the live streams of this address hold their share of the memory budget; close some")

// openCohort starts following player's cohort on board (checked by the
// caller with cohortBoard): the watch, the first read and its snapshot
// held in conn's budget (errCohortMemory when there is no room). The
// caller sends f.last, then runs followCohort, then close.
func (s *leagueHandlers) openCohort(ctx context.Context, conn *stream.Conn, key *podium.APIKey, board, player string) (*cohortFollow, error) {
	f := &cohortFollow{conn: conn, board: board, player: player, key: key}
	// Watch before the first read: a change between them wakes the loop.
	f.wake, f.stop = s.hub.Watch(board)
	c, st, err := s.cohortRead(ctx, board, player, nil)
	if err != nil {
		f.close()
		return nil, err
	}
	b := appendCohortSnapshot(nil, player, &c)
	if !f.hold(b) {
		f.close()
		return nil, errCohortMemory
	}
	f.st, f.last = st, b
	return f, nil
}

// hold counts b as the snapshot held instead of the last one; false, with
// the last still counted, when the budget has no room.
func (f *cohortFollow) hold(b []byte) bool {
	n := int64(cap(b)) + cohortSnapshotOverhead
	if n > f.held && !f.conn.Reserve(n-f.held) {
		return false
	}
	if n < f.held {
		f.conn.Release(f.held - n)
	}
	f.held = n
	return true
}

// close stops the watch and gives back the bytes held.
func (f *cohortFollow) close() {
	f.stop()
	f.conn.Release(f.held)
	f.held = 0
}

// followCohort sends f's cohort to sink whenever it changes, at most once
// per coalescing interval, until ctx ends, the client is gone, an error
// ends it (told to sink.fail) or the hub ends the connection
// (sink.closed). SSE and the WebSocket share it, so both apply one rule.
func (s *leagueHandlers) followCohort(ctx context.Context, f *cohortFollow, sink cohortSink) {
	every := s.hub.Config().Coalesce
	ping := time.NewTicker(s.streamCfg.Heartbeat)
	defer ping.Stop()
	done := ctx.Done()
	var next time.Time // the earliest time of the next read
	for {
		select {
		case <-done:
			return
		case <-f.conn.Closed():
			sink.closed()
			return
		case <-ping.C:
			// A board made private or deleted with no change to wake the
			// follow is found here (a revoked key ends the connection).
			if _, err := s.cohortBoard(f.key, f.board); err != nil {
				sink.fail(err)
				return
			}
			if !sink.heartbeat() {
				return
			}
			continue
		case <-f.wake:
		}
		// Coalesce: what changes until the next read goes out with it.
		if d := time.Until(next); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-done:
				t.Stop()
				return
			case <-t.C:
			}
		}
		next = time.Now().Add(every)
		select { // the changes this read covers
		case <-f.wake:
		default:
		}
		// The board may have been deleted, made private or stopped being
		// a league: the read rule is checked again.
		if _, err := s.cohortBoard(f.key, f.board); err != nil {
			sink.fail(err)
			return
		}
		nc, nst, err := s.cohortRead(ctx, f.board, f.player, &f.st)
		if s.rereadErr != nil {
			err = s.rereadErr(err)
		}
		if err != nil {
			if podium.ErrorCode(err) == podium.ECodeUnavailable {
				// The store failed: keep what was sent, try again at the
				// next change.
				continue
			}
			sink.fail(err)
			return
		}
		b := appendCohortSnapshot(nil, f.player, &nc)
		if bytes.Equal(b, f.last) {
			continue
		}
		if !f.hold(b) {
			sink.fail(podium.Errorf(podium.ECodeRateLimited, "the live streams of this address hold their share of the memory budget"))
			return
		}
		f.st, f.last = nst, b
		if !sink.snapshot(b) {
			return
		}
	}
}

// GET /v1/leagues/{board}/players/{player}/cohort/stream: Server-Sent
// Events. A snapshot of the player's cohort, then a new one whenever it
// changes (at most one per coalescing interval); a new period's cohort
// once the player's first score of it places them. An error event ends
// the stream (board deleted, no longer a league or readable, key revoked,
// memory). There are no ids to resume with: a reconnect gets a snapshot.
func (s *leagueHandlers) cohortSSE(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkStreamOrigin(r); err != nil {
		return err
	}
	bi, err := s.leagueBoard(r)
	if err != nil {
		return err
	}
	player, err := pathPlayer(r)
	if err != nil {
		return err
	}
	_, key, err := s.readableBoard(r, bi.ID)
	if err != nil {
		return err
	}
	// The caps first: a refused client costs no read of the store.
	conn, err := s.connect(r, w, key)
	if err != nil {
		return err
	}
	defer conn.Close()
	f, err := s.openCohort(r.Context(), conn, key, bi.ID, player)
	if err != nil {
		retryAfter(w, err)
		return err
	}
	defer f.close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sink := &sseCohort{w: w, rc: http.NewResponseController(w), conn: conn, board: bi.ID, stall: s.streamCfg.StallTimeout}
	if !sink.write([]byte("retry: "+strconv.Itoa(int(s.streamCfg.Retry/time.Millisecond))+"\n\n")) || !sink.snapshot(f.last) {
		return nil
	}
	s.followCohort(r.Context(), f, sink)
	return nil
}

// sseCohort is a cohort followed over Server-Sent Events.
type sseCohort struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	conn  *stream.Conn
	board string
	stall time.Duration
}

func (c *sseCohort) write(b []byte) bool {
	c.rc.SetWriteDeadline(time.Now().Add(c.stall))
	if _, err := c.w.Write(b); err != nil {
		return false
	}
	return c.rc.Flush() == nil
}

func (c *sseCohort) snapshot(data []byte) bool {
	return c.write(append(append([]byte("event: snapshot\ndata: "), data...), '\n', '\n'))
}

func (c *sseCohort) heartbeat() bool { return c.write([]byte(": ping\n\n")) }
func (c *sseCohort) fail(err error)  { c.write(sseError(c.board, err)) }

func (c *sseCohort) closed() {
	if err := c.conn.Err(); err != nil {
		c.write(sseError(c.board, err))
	} else {
		c.write([]byte("retry: 1000\n: server restarting\n\n"))
	}
}
