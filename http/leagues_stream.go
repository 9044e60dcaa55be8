package http

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/league"
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
	ctx := r.Context()
	// The caps first: a refused client costs no read of the store.
	conn, err := s.connect(r, w, key)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Watch before the first read: a change between them wakes the loop.
	wake, stop := s.hub.Watch(bi.ID)
	defer stop()
	c, st, err := s.cohortRead(ctx, bi.ID, player, nil)
	if err != nil {
		return err
	}
	var held int64 // bytes of last reserved in the hub's budget
	defer func() { conn.Release(held) }()
	hold := func(b []byte) bool {
		n := int64(cap(b)) + cohortSnapshotOverhead
		if n > held && !conn.Reserve(n-held) {
			return false
		}
		if n < held {
			conn.Release(held - n)
		}
		held = n
		return true
	}
	last := appendCohortSnapshot(nil, player, &c)
	if !hold(last) {
		err := podium.Errorf(podium.ECodeRateLimited, "the live streams of this address hold their share of the memory budget; close some")
		retryAfter(w, err)
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	write := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(s.streamCfg.StallTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	snapshot := func(data []byte) bool {
		return write(append(append([]byte("event: snapshot\ndata: "), data...), '\n', '\n'))
	}
	if !write([]byte("retry: "+strconv.Itoa(int(s.streamCfg.Retry/time.Millisecond))+"\n\n")) || !snapshot(last) {
		return nil
	}
	every := s.hub.Config().Coalesce
	ping := time.NewTicker(s.streamCfg.Heartbeat)
	defer ping.Stop()
	done := ctx.Done()
	var next time.Time // the earliest time of the next read
	for {
		select {
		case <-done:
			return nil
		case <-conn.Closed():
			if err := conn.Err(); err != nil {
				write(sseError(bi.ID, err))
			} else {
				write([]byte("retry: 1000\n: server restarting\n\n"))
			}
			return nil
		case <-ping.C:
			// A session or key that expired, with no change to wake
			// the stream, is found here (a revoked key ends it at once).
			if _, _, err := s.readableBoard(r, bi.ID); err != nil {
				write(sseError(bi.ID, err))
				return nil
			}
			if !write([]byte(": ping\n\n")) {
				return nil
			}
			continue
		case <-wake:
		}
		// Coalesce: what changes until the next read goes out with it.
		if d := time.Until(next); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-done:
				t.Stop()
				return nil
			case <-t.C:
			}
		}
		next = time.Now().Add(every)
		select { // the changes this read covers
		case <-wake:
		default:
		}
		// The board may have been deleted, made private or stopped being
		// a league, and the key revoked: the read rule is checked again.
		if _, _, err := s.readableBoard(r, bi.ID); err != nil {
			write(sseError(bi.ID, err))
			return nil
		}
		nc, nst, err := s.cohortRead(ctx, bi.ID, player, &st)
		if err != nil {
			if podium.ErrorCode(err) == podium.ECodeUnavailable {
				// The store failed: keep what was sent, try again at the
				// next change.
				continue
			}
			write(sseError(bi.ID, err))
			return nil
		}
		b := appendCohortSnapshot(nil, player, &nc)
		if bytes.Equal(b, last) {
			continue
		}
		if !hold(b) {
			write(sseError(bi.ID, podium.Errorf(podium.ECodeRateLimited, "the live streams of this address hold their share of the memory budget")))
			return nil
		}
		st, last = nst, b
		if !snapshot(last) {
			return nil
		}
	}
}
