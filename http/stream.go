package http

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/stream"
)

// streamHandlers serves the live board streams: SSE, and the WebSocket
// that multiplexes boards and the feed.
type streamHandlers struct {
	*base
	*streamer
	eng     access          // handlers.go: boards (a ?key= goes to base.auth)
	feed    *feedHandlers   // the WebSocket's feed subscriptions
	leagues *leagueHandlers // its cohort subscriptions (leagues_ws.go)
}

// streamer is what the live endpoints share: the hub, their settings, the
// origin rule and the client's address.
type streamer struct {
	hub       *stream.Hub
	streamCfg *StreamConfig // the Server's: SetStallTimeout changes it before serving
	origins   origins
	clientIP  func(r *http.Request) string // clientip.go
}

// StreamConfig tunes the live endpoints. Zero values mean the defaults.
type StreamConfig struct {
	Heartbeat time.Duration // SSE comment / WebSocket ping interval (15s)
	Retry     time.Duration // the retry: hint sent to EventSource clients (2s)
	// StallTimeout: a write that makes no progress this long drops the
	// client (20s). An SSE write may get up to 1.25x this: its deadline is
	// moved only when less than StallTimeout is left.
	StallTimeout time.Duration
	// BehindGrace: once a connection falls behind its memory bound, the
	// client has this long to complete a write, or it is cut (2s).
	BehindGrace time.Duration
}

func (c *StreamConfig) defaults() {
	if c.Heartbeat <= 0 {
		c.Heartbeat = 15 * time.Second
	}
	if c.Retry <= 0 {
		c.Retry = 2 * time.Second
	}
	if c.StallTimeout <= 0 {
		c.StallTimeout = 20 * time.Second
	}
	if c.BehindGrace <= 0 {
		c.BehindGrace = 2 * time.Second
	}
}

// SetBehindGrace changes how long a stream that fell behind its memory
// bound may take to complete a write before it is cut. Call it before
// serving.
func (s *Server) SetBehindGrace(d time.Duration) { s.streamCfg.BehindGrace = d }

// stuckWatch cuts a stream client that fell behind its memory bound and
// then completes no write within the grace. Falling behind drops the
// connection's queue at once (stream.Conn), so what such a client still
// holds is the event being written and the socket's buffers; without
// the watch it held them for the whole stall timeout (15-40 s measured,
// issue 17), with it for the grace (2 s).
type stuckWatch struct {
	writing atomic.Int32  // writes in flight (a WebSocket's reader answers too)
	writes  atomic.Uint64 // writes completed
}

func (w *stuckWatch) begin() { w.writing.Add(1) }
func (w *stuckWatch) end()   { w.writes.Add(1); w.writing.Add(-1) }

// run waits for behind signals until ctx ends; after each, if no write
// completed within grace and one is in flight, it calls cut and returns.
func (w *stuckWatch) run(ctx context.Context, behind <-chan struct{}, grace time.Duration, cut func()) {
	t := time.NewTimer(grace)
	t.Stop()
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-behind:
		}
		n := w.writes.Load()
		t.Reset(grace)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if w.writing.Load() > 0 && w.writes.Load() == n {
			cut()
			return
		}
	}
}

// SetStallTimeout changes how long a stream write may make no progress
// before the client is dropped. Call it before serving.
func (s *Server) SetStallTimeout(d time.Duration) { s.streamCfg.StallTimeout = d }

// StreamSource adapts an engine to the stream hub's Source.
func StreamSource(e *engine.Engine) stream.Source { return source{e, findFeed(e)} }

type source struct {
	e    *engine.Engine
	feed feedReader // feed.go
}

