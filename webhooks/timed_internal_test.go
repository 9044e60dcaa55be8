package webhooks

import (
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
)

func dailyBoard(id string, created time.Time) *podium.Board {
	return &podium.Board{ID: id, Reset: podium.Reset{Every: podium.Daily, TZ: "UTC"}, CreatedAt: created}
}

// The schedule gives its instants in order, skips the ones replaced or
// dropped, keeps an instant that has passed when its board changes, and
// stays within twice the things it watches however often they change.
func TestSchedule(t *testing.T) {
	var s schedule
	s.init()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	mid := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	g := 5 * time.Second
	for i := range 3 {
		s.loadBoard(dailyBoard(fmt.Sprint("b", i), now.Add(-time.Hour)), now, g, time.Hour)
	}
	s.loadBoard(&podium.Board{ID: "never", Reset: podium.Reset{Every: podium.Never}}, now, g, time.Hour)
	if s.size() != 3 {
		t.Fatalf("%d scheduled, want the 3 daily boards", s.size())
	}
	if at, ok := s.next(); !ok || !at.Equal(mid.Add(g)) {
		t.Fatalf("next = %v %v, want midnight and the grace", at, ok)
	}
	s.boardChanged(dailyBoard("b1", now), nil, now, g) // deleted
	weekly := dailyBoard("b2", now)
	weekly.Reset.Every = podium.Weekly
	s.boardChanged(dailyBoard("b2", now), weekly, now, g) // now weekly: its instant moves
	if got := s.popDue(now, 10); len(got) != 0 {
		t.Fatalf("popped %v before anything is due", got)
	}
	got := s.popDue(mid.Add(g), 10)
	if len(got) != 1 || got[0].key.id != "b0" {
		t.Fatalf("due at midnight: %v, want b0 alone", got)
	}
	// A change after the boundary, before the event: the instant stays.
	s.set(dueKey{duePeriod, "b0"}, mid, mid.Add(g))
	s.boardChanged(dailyBoard("b0", now), dailyBoard("b0", now), mid.Add(time.Second), g)
	if got := s.popDue(mid.Add(g), 10); len(got) != 1 || !got[0].at.Equal(mid) {
		t.Fatalf("after a change past the boundary: %v, want the pending midnight", got)
	}
	for i := range 10000 { // a board changed often leaves stale items behind
		s.set(dueKey{duePeriod, "busy"}, mid.Add(time.Duration(i)), mid.Add(time.Duration(i)))
	}
	if n := len(s.h); n > 2*len(s.cur)+1024 {
		t.Fatalf("heap of %d items for %d keys", n, len(s.cur))
	}
}

// A contest's instants are scheduled once each, again only when they
// move, and never when older than the window.
func TestScheduleContest(t *testing.T) {
	var s schedule
	s.init()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	freeze := now.Add(time.Hour)
	c := &contest.Contest{ID: "c", Start: now.Add(-time.Hour), End: now.Add(2 * time.Hour), Freeze: &freeze, CreatedAt: now.Add(-2 * time.Hour)}
	s.contestChanged("c", c, now, 0, time.Hour)
	if got := s.popDue(now.Add(2*time.Hour), 10); len(got) != 2 || got[0].key.kind != dueFreeze || got[1].key.kind != dueEnd {
		t.Fatalf("popped %v, want the freeze then the end", got)
	}
	s.contestChanged("c", c, now.Add(2*time.Hour), 0, time.Hour) // a solve: nothing moved
	if s.size() != 0 {
		t.Fatal("an unchanged contest was scheduled again")
	}
	c.End = now.Add(90 * time.Minute) // the end moved (into the past: ended early)
	s.contestChanged("c", c, now.Add(2*time.Hour), 0, time.Hour)
	if got := s.popDue(now.Add(2*time.Hour), 10); len(got) != 1 || !got[0].at.Equal(c.End) {
		t.Fatalf("popped %v, want the moved end", got)
	}
	c.End = now.Add(-3 * time.Hour) // older than the window
	s.contestChanged("c", c, now.Add(2*time.Hour), 0, time.Hour)
	if s.size() != 0 {
		t.Fatal("an end older than the window was scheduled")
	}
}

// The schedule keeps its times in milliseconds: an item due within a
// millisecond is not handed out before its due time (rounded up, never
// down), and hands out its instant as given. Its items stay small, since
// every board with a reset has one (issue 22: a million boards).
func TestScheduleMillis(t *testing.T) {
	var s schedule
	s.init()
	at := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	due := at.Add(1500 * time.Microsecond)
	s.set(dueKey{duePeriod, "b"}, at, due)
	if got := s.popDue(at.Add(time.Millisecond), 10); len(got) != 0 {
		t.Fatalf("popped %v half a millisecond before it was due", got)
	}
	if next, ok := s.next(); !ok || next.Before(due) {
		t.Fatalf("next = %v %v, want no earlier than %v", next, ok, due)
	}
	got := s.popDue(at.Add(2*time.Millisecond), 10)
	if len(got) != 1 || !got[0].at.Equal(at) {
		t.Fatalf("popped %v, want b at %v", got, at)
	}
	if n := unsafe.Sizeof(heapItem{}); n > 40 {
		t.Errorf("a heap item is %d bytes, want at most 40", n)
	}
	if n := unsafe.Sizeof(slot{}); n > 16 {
		t.Errorf("a slot is %d bytes, want at most 16", n)
	}
}
