package ctf

import (
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
)

// Two services on one database, as two nodes that only learn by polling
// (Sync): a contest deleted on one goes from the other at its next Sync,
// and one deleted and made again under its id is loaded afresh, not mixed
// with what the node held (same version and a lower seq).
func TestDeleteReachesOtherNode(t *testing.T) {
	store := openSQLite(t)
	clk, pl := &clock{t: t0.Add(time.Minute)}, &players{hidden: map[string]bool{}}
	a, b := newService(t, store, clk, pl), newService(t, store, clk, pl)
	setup(t, a)
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, team := range []string{"x", "y"} {
		if _, err := b.Attempt(ctx, "ctf", team, "web", true, "judge", ""); err != nil {
			t.Fatal(err)
		}
	}
	var told []string
	b.OnChange(func(id string) { told = append(told, id) })
	if err := a.DeleteContest(ctx, "ctf"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Contest("ctf"); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Fatalf("deleting node still has it: %v", err)
	}
	if err := a.DeleteContest(ctx, "ctf"); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Fatalf("second delete = %v, want not_found", err)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Standings("ctf", Live); podium.ErrorCode(err) != podium.ECodeNotFound || len(told) != 1 {
		t.Fatalf("other node after Sync: %v, told %v", err, told)
	}

	setup(t, b)
	if _, err := b.Attempt(ctx, "ctf", "x", "web", true, "judge", ""); err != nil {
		t.Fatal(err)
	}
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteContest(ctx, "ctf"); err != nil {
		t.Fatal(err)
	}
	// a holds the contest at seq 1; b makes it again, and a next sees a
	// contest of the same version with seq 1.
	setup(t, b)
	if _, err := b.Attempt(ctx, "ctf", "z", "pwn", true, "judge", ""); err != nil {
		t.Fatal(err)
	}
	old, _ := b.Contest("ctf")
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	la, _ := a.Standings("ctf", Live)
	lb, _ := b.Standings("ctf", Live)
	if lines(la) != lines(lb) || lines(la) != "[1:z:330]" {
		t.Fatalf("after delete and make again: a %s, b %s", lines(la), lines(lb))
	}
	// Same node, same millisecond: the generations still differ.
	if err := b.DeleteContest(ctx, "ctf"); err != nil {
		t.Fatal(err)
	}
	setup(t, b)
	again, _ := b.Contest("ctf")
	if Generation(&again) == Generation(&old) {
		t.Fatalf("a contest made again within a millisecond has the old generation %d", Generation(&old))
	}
}

// A contest or challenge made on another node is written to here before
// this node polled: the write looks again instead of refusing it as
// unknown.
func TestAttemptOnChallengeFromOtherNode(t *testing.T) {
	store := openSQLite(t)
	clk, pl := &clock{t: t0.Add(time.Minute)}, &players{hidden: map[string]bool{}}
	a, b := newService(t, store, clk, pl), newService(t, store, clk, pl)
	if _, _, err := a.PutContest(ctx, &contest.Contest{ID: "ctf", Start: t0, End: t0.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.PutChallenge(ctx, &contest.Challenge{Contest: "ctf", ID: "web", Scoring: contest.Scoring{Value: 100}}); err != nil {
		t.Fatalf("a challenge on b of a contest made on a: %v", err)
	}
	if _, err := a.Attempt(ctx, "ctf", "x", "web", false, "judge", ""); err != nil {
		t.Fatalf("an attempt on a of a challenge made on b: %v", err)
	}
	if _, err := b.Attempt(ctx, "nope", "x", "web", false, "judge", ""); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Fatalf("an attempt on a missing contest = %v, want not_found", err)
	}
	if _, _, err := a.PutChallenge(ctx, &contest.Challenge{Contest: "ctf", ID: "rev", Scoring: contest.Scoring{Value: 50}}); err != nil {
		t.Fatal(err)
	}
	if o, err := b.Attempt(ctx, "ctf", "x", "rev", true, "judge", ""); err != nil || o.Value != 50 {
		t.Fatalf("attempt on a challenge made on the other node: %+v, %v", o, err)
	}
	// Solved (on b): a refuses to delete it.
	if err := a.DeleteChallenge(ctx, "ctf", "rev"); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("delete a solved challenge = %v, want conflict", err)
	}
}

// A contest may last thousands of years: its periodic snapshots are at
// most MaxSnapshots, spaced over its time, and finding the due ones does
// not walk them all.
func TestSnapshotTimesBounded(t *testing.T) {
	c := &contest.Contest{Start: time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}
	all := snapshotTimes(c, 5*time.Minute, time.Time{}, c.End)
	if len(all) > MaxSnapshots+1 || len(all) < MaxSnapshots-1 || !all[len(all)-1].Equal(c.End) {
		t.Fatalf("%d snapshot times, last %v", len(all), all[len(all)-1])
	}
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if due := snapshotTimes(c, 5*time.Minute, time.Time{}, now); len(due) != 7 {
		t.Fatalf("%d due by 2026, want 7 (one every ~8 years)", len(due))
	}
	if due := snapshotTimes(c, 5*time.Minute, all[5], now); len(due) != 1 || !due[0].Equal(all[6]) {
		t.Fatalf("due after the 6th: %v, want %v", due, all[6])
	}
	// A short contest keeps its interval.
	short := &contest.Contest{Start: t0, End: t0.Add(time.Hour)}
	if got := snapshotTimes(short, 5*time.Minute, t0.Add(10*time.Minute), t0.Add(2*time.Hour)); len(got) != 10 ||
		!got[0].Equal(t0.Add(15*time.Minute)) || !got[9].Equal(t0.Add(time.Hour)) {
		t.Fatalf("short contest: %v", got)
	}
}

// A Board's challenges are those its standings were computed with, index
// for index, while challenges are added and deleted (readers took them
// before computing: a delete between made the HTTP handlers index past
// the standings' challenges, an add name values after the wrong ones).
func TestBoardChallengesMatchStandings(t *testing.T) {
	clk, pl := &clock{t: t0.Add(time.Minute)}, &players{hidden: map[string]bool{}}
	s := newService(t, openSQLite(t), clk, pl)
	setup(t, s)
	if _, err := s.Attempt(ctx, "ctf", "x", "web", true, "judge", ""); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 300 {
			ch := contest.Challenge{Contest: "ctf", ID: "aaa", Order: -1, Scoring: contest.Scoring{Value: 1}}
			if _, _, err := s.PutChallenge(ctx, &ch); err != nil {
				t.Error(err)
				return
			}
			if err := s.DeleteChallenge(ctx, "ctf", "aaa"); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for n := 0; ; n++ {
		select {
		case <-done:
			return
		default:
		}
		for _, v := range []View{Public, Live} {
			b, err := s.Standings("ctf", v)
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Challenges) != len(b.Standings.Challenges) {
				t.Fatalf("read %d: %d challenges, standings of %d", n, len(b.Challenges), len(b.Standings.Challenges))
			}
			for i := range b.Challenges {
				if b.Challenges[i].ID != b.Standings.Challenges[i].ID {
					t.Fatalf("read %d: challenge %d is %s, its standing %s", n, i, b.Challenges[i].ID, b.Standings.Challenges[i].ID)
				}
			}
		}
	}
}
