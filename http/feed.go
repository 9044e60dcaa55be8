package http

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/feed"
	"github.com/podiumhq/podium/stream"
)

// feedHandlers serves the activity feed: read, SSE stream, and the
// WebSocket's feed subscriptions (stream.go).
type feedHandlers struct {
	*base
	*streamer
	eng feedReader
}

// feedReader is what the feed handlers call: the feed module's reads
// (feed/), or noFeed without the module.
type feedReader interface {
	Cap() int
	Feed(ctx context.Context, q feed.Read) ([]feed.Item, error)
	LiveFeed(ctx context.Context, board string, limit int) (feed.Live, error)
}

// noFeed is the feed without its module: no feed (503).
type noFeed struct{}

func (noFeed) Cap() int { return 0 }
func (noFeed) Feed(context.Context, feed.Read) ([]feed.Item, error) {
	return nil, podium.Errorf(podium.ECodeUnavailable, "this store keeps no activity feed")
}
func (noFeed) LiveFeed(context.Context, string, int) (feed.Live, error) {
	return feed.Live{}, podium.Errorf(podium.ECodeUnavailable, "this store keeps no activity feed")
}

// findFeed returns e's feed module, noFeed if it has none.
func findFeed(e *engine.Engine) feedReader {
	for _, m := range e.Modules() {
		if x, ok := m.(feedReader); ok {
			return x
		}
	}
	return noFeed{}
}

// DefaultFeedLimit is the events GET /v1/feed returns without limit=.
const DefaultFeedLimit = 50

// feed serves GET /v1/feed: the newest activity feed events of one board
// (board=, readable as the board's entries are), or of every board the
// caller may read (public boards, and private ones its key reads).
func (s *feedHandlers) feed(w http.ResponseWriter, r *http.Request) error {
	q := feed.Read{}
	board, given := queryValue(r, "board")
	if given && !podium.ValidBoardID(board) {
		return podium.Errorf(podium.ECodeInvalid, "board must match [a-z0-9][a-z0-9_.:-]{0,127}")
	}
	max := s.eng.Cap()
	if max == 0 {
		return podium.Errorf(podium.ECodeUnavailable, "this server keeps no activity feed")
	}
	var err error
	if q.Limit, err = queryInt(r, "limit", min(DefaultFeedLimit, max), 1, max); err != nil {
		return err
	}
	if given {
		bi, k, err := s.readableBoard(r, board)
		if err != nil {
			return err
		}
		q.Board = bi.ID
		// Re-checked against the board as Feed reads it: a board made
		// private in between is not served.
		q.Readable = func(id string, public bool) bool { return public || k != nil && k.Allows(podium.ScopeRead, id) }
	} else {
		k, err := s.principal(r)
		if err != nil {
			return err
		}
		q.Readable = func(id string, public bool) bool { return public || k != nil && k.Allows(podium.ScopeRead, id) }
	}
	items, err := s.eng.Feed(r.Context(), q)
	if err != nil {
		return err
	}
	b := make([]byte, 0, 128+len(items)*256)
	b = append(b, `{"board":`...)
	if q.Board != "" {
		b = appendString(b, q.Board)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(q.Limit), 10)
	b = append(b, `,"events":[`...)
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFeedItem(b, &items[i])
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	return nil
}

// appendFeedItem encodes one event as the API shows it (docs/API.md,
// "Activity feed"); the stream's events carry the same objects.
func appendFeedItem(b []byte, it *feed.Item) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, it.ID())
	b = append(b, `,"kind":`...)
	b = appendString(b, it.Kind.String())
	b = append(b, `,"board":`...)
	b = appendString(b, it.Board)
	b = append(b, `,"title":`...)
	b = appendString(b, it.Title)
	b = append(b, `,"period":`...)
	b = appendString(b, it.Period)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, it.Seq, 10)
	b = append(b, `,"at":`...)
	b = appendTime(b, it.At)
	b = append(b, `,"player":`...)
	if it.Player != "" {
		b = appendString(b, it.Player)
		b = append(b, `,"name":`...)
		b = appendString(b, it.Name)
	} else {
		b = append(b, `null,"name":null`...)
	}
	b = append(b, `,"keys":`...)
	b = appendOptKeys(b, it.Keys)
	switch it.Kind {
	case podium.FeedPersonalBest:
		b = append(b, `,"old":`...)
		b = appendOptKeys(b, it.Old)
	case podium.FeedNewLeader:
		b = append(b, `,"old":`...)
		b = appendOptKeys(b, it.Old)
		b = append(b, `,"previous_player":`...)
		if it.Other != "" {
			b = appendString(b, it.Other)
			b = append(b, `,"previous_name":`...)
			b = appendString(b, it.OtherName)
		} else {
			b = append(b, `null,"previous_name":null`...)
		}
	case podium.FeedTournamentSettled, podium.FeedLeagueSettled:
		b = append(b, `,"data":`...)
		if it.Data != nil && json.Valid(it.Data) {
			b = append(b, it.Data...)
		} else {
			b = append(b, "{}"...)
		}
	}
	return append(b, '}')
}

