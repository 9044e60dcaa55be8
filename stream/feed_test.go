package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/podiumhq/podium"
)

// feedSource adds activity feeds to a fakeSource: per board, its events,
// oldest first.
type feedSource struct {
	*fakeSource
	fmu    sync.Mutex
	events map[string][]FeedEvent
	clock  int64
}

func newFeedSource() *feedSource {
	return &feedSource{fakeSource: newFakeSource(), events: map[string][]FeedEvent{}}
}

func (f *feedSource) add(board string, seq uint64) string {
	f.fmu.Lock()
	defer f.fmu.Unlock()
	f.clock++
	id := fmt.Sprintf("%s/%d/personal_best", board, seq)
	f.events[board] = append(f.events[board], FeedEvent{ID: id, Pos: podium.FeedPos{At: f.clock, Board: board, Seq: seq, Kind: 1},
		JSON: json.RawMessage(fmt.Sprintf(`{"id":%q}`, id))})
	return id
}

func (f *feedSource) drop(board string, id string) {
	f.fmu.Lock()
	defer f.fmu.Unlock()
	f.events[board] = slices.DeleteFunc(f.events[board], func(ev FeedEvent) bool { return ev.ID == id })
}

func (f *feedSource) FeedView(_ context.Context, board string, limit int) (View, error) {
	f.fakeSource.mu.Lock()
	var boards []*fakeBoard
	if board == "" {
		for _, b := range f.boards {
			if b.def.Public {
				boards = append(boards, b)
			}
		}
	} else if b := f.boards[board]; b != nil {
		boards = append(boards, b)
	}
	f.fakeSource.mu.Unlock()
	if board != "" && len(boards) == 0 {
		return View{}, podium.Errorf(podium.ECodeBoardNotFound, "no board %s", board)
	}
	f.fmu.Lock()
	defer f.fmu.Unlock()
	var all []FeedEvent
	for _, b := range boards {
		all = append(all, f.events[b.def.ID]...)
	}
	slices.SortFunc(all, func(a, b FeedEvent) int { return -podium.CompareFeed(a.Pos, b.Pos) })
	if len(all) > limit {
		all = all[:limit]
	}
	v := View{Board: board, Public: true, Feed: all}
	if board != "" {
		v.Title, v.Public, v.Generation = boards[0].def.Title, boards[0].def.Public, boards[0].gen
	}
	return v, nil
}

// feedIDsOf lists the event ids an encoded feed event carries.
func feedIDsOf(t *testing.T, ev *Event) string {
	t.Helper()
	var m struct {
		Type   string `json:"type"`
		Code   string `json:"code"`
		Events []struct {
			ID string `json:"id"`
		} `json:"events"`
	}
	if err := json.Unmarshal(ev.JSON, &m); err != nil {
		t.Fatal(err)
	}
	if m.Type == "error" {
		return "error:" + m.Code
	}
	ids := []string{}
	for _, e := range m.Events {
		ids = append(ids, e.ID)
	}
	return m.Type + "[" + strings.Join(ids, " ") + "]"
}

func feedEvents(t *testing.T, c *Conn) []string {
	t.Helper()
	out := []string{}
	for _, ev := range drain(c) {
		out = append(out, feedIDsOf(t, ev))
	}
	return out
}

func wantEvents(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestFeedWindow(t *testing.T) {
	src := newFeedSource()
	src.put("a", true)
	src.put("b", true)
	h, clk := newTestHub(t, src, Config{})
	src.add("a", 1)
	anon, err := h.Connect("1.2.3.4", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.SubscribeFeed(context.Background(), "a", 3, ""); err != nil {
		t.Fatal(err)
	}
	wantEvents(t, "subscribe", feedEvents(t, anon), "snapshot[a/1/personal_best]")
	// New events at the head make a delta of just them, newest first.
	src.add("a", 2)
	src.add("a", 3)
	h.Applied("a", "all", 3, nil)
	clk.Add(1)
	h.Tick()
	delta := drain(anon)
	if len(delta) != 1 || feedIDsOf(t, delta[0]) != "delta[a/3/personal_best a/2/personal_best]" {
		t.Fatalf("after two events: %v", describe(delta))
	}
	// Nothing new: nothing sent, even when polled.
	clk.Add(FeedPoll)
	h.Tick()
	wantEvents(t, "a poll with nothing new", feedEvents(t, anon))
	// Polling finds events no Applied announced.
	src.add("a", 4)
	clk.Add(FeedPoll)
	h.Tick()
	wantEvents(t, "a poll", feedEvents(t, anon), "delta[a/4/personal_best]")
	// A resume from the first delta replays what followed it.
	c2, _ := h.Connect("1.2.3.5", nil)
	if _, err := c2.SubscribeFeed(context.Background(), "a", 3, delta[0].ID); err != nil {
		t.Fatal(err)
	}
	wantEvents(t, "resume", feedEvents(t, c2), "delta[a/4/personal_best]")
	// An event shown differently (its player renamed): a snapshot.
	src.fmu.Lock()
	src.events["a"][1].JSON = json.RawMessage(`{"id":"a/2/personal_best","name":"renamed"}`)
	src.fmu.Unlock()
	h.Applied("a", "", 4, nil)
	clk.Add(1)
	h.Tick()
	wantEvents(t, "a renamed player", feedEvents(t, anon), "snapshot[a/4/personal_best a/3/personal_best a/2/personal_best]")
	// An event gone from within the window: a snapshot restates it.
	src.drop("a", "a/3/personal_best")
	h.Applied("a", "all", 4, nil)
	clk.Add(1)
	h.Tick()
	wantEvents(t, "an event gone", feedEvents(t, anon), "snapshot[a/4/personal_best a/2/personal_best a/1/personal_best]")
	// The all-boards feed holds public boards' events; made private, a
	// board's events leave it (a snapshot) and its own feed ends for a
	// reader without a key.
	all, _ := h.Connect("1.2.3.6", nil)
	if _, err := all.SubscribeFeed(context.Background(), "", 10, ""); err != nil {
		t.Fatal(err)
	}
	src.add("b", 1)
	h.Applied("b", "all", 1, nil)
	clk.Add(1)
	h.Tick()
	wantEvents(t, "all-boards feed", feedEvents(t, all),
		"snapshot[a/4/personal_best a/2/personal_best a/1/personal_best]", "delta[b/1/personal_best]")
	src.setPublic("a", false)
	h.Applied("a", "", 4, nil)
	clk.Add(1)
	h.Tick()
	wantEvents(t, "all-boards feed after a went private", feedEvents(t, all), "snapshot[b/1/personal_best]")
	wantEvents(t, "a's feed after it went private", feedEvents(t, anon), "error:board_not_found")
	if _, err := c2.SubscribeFeed(context.Background(), "a", 3, ""); podium.ErrorCode(err) != podium.ECodeBoardNotFound {
		t.Fatalf("subscribing to a private board's feed without a key: %v", err)
	}
}