func (s source) View(ctx context.Context, board string, limit int) (stream.View, error) {
	lv, err := s.e.LiveTop(ctx, board, limit)
	if err != nil {
		return stream.View{}, err
	}
	v := stream.View{Board: lv.Def.ID, Title: lv.Def.Title, Keys: lv.Def.Keys, Public: lv.Def.Public, Generation: lv.Generation,
		Period: lv.Period, NextReset: lv.NextReset, Seq: lv.Seq, Total: lv.Total, Entries: make([]stream.Entry, len(lv.Entries))}
	for i, en := range lv.Entries {
		v.Entries[i] = stream.Entry{Rank: en.Rank, Player: en.Player, Name: en.Name, Keys: en.Keys,
			AtText: en.At.UTC().Format("2006-01-02T15:04:05.000Z07:00"), Meta: en.Meta,
			Results: streamResults(en.Results), RankShared: en.Shared}
		if en.Decayed {
			// The same number as the REST read's "value" (encode.go).
			v.Entries[i].Value = json.Number(strconv.FormatFloat(en.Value, 'f', 6, 64))
		}
	}
	return v, nil
}

// streamResults copies the best stream.MaxResults kept results of a
// best_k entry (the engine's are shared with its index: read-only).
func streamResults(rs []podium.Result) []stream.Result {
	if len(rs) == 0 {
		return nil
	}
	out := make([]stream.Result, min(len(rs), stream.MaxResults))
	for i := range out {
		out[i] = stream.Result{Keys: append([]int64(nil), rs[i].Keys...),
			AtText: rs[i].At.UTC().Format("2006-01-02T15:04:05.000Z07:00")}
	}
	return out
}

// connect opens a stream connection for the principal key (nil:
// anonymous), which its subscriptions are authorised for and which ends it
// when the key is revoked.
func (s *streamer) connect(r *http.Request, w http.ResponseWriter, key *podium.APIKey) (*stream.Conn, error) {
	conn, err := s.hub.Connect(s.streamAddr(r), key)
	retryAfter(w, err)
	return conn, err
}

// streamAddr is the client address a stream counts against (the per-address
// cap and memory share): the trusted-proxy rule's client address, an IPv6
// one by its /64 as the rate limits count it.
func (s *streamer) streamAddr(r *http.Request) string { return rateAddr(s.clientIP(r)) }

// retryAfter tells a client refused for capacity when to come back.
func retryAfter(w http.ResponseWriter, err error) {
	if err != nil && podium.ErrorCode(err) == podium.ECodeRateLimited {
		w.Header().Set("Retry-After", "5")
	}
}

// sse serves GET /v1/boards/{board}/stream: Server-Sent Events of the top
// limit entries.
func (s *streamHandlers) sse(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkStreamOrigin(r); err != nil {
		return err
	}
	bi, key, err := s.readableBoard(r, r.PathValue("board"))
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", 50, 1, s.hub.Config().MaxLimit)
	if err != nil {
		return err
	}
	lastID := r.Header.Get("Last-Event-ID")
	if lastID == "" {
		lastID = r.URL.Query().Get("last_event_id")
	}
	conn, err := s.connect(r, w, key)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.Subscribe(r.Context(), bi.ID, limit, lastID); err != nil {
		retryAfter(w, err)
		return err
	}
	s.serveSSE(w, r, conn, bi.ID)
	return nil
}

