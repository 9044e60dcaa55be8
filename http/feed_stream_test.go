package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// feedIDs lists the ids of a feed event's events.
func feedIDs(ev sseEvent) []string {
	ids := []string{}
	evs, _ := ev.Data["events"].([]any)
	for _, e := range evs {
		ids = append(ids, e.(map[string]any)["id"].(string))
	}
	return ids
}

func wantFeedEvent(t *testing.T, ev sseEvent, typ string, ids ...string) {
	t.Helper()
	if ids == nil {
		ids = []string{}
	}
	if ev.Type != typ || ev.Data["type"] != typ || !slices.Equal(feedIDs(ev), ids) {
		t.Fatalf("event %s %v, want %s of %v", ev.Type, ev.Data, typ, ids)
	}
}

// The feed streams like a board: a snapshot, deltas of new events, resume
// with Last-Event-ID, a snapshot when resume cannot be served, the end of
// a private board's stream; on PostgreSQL the events are committed on one
// node and streamed from the other.
func TestFeedStream(t *testing.T) {
	feedBackends(t, func(t *testing.T, a, b *server) {
		a.mkBoard("exp", `{"title":"Expert","keys":[{"name":"time_ms","order":"asc"}],"mode":"best","public":true}`)
		a.must(200, a.do("POST", "/v1/boards/exp/scores", adminKey, `{"player":"alice","keys":[41000]}`))
		deadline := time.Now().Add(5 * time.Second)
		for b.do("GET", "/v1/feed?board=exp", "", nil).status != 200 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		c := b.openSSE("/v1/feed/stream?board=exp&limit=3", "")
		ev := c.next(5 * time.Second)
		if len(feedIDs(ev)) == 0 { // node b had not read the events yet when the window was made
			ev = c.next(5 * time.Second)
		}
		wantFeedEvent(t, ev, "snapshot", "exp/1/new_leader", "exp/1/personal_best")
		all := b.openSSE("/v1/feed/stream", "")
		ev = all.next(5 * time.Second)
		wantFeedEvent(t, ev, "snapshot", "exp/1/new_leader", "exp/1/personal_best")
		if ev.Data["board"] != nil || ev.Data["limit"] != 50.0 {
			t.Errorf("all-boards snapshot head: %v", ev.Data)
		}

		a.must(200, a.do("POST", "/v1/boards/exp/scores", adminKey, `{"player":"bob","keys":[40000]}`))
		d1 := c.next(5 * time.Second)
		wantFeedEvent(t, d1, "delta", "exp/2/new_leader", "exp/2/personal_best")
		wantFeedEvent(t, all.next(5*time.Second), "delta", "exp/2/new_leader", "exp/2/personal_best")
		if d1.Data["events"].([]any)[0].(map[string]any)["previous_player"] != "alice" {
			t.Errorf("delta event: %v", d1.Data)
		}
		a.must(200, a.do("POST", "/v1/boards/exp/scores", adminKey, `{"player":"carol","keys":[45000]}`))
		wantFeedEvent(t, c.next(5*time.Second), "delta", "exp/3/personal_best")
		wantFeedEvent(t, all.next(5*time.Second), "delta", "exp/3/personal_best")

		// Resume after the first delta: the events after it, no snapshot.
		r := b.openSSE("/v1/feed/stream?board=exp&limit=3", d1.ID)
		wantFeedEvent(t, r.next(5*time.Second), "delta", "exp/3/personal_best")
		// An id the window does not know: a snapshot of the newest 3.
		r2 := b.openSSE("/v1/feed/stream?board=exp&limit=3", "12345.7")
		wantFeedEvent(t, r2.next(5*time.Second), "snapshot", "exp/3/personal_best", "exp/2/new_leader", "exp/2/personal_best")

		// A board made private ends its anonymous stream.
		a.must(200, a.do("PUT", "/v1/boards/exp", adminKey, `{"public":false}`))
		ev = c.next(5 * time.Second)
		if ev.Type != "error" || ev.Data["code"] != "board_not_found" { // as if it no longer existed
			t.Fatalf("after the board went private: %s %v", ev.Type, ev.Data)
		}
		ev = all.next(5 * time.Second)
		wantFeedEvent(t, ev, "snapshot")

		// Refused before streaming: clear errors.
		for _, q := range []struct {
			path, code string
		}{
			{"/v1/feed/stream?board=exp", "board_not_found"}, // private: as unknown
			{"/v1/feed/stream?board=nope", "board_not_found"},
			{"/v1/feed/stream?limit=0", "invalid_argument"},
			{"/v1/feed/stream?player=x", "invalid_argument"},
		} {
			if code := b.do("GET", q.path, "", nil).errCode(t); code != q.code {
				t.Errorf("GET %s: %s, want %s", q.path, code, q.code)
			}
		}
	})
}

// Feed subscriptions ride a WebSocket beside board subscriptions; their
// events say "feed": true.
func TestFeedWebSocket(t *testing.T) {
	s := newServer(t)
	s.mkBoard("w1", oneKey)
	s.score("w1", "a", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.url, "http")+"/v1/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	send := func(v string) {
		if err := c.Write(ctx, websocket.MessageText, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("not JSON: %s", b)
		}
		return m
	}
	describe := func(m map[string]any) string {
		return fmt.Sprint(m["type"], " feed=", m["feed"], " board=", m["board"], " ", feedIDs(sseEvent{Data: m}))
	}
	send(`{"op":"subscribe","board":"w1","limit":5}`)
	send(`{"op":"subscribe_feed","board":"w1","limit":5,"id":"f1"}`)
	send(`{"op":"subscribe_feed","limit":2}`)
	got := []string{}
	for range 6 {
		got = append(got, describe(recv()))
	}
	slices.Sort(got)
	want := []string{
		"snapshot feed=<nil> board=w1 []",
		"snapshot feed=true board=<nil> [w1/1/new_leader]",
		"snapshot feed=true board=w1 [w1/1/new_leader]",
		"subscribed feed=<nil> board=w1 []",
		"subscribed feed=true board=<nil> []",
		"subscribed feed=true board=w1 []",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("after subscribing:\n got %q\nwant %q", got, want)
	}
	send(`{"op":"unsubscribe_feed","board":"w1"}`)
	if m := describe(recv()); m != "unsubscribed feed=true board=w1 []" {
		t.Fatalf("unsubscribe_feed: %s", m)
	}
	s.score("w1", "b", 5)
	got = []string{describe(recv()), describe(recv())}
	slices.Sort(got)
	if want := []string{"delta feed=<nil> board=w1 []", "delta feed=true board=<nil> [w1/2/new_leader]"}; !slices.Equal(got, want) {
		t.Fatalf("after a new #1:\n got %q\nwant %q", got, want)
	}
	send(`{"op":"subscribe_feed","board":"w1","limit":500}`)
	if m := recv(); m["type"] != "error" || m["code"] != "invalid_argument" {
		t.Fatalf("limit above the cap: %v", m)
	}
}
