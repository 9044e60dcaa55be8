package http

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/stream"
)

// A player's live cohort over the WebSocket of GET /v1/stream (docs/API.md,
// "Leagues", Live): subscribe_cohort and unsubscribe_cohort beside the
// board and feed ops. Each subscription is a followCohort of its own
// (leagues_stream.go), the loop the SSE stream runs, writing to the
// socket; it takes one of the connection's subscriptions (stream.Conn's
// Claim), so one bound counts boards, feeds and cohorts.

// cohortKey names one cohort subscription of a connection.
type cohortKey struct{ board, player string }

// wsCohort is one running cohort subscription.
type wsCohort struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when its follow has returned
}

// wsCohorts is a WebSocket's cohort subscriptions.
type wsCohorts struct {
	s       *leagueHandlers
	conn    *stream.Conn
	key     *podium.APIKey // the connection's principal
	sendRaw func([]byte) error
	ctx     context.Context // the connection's: ends every follow
	wg      sync.WaitGroup  // the follows and the op in flight

	// mu guards subs and closed: ops run on the reader goroutine, a
	// follow that an error ends removes itself from its own, and closeAll
	// runs on the connection's writer.
	mu     sync.Mutex
	subs   map[cohortKey]*wsCohort
	closed bool // closeAll has begun: no new op
}

func newWSCohorts(ctx context.Context, s *leagueHandlers, conn *stream.Conn, key *podium.APIKey, sendRaw func([]byte) error) *wsCohorts {
	return &wsCohorts{s: s, conn: conn, key: key, sendRaw: sendRaw, ctx: ctx, subs: map[cohortKey]*wsCohort{}}
}

// op runs subscribe_cohort and unsubscribe_cohort.
func (c *wsCohorts) op(ctx context.Context, m *wsMessage, send func(any) error) error {
	// An op in flight is waited for by closeAll, so that nothing it opens
	// outlives the connection (its bytes are given back before Close).
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return podium.Errorf(podium.ECodeUnavailable, "the connection is closing")
	}
	c.wg.Add(1)
	c.mu.Unlock()
	defer c.wg.Done()
	if m.Limit != 0 || m.LastEventID != "" {
		return podium.Errorf(podium.ECodeInvalid, "%s takes board and player: a cohort has no limit and no events to resume", m.Op)
	}
	if !podium.ValidBoardID(m.Board) {
		return podium.Errorf(podium.ECodeInvalid, "board must match [a-z0-9][a-z0-9_.:-]{0,127}")
	}
	if err := podium.ValidPlayerID(m.Player); err != nil {
		return err
	}
	k := cohortKey{m.Board, m.Player}
	reply := func(typ string) error {
		return send(map[string]any{"type": typ, "cohort": true, "board": m.Board, "player": m.Player, "id": m.ID})
	}
	if m.Op == "unsubscribe_cohort" {
		if !c.stop(k) {
			return podium.Errorf(podium.ECodeNotFound, "not subscribed to the cohort of player %q in league %q", m.Player, m.Board)
		}
		return reply("unsubscribed")
	}
	bi, err := c.s.cohortBoard(c.key, m.Board)
	if err != nil {
		return err
	}
	k.board = bi.ID
	c.mu.Lock()
	_, dup := c.subs[k]
	c.mu.Unlock()
	if dup {
		// As a board subscribed twice: one subscription, answered again.
		return reply("subscribed")
	}
	if err := c.conn.Claim(); err != nil {
		return err
	}
	f, err := c.s.openCohort(ctx, c.conn, c.key, bi.ID, m.Player)
	if err != nil {
		c.conn.Unclaim()
		return err
	}
	// The reply and the first snapshot are sent here, on the reader
	// goroutine, so the snapshot follows the reply.
	if err := reply("subscribed"); err != nil {
		f.close()
		c.conn.Unclaim()
		return err
	}
	if err := c.sendRaw(f.last); err != nil {
		f.close()
		c.conn.Unclaim()
		return err
	}
	fctx, cancel := context.WithCancel(c.ctx)
	e := &wsCohort{cancel: cancel, done: make(chan struct{})}
	c.mu.Lock()
	c.subs[k] = e
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(e.done)
		defer f.close()
		c.s.followCohort(fctx, f, &wsCohortSink{c: c, k: k})
		c.remove(k, e)
	}()
	return nil
}

// stop ends the subscription k and waits for its follow to return, so
// that nothing of it is sent after the answer; false if there is none.
func (c *wsCohorts) stop(k cohortKey) bool {
	c.mu.Lock()
	e := c.subs[k]
	delete(c.subs, k)
	c.mu.Unlock()
	if e == nil {
		return false
	}
	e.cancel()
	<-e.done
	c.conn.Unclaim()
	return true
}

// remove forgets e, which its follow ended, unless an unsubscribe did.
func (c *wsCohorts) remove(k cohortKey, e *wsCohort) {
	c.mu.Lock()
	mine := c.subs[k] == e
	if mine {
		delete(c.subs, k)
	}
	c.mu.Unlock()
	if mine {
		c.conn.Unclaim()
	}
}

// closeAll ends every follow and waits for them and for an op in flight
// (before the connection is closed: they give their bytes back to it).
// The caller has cancelled the connection's context first, so that an op
// in flight and any follow it starts return at once.
func (c *wsCohorts) closeAll() {
	c.mu.Lock()
	c.closed = true
	for _, e := range c.subs {
		e.cancel()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// wsCohortSink writes one cohort subscription to the socket.
type wsCohortSink struct {
	c *wsCohorts
	k cohortKey
}

func (w *wsCohortSink) snapshot(b []byte) bool { return w.c.sendRaw(b) == nil }

// heartbeat sends nothing: the connection pings the client itself.
func (w *wsCohortSink) heartbeat() bool { return true }

// fail ends the subscription with an error that names it.
func (w *wsCohortSink) fail(err error) {
	b, _ := json.Marshal(map[string]any{"type": "error", "cohort": true, "board": w.k.board, "player": w.k.player,
		"code": podium.ErrorCode(err), "message": podium.ErrorMessage(err)})
	w.c.sendRaw(b)
}

// closed: the connection's end (a revoked key, shutdown) is told once, by
// the WebSocket's writer, for every subscription.
func (w *wsCohortSink) closed() {}