// serveSSE writes the events of conn's subscriptions as Server-Sent
// Events until the client leaves or the server ends the connection (the
// board and feed streams). board names the stream in a final error event.
func (s *streamer) serveSSE(w http.ResponseWriter, r *http.Request, conn *stream.Conn, board string) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // tell nginx not to buffer the stream
	if r.ProtoMajor == 1 {
		// The body ends when the connection closes, without chunked
		// encoding (net/http's setup for SSE). net/http puts a chunk's
		// header in its 4 KiB connection buffer, so an event over ~4 KB
		// (a snapshot of 50) took two write calls; now each is one. At
		// 10,000 subscribers these writes are most of the server's CPU.
		h.Set("Transfer-Encoding", "identity")
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	var watch stuckWatch
	wctx, wcancel := context.WithCancel(r.Context())
	defer wcancel()
	go watch.run(wctx, conn.Behind(), s.streamCfg.BehindGrace, func() {
		// A deadline in the past fails the write in flight now.
		rc.SetWriteDeadline(time.Unix(1, 0))
	})
	stall := s.streamCfg.StallTimeout
	var deadline time.Time
	write := func(b []byte) bool {
		watch.begin()
		defer watch.end()
		// The deadline moves only when less than the stall timeout is
		// left, to 1.25x ahead: every write gets from 1x to 1.25x of it.
		// Moving it for each write (ResponseController's unwrapping, the
		// poller's timer) was 12% of the server's CPU at 19,500
		// subscribers. A cut's deadline in the past stays until the
		// write in flight has failed (the stream then ends).
		if now := time.Now(); deadline.Sub(now) < stall {
			deadline = now.Add(stall + stall/4)
			rc.SetWriteDeadline(deadline)
		}
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write([]byte("retry: " + strconv.Itoa(int(s.streamCfg.Retry/time.Millisecond)) + "\n\n")) {
		return
	}
	done := r.Context().Done()
	for {
		_, ev, ok := conn.Next(s.streamCfg.Heartbeat, done)
		switch {
		case !ok:
			if err := conn.Err(); err != nil {
				// The key was revoked, or the stream fell behind and not
				// even a fresh snapshot found room (rate_limited): say so
				// and end the stream.
				write(sseError(board, err))
				return
			}
			// Server shutdown: ask the browser to come back soon.
			write([]byte("retry: 1000\n: server restarting\n\n"))
			return
		case ev == nil:
			select {
			case <-done:
				return
			default:
			}
			if !write([]byte(": ping\n\n")) {
				return
			}
		default:
			if !write(ev.SSE) || ev.Type == "error" {
				return
			}
		}
	}
}

// sseError is an error event that ends an SSE stream.
func sseError(board string, err error) []byte {
	b, _ := json.Marshal(struct {
		Type    string `json:"type"`
		Board   string `json:"board"`
		Code    string `json:"code"`
		Message string `json:"message"`
	}{"error", board, podium.ErrorCode(err), podium.ErrorMessage(err)})
	return []byte("id: error\nevent: error\ndata: " + string(b) + "\n\n")
}

// wsMessage is what WebSocket clients send.
type wsMessage struct {
	Op          string `json:"op"`
	Board       string `json:"board"`
	Player      string `json:"player"` // the cohort ops'
	Limit       int    `json:"limit"`
	LastEventID string `json:"last_event_id"`
	ID          string `json:"id"`
}

// ws serves GET /v1/stream: the same events for several boards over one
// WebSocket.
func (s *streamHandlers) ws(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkStreamOrigin(r); err != nil {
		return err
	}
	key, err := s.principal(r)
	if err != nil {
		return err
	}
	if key == nil && r.URL.Query().Get("key") != "" {
		if k, ok := s.auth.Authenticate(r.URL.Query().Get("key")); ok {
			key = k
		} else {
			return podium.Errorf(podium.ECodeUnauthenticated, "the API key is not valid (unknown or revoked)")
		}
	}
	conn, err := s.connect(r, w, key)
	if err != nil {
		return err
	}
	defer conn.Close()
	// The origin was checked above against --allowed-origins, the same
	// rule as CORS; Accept's own check (same host only) would refuse
	// every page embedding a board elsewhere.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return nil // Accept has answered the client
	}
	c.SetReadLimit(4096)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var watch stuckWatch
	go watch.run(ctx, conn.Behind(), s.streamCfg.BehindGrace, func() {
		c.CloseNow() // fails the write in flight and the reader
	})
	sendRaw := func(b []byte) error {
		wctx, wcancel := context.WithTimeout(ctx, s.streamCfg.StallTimeout)
		defer wcancel()
		watch.begin()
		defer watch.end()
		return c.Write(wctx, websocket.MessageText, b)
	}
	send := func(v any) error {
		b, _ := json.Marshal(v)
		return sendRaw(b)
	}
	// Deferred after conn.Close, so run before it: the follows give their
	// bytes back to the connection. The context ends first, so an op in
	// flight on the reader does not wait out a store read or a write.
	cohorts := newWSCohorts(ctx, s.leagues, conn, key, sendRaw)
	defer func() { cancel(); cohorts.closeAll() }()
	wsErr := func(board, id string, err error) error {
		return send(map[string]string{"type": "error", "board": board, "id": id, "code": podium.ErrorCode(err), "message": podium.ErrorMessage(err)})
	}
	go func() {
		defer cancel()
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m wsMessage
			if err := decodeStrict(data, &m); err != nil {
				if wsErr("", "", err) != nil {
					return
				}
				continue
			}
			if err := s.wsOp(ctx, conn, cohorts, &m, send); err != nil {
				if wsErr(m.Board, m.ID, err) != nil {
					return
				}
			}
		}
	}()
	ping := time.NewTicker(s.streamCfg.Heartbeat)
	defer ping.Stop()
	for {
		_, ev, ok := conn.Next(s.streamCfg.Heartbeat, ctx.Done())
		if !ok {
			if err := conn.Err(); err != nil {
				wsErr("", "", err)
				if podium.ErrorCode(err) == podium.ECodeRateLimited {
					// The connection fell behind and not even a fresh
					// snapshot found room in its memory bound: 1013
					// (try again later).
					c.Close(websocket.StatusTryAgainLater, "the stream fell behind its memory bound; reconnect later")
					return nil
				}
				// The key was revoked: every subscription is void. Say
				// why, then close with 1008 (policy violation).
				c.Close(websocket.StatusPolicyViolation, "the API key was revoked")
				return nil
			}
			c.Close(websocket.StatusServiceRestart, "server restarting; reconnect")
			return nil
		}
		if ev == nil {
			select {
			case <-ctx.Done():
				c.Close(websocket.StatusNormalClosure, "")
				return nil
			case <-ping.C:
				pctx, pcancel := context.WithTimeout(ctx, s.streamCfg.StallTimeout)
				err := c.Ping(pctx)
				pcancel()
				if err != nil {
					return nil
				}
			default:
			}
			continue
		}
		wctx, wcancel := context.WithTimeout(ctx, s.streamCfg.StallTimeout)
		watch.begin()
		err := c.Write(wctx, websocket.MessageText, ev.JSON)
		watch.end()
		wcancel()
		if err != nil {
			return nil
		}
	}
}