func appendOptKeys(b []byte, keys []int64) []byte {
	if keys == nil {
		return append(b, "null"...)
	}
	return appendKeys(b, keys)
}

// FeedView reads a feed window for the stream hub (stream.FeedSource).
func (s source) FeedView(ctx context.Context, board string, limit int) (stream.View, error) {
	lf, err := s.feed.LiveFeed(ctx, board, limit)
	if err != nil {
		return stream.View{}, err
	}
	v := stream.View{Board: board, Public: true, Feed: make([]stream.FeedEvent, len(lf.Items))}
	if lf.Board != nil {
		v.Title, v.Keys, v.Public, v.Generation = lf.Board.Title, lf.Board.Keys, lf.Board.Public, lf.Generation
	}
	for i := range lf.Items {
		it := &lf.Items[i]
		v.Feed[i] = stream.FeedEvent{ID: it.ID(), Pos: it.Pos(), JSON: appendFeedItem(nil, it)}
	}
	return v, nil
}

// feedStream serves GET /v1/feed/stream: Server-Sent Events of a feed's
// newest limit events (one board's with board=, readable as the board
// is; every public board's without), resumable with Last-Event-ID.
func (s *feedHandlers) feedStream(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkStreamOrigin(r); err != nil {
		return err
	}
	max := s.eng.Cap()
	if max == 0 {
		return podium.Errorf(podium.ECodeUnavailable, "this server keeps no activity feed")
	}
	board, given := queryValue(r, "board")
	if given && !podium.ValidBoardID(board) {
		return podium.Errorf(podium.ECodeInvalid, "board must match [a-z0-9][a-z0-9_.:-]{0,127}")
	}
	limit, err := queryInt(r, "limit", min(DefaultFeedLimit, max), 1, min(max, s.hub.Config().MaxLimit))
	if err != nil {
		return err
	}
	var key *podium.APIKey
	if given {
		var bi engine.BoardInfo
		if bi, key, err = s.readableBoard(r, board); err != nil {
			return err
		}
		board = bi.ID
	} else if key, err = s.principal(r); err != nil {
		return err
	}
	lastID := r.Header.Get("Last-Event-ID")
	if lastID == "" {
		lastID, _ = queryValue(r, "last_event_id")
	}
	conn, err := s.connect(r, w, key)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.SubscribeFeed(r.Context(), board, limit, lastID); err != nil {
		retryAfter(w, err)
		return err
	}
	s.serveSSE(w, r, conn, board)
	return nil
}

// wsFeedOp runs the WebSocket ops of feed subscriptions: subscribe_feed
// (board optional: every public board's feed without it) and
// unsubscribe_feed.
func (s *feedHandlers) wsFeedOp(ctx context.Context, conn *stream.Conn, m *wsMessage, send func(any) error) error {
	if m.Board != "" {
		if _, err := s.acc.Board(m.Board); err != nil {
			return err
		}
	}
	var board any = m.Board
	if m.Board == "" {
		board = nil
	}
	if m.Op == "unsubscribe_feed" {
		if conn.UnsubscribeFeed(m.Board) == 0 {
			return podium.Errorf(podium.ECodeNotFound, "not subscribed to this feed")
		}
		return send(map[string]any{"type": "unsubscribed", "feed": true, "board": board, "id": m.ID})
	}
	max := min(s.eng.Cap(), s.hub.Config().MaxLimit)
	if m.Limit == 0 {
		m.Limit = min(DefaultFeedLimit, max)
	}
	if m.Limit < 1 || m.Limit > max {
		return podium.Errorf(podium.ECodeInvalid, "limit must be from 1 to %d", max)
	}
	// SubscribeFeed authorises the connection's principal against the
	// board as its window shows it.
	if _, err := conn.SubscribeFeed(ctx, m.Board, m.Limit, m.LastEventID); err != nil {
		return err
	}
	return send(map[string]any{"type": "subscribed", "feed": true, "board": board, "limit": m.Limit, "id": m.ID})
}