func (s *streamHandlers) wsOp(ctx context.Context, conn *stream.Conn, cohorts *wsCohorts, m *wsMessage, send func(any) error) error {
	if m.Player != "" && m.Op != "subscribe_cohort" && m.Op != "unsubscribe_cohort" {
		return podium.Errorf(podium.ECodeInvalid, "player belongs to subscribe_cohort and unsubscribe_cohort only")
	}
	switch m.Op {
	case "ping":
		return send(map[string]string{"type": "pong", "id": m.ID})
	case "subscribe":
		bi, err := s.eng.Board(m.Board)
		if err != nil {
			return err
		}
		if m.Limit == 0 {
			m.Limit = 50
		}
		// Subscribe authorises the connection's principal against the
		// board as its window shows it.
		if _, err := conn.Subscribe(ctx, bi.ID, m.Limit, m.LastEventID); err != nil {
			return err
		}
		return send(map[string]any{"type": "subscribed", "board": bi.ID, "limit": m.Limit, "id": m.ID})
	case "subscribe_feed", "unsubscribe_feed":
		return s.feed.wsFeedOp(ctx, conn, m, send) // feed.go
	case "subscribe_cohort", "unsubscribe_cohort":
		return cohorts.op(ctx, m, send) // leagues_ws.go
	case "unsubscribe":
		n := conn.UnsubscribeBoard(m.Board)
		if n == 0 {
			return podium.Errorf(podium.ECodeNotFound, "not subscribed to board %q", m.Board)
		}
		return send(map[string]any{"type": "unsubscribed", "board": m.Board, "id": m.ID})
	}
	return podium.Errorf(podium.ECodeInvalid, "op must be subscribe, unsubscribe, subscribe_feed, unsubscribe_feed, subscribe_cohort, unsubscribe_cohort or ping")
}
