package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
)

// RunContests runs the contract of contest.Store against the stores that
// open returns (new and empty, closed when t ends).
func RunContests(t *testing.T, open func(t *testing.T) contest.Store) {
	t.Run("Contests", func(t *testing.T) { testContests(t, open(t)) })
	t.Run("Challenges", func(t *testing.T) { testChallenges(t, open(t)) })
	t.Run("Attempt", func(t *testing.T) { testAttempt(t, open(t)) })
	t.Run("AttemptIdempotency", func(t *testing.T) { testAttemptIdempotency(t, open(t)) })
	t.Run("AttemptConcurrent", func(t *testing.T) { testAttemptConcurrent(t, open(t)) })
	t.Run("Snapshots", func(t *testing.T) { testSnapshots(t, open(t)) })
	runContestDeletes(t, open)
}

// cat is at(ms) as stores keep it, to the millisecond.
func cat(ms int64) time.Time { return at(ms).Truncate(time.Millisecond) }

func newContest(t *testing.T, s contest.Store, id string) *contest.Contest {
	t.Helper()
	freeze := cat(3600_000)
	c := &contest.Contest{ID: id, Title: "Finals", Start: cat(0), End: cat(7200_000), Freeze: &freeze,
		FirstBlood: [3]int64{10, 5, 3}, Public: true, CreatedAt: cat(0), UpdatedAt: cat(0)}
	mustNormalize(t, c)
	if err := s.PutContest(ctx, c); err != nil {
		t.Fatalf("PutContest: %v", err)
	}
	return c
}

func testContests(t *testing.T, s contest.Store) {
	if c, err := s.LoadContest(ctx, "nope"); err != nil || c != nil {
		t.Fatalf("LoadContest(missing) = %v, %v", c, err)
	}
	c := newContest(t, s, "ctf:b")
	newContest(t, s, "ctf:a")
	got, err := s.LoadContest(ctx, "ctf:b")
	if err != nil || got == nil {
		t.Fatalf("LoadContest: %v, %v", got, err)
	}
	if got.Title != "Finals" || !got.Start.Equal(c.Start) || !got.End.Equal(c.End) || got.Freeze == nil ||
		!got.Freeze.Equal(*c.Freeze) || got.FirstBlood != c.FirstBlood || !got.Public || got.Revealed ||
		string(got.Meta) != "{}" || !got.CreatedAt.Equal(c.CreatedAt) || got.Seq != 0 {
		t.Fatalf("LoadContest = %+v, want %+v", got, c)
	}
	v1 := got.Version
	c.Revealed, c.Freeze, c.Meta, c.UpdatedAt = true, nil, []byte(`{"x":1}`), cat(5000)
	if err := s.PutContest(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, _ = s.LoadContest(ctx, "ctf:b")
	if !got.Revealed || got.Freeze != nil || string(got.Meta) != `{"x":1}` || got.Version <= v1 || !got.UpdatedAt.Equal(cat(5000)) {
		t.Fatalf("after update: %+v (version was %d)", got, v1)
	}
	all, err := s.Contests(ctx)
	if err != nil || len(all) != 2 || all[0].ID != "ctf:a" || all[1].ID != "ctf:b" {
		t.Fatalf("Contests = %+v, %v", all, err)
	}
}

func testChallenges(t *testing.T, s contest.Store) {
	ch := &contest.Challenge{Contest: "ctf", ID: "web", Name: "Web 1", Category: "web",
		Scoring: contest.Scoring{Function: contest.GZCTF, Value: 1000, MinRate: 0.1 + 0.2, Difficulty: 4.7}, CreatedAt: cat(0), UpdatedAt: cat(0)}
	mustNormalize(t, ch)
	if err := s.PutChallenge(ctx, ch); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Fatalf("PutChallenge on a missing contest = %v, want not_found", err)
	}
	newContest(t, s, "ctf")
	before, _ := s.LoadContest(ctx, "ctf")
	if err := s.PutChallenge(ctx, ch); err != nil {
		t.Fatal(err)
	}
	pwn := &contest.Challenge{Contest: "ctf", ID: "pwn", Scoring: contest.Scoring{Value: 300}, Order: -1, CreatedAt: cat(1), UpdatedAt: cat(1)}
	mustNormalize(t, pwn)
	if err := s.PutChallenge(ctx, pwn); err != nil {
		t.Fatal(err)
	}
	after, _ := s.LoadContest(ctx, "ctf")
	if after.Version <= before.Version {
		t.Errorf("contest version %d -> %d: a challenge change must move it on", before.Version, after.Version)
	}
	list, err := s.Challenges(ctx, "ctf")
	if err != nil || len(list) != 2 {
		t.Fatalf("Challenges = %+v, %v", list, err)
	}
	if list[0].ID != "pwn" || list[1].ID != "web" {
		t.Fatalf("Challenges order %s, %s: want pwn (order -1) first", list[0].ID, list[1].ID)
	}
	if w := list[1]; w.Scoring != ch.Scoring || w.Name != "Web 1" || w.Category != "web" || w.Contest != "ctf" || !w.CreatedAt.Equal(cat(0)) {
		t.Fatalf("web = %+v, want %+v (floats kept exactly)", w, ch)
	}
	ch.Scoring.Value = 500
	if err := s.PutChallenge(ctx, ch); err != nil {
		t.Fatal(err)
	}
	list, _ = s.Challenges(ctx, "ctf")
	if len(list) != 2 || list[1].Scoring.Value != 500 {
		t.Fatalf("after update: %+v", list)
	}
	if other, err := s.Challenges(ctx, "other"); err != nil || len(other) != 0 {
		t.Fatalf("Challenges(other) = %+v, %v", other, err)
	}
}

// attempt records one attempt the way the service does: it catches up
// from seen, then decides. It returns the solves it caught up with.
func attempt(s contest.Store, id string, seen uint64, team, ch string, correct bool, ms int64) (*contest.Attempt, []uint64, error) {
	var caught []uint64
	var a *contest.Attempt
	err := s.Attempt(ctx, id, seen, contest.AttemptRef{}, func(sv *contest.Solve) error {
		caught = append(caught, sv.Seq)
		return nil
	}, func(last uint64, _ *contest.Attempt) (*contest.Attempt, error) {
		a = &contest.Attempt{Contest: id, Challenge: ch, Team: team, Result: contest.ResultWrong, At: cat(ms), Key: "k1"}
		if correct {
			a.Result, a.Seq = contest.ResultSolved, last+1
		}
		return a, nil
	})
	return a, caught, err
}

func testAttempt(t *testing.T, s contest.Store) {
	if _, _, err := attempt(s, "nope", 0, "a", "web", true, 1); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Fatalf("Attempt on a missing contest = %v, want not_found", err)
	}
	newContest(t, s, "ctf")
	w, _, err := attempt(s, "ctf", 0, "alice", "web", false, 10)
	if err != nil || w.ID == 0 || w.Seq != 0 {
		t.Fatalf("wrong attempt: %+v, %v", w, err)
	}
	a1, caught, err := attempt(s, "ctf", 0, "alice", "web", true, 20)
	if err != nil || a1.Seq != 1 || a1.ID <= w.ID || len(caught) != 0 {
		t.Fatalf("first solve: %+v, caught %v, %v", a1, caught, err)
	}
	a2, caught, err := attempt(s, "ctf", 1, "bob", "web", true, 30)
	if err != nil || a2.Seq != 2 || len(caught) != 0 {
		t.Fatalf("second solve: %+v, caught %v, %v", a2, caught, err)
	}
	// A writer that had seen nothing catches up with both solves first.
	a3, caught, err := attempt(s, "ctf", 0, "bob", "pwn", true, 40)
	if err != nil || a3.Seq != 3 || fmt.Sprint(caught) != "[1 2]" {
		t.Fatalf("third solve: %+v, caught %v, %v", a3, caught, err)
	}
	// A second solve of alice on web is a conflict, and stores nothing.
	if _, _, err := attempt(s, "ctf", 3, "alice", "web", true, 50); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("duplicate solve = %v, want conflict", err)
	}
	// An error of decide stores nothing.
	boom := errors.New("boom")
	if err := s.Attempt(ctx, "ctf", 3, contest.AttemptRef{}, func(*contest.Solve) error { return nil },
		func(uint64, *contest.Attempt) (*contest.Attempt, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("Attempt with a failing decide = %v", err)
	}
	// A seq that does not follow the last is refused.
	if err := s.Attempt(ctx, "ctf", 3, contest.AttemptRef{}, func(*contest.Solve) error { return nil }, func(last uint64, _ *contest.Attempt) (*contest.Attempt, error) {
		return &contest.Attempt{Challenge: "x", Team: "t", Result: contest.ResultSolved, Seq: last + 2, At: cat(60), Key: "k"}, nil
	}); err == nil {
		t.Fatal("a solve with a gap in seq was stored")
	}
	var got []string
	if err := s.Solves(ctx, "ctf", 1, func(sv *contest.Solve) error {
		got = append(got, fmt.Sprintf("%d:%s:%s:%d", sv.Seq, sv.Team, sv.Challenge, sv.At.Sub(cat(0)).Milliseconds()))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[2:bob:web:30 3:bob:pwn:40]" {
		t.Fatalf("Solves after 1 = %v", got)
	}
	if c, _ := s.LoadContest(ctx, "ctf"); c.Seq != 3 {
		t.Fatalf("contest seq %d, want 3", c.Seq)
	}
	log, err := s.Attempts(ctx, "ctf", 0, 100)
	if err != nil || len(log) != 4 {
		t.Fatalf("Attempts = %+v, %v; want the 4 stored", log, err)
	}
	if l := log[0]; l.Result != contest.ResultWrong || l.Team != "alice" || l.Challenge != "web" || l.Key != "k1" || !l.At.Equal(cat(10)) || l.Seq != 0 {
		t.Fatalf("first attempt %+v", l)
	}
	if l := log[3]; l.Result != contest.ResultSolved || l.Seq != 3 {
		t.Fatalf("last attempt %+v", l)
	}
	page, err := s.Attempts(ctx, "ctf", log[1].ID, 1)
	if err != nil || len(page) != 1 || page[0].ID != log[2].ID {
		t.Fatalf("Attempts page = %+v, %v", page, err)
	}
	if none, err := s.Attempts(ctx, "other", 0, 10); err != nil || none == nil || len(none) != 0 {
		t.Fatalf("Attempts(other) = %#v, %v; want an empty list", none, err)
	}
	stop := errors.New("stop")
	if err := s.Solves(ctx, "ctf", 0, func(*contest.Solve) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("Solves returned %v, want the callback's error", err)
	}
}

// Writers that each keep their own view take turns: every solve gets the
// next seq, each writer catches up with exactly the solves it had not
// seen, in order, and no team solves a challenge twice.
func testAttemptConcurrent(t *testing.T, s contest.Store) {
	newContest(t, s, "ctf")
	const writers, each = 6, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var seen uint64
			solved := map[string]bool{}
			for i := range each {
				// Every writer tries the same team/challenge pairs: only
				// the first of each is a solve.
				team, ch := fmt.Sprintf("t%d", i%4), fmt.Sprintf("c%d", i)
				err := s.Attempt(ctx, "ctf", seen, contest.AttemptRef{}, func(sv *contest.Solve) error {
					if sv.Seq != seen+1 {
						return fmt.Errorf("writer %d caught up with %d after %d", w, sv.Seq, seen)
					}
					seen = sv.Seq
					solved[sv.Team+"/"+sv.Challenge] = true
					return nil
				}, func(last uint64, _ *contest.Attempt) (*contest.Attempt, error) {
					if last != seen {
						return nil, fmt.Errorf("writer %d: last %d but caught up to %d", w, last, seen)
					}
					if solved[team+"/"+ch] {
						return nil, podium.Errorf(podium.ECodeConflict, "already solved")
					}
					return &contest.Attempt{Challenge: ch, Team: team, Result: contest.ResultSolved, Seq: last + 1,
						At: cat(int64(i)), Key: "k"}, nil
				})
				switch {
				case err == nil:
					seen++
					solved[team+"/"+ch] = true
				case podium.ErrorCode(err) == podium.ECodeConflict:
				default:
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var seqs []uint64
	pairs := map[string]bool{}
	if err := s.Solves(ctx, "ctf", 0, func(sv *contest.Solve) error {
		seqs = append(seqs, sv.Seq)
		if pairs[sv.Team+"/"+sv.Challenge] {
			return fmt.Errorf("%s solved %s twice", sv.Team, sv.Challenge)
		}
		pairs[sv.Team+"/"+sv.Challenge] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seqs) != each {
		t.Fatalf("%d solves, want %d (one per pair)", len(seqs), each)
	}
	for i, q := range seqs {
		if q != uint64(i+1) {
			t.Fatalf("seqs %v have a gap", seqs)
		}
	}
}

func testSnapshots(t *testing.T, s contest.Store) {
	newContest(t, s, "ctf")
	if _, ok, err := s.SnapshotAt(ctx, "ctf", cat(1e9)); ok || err != nil {
		t.Fatalf("SnapshotAt with none = %v, %v", ok, err)
	}
	stored, err := s.PutSnapshot(ctx, "ctf", cat(300_000), 4, []byte(`{"n":1}`))
	if err != nil || !stored {
		t.Fatalf("PutSnapshot = %v, %v", stored, err)
	}
	// The same snapshot from another node is kept once, first one wins.
	stored, err = s.PutSnapshot(ctx, "ctf", cat(300_000), 5, []byte(`{"n":2}`))
	if err != nil || stored {
		t.Fatalf("second PutSnapshot = %v, %v; want kept once", stored, err)
	}
	if _, err := s.PutSnapshot(ctx, "ctf", cat(600_000), 9, []byte(`{"n":3}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSnapshot(ctx, "other", cat(450_000), 1, []byte(`{"other":1}`)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ms   int64
		want string
		seq  uint64
		at   int64
	}{{300_000, `{"n":1}`, 4, 300_000}, {599_999, `{"n":1}`, 4, 300_000}, {600_000, `{"n":3}`, 9, 600_000}, {1e9, `{"n":3}`, 9, 600_000}} {
		snap, ok, err := s.SnapshotAt(ctx, "ctf", cat(c.ms))
		if err != nil || !ok || !bytes.Equal(snap.Doc, []byte(c.want)) || snap.Seq != c.seq || !snap.At.Equal(cat(c.at)) {
			t.Fatalf("SnapshotAt(%d) = %+v %s, %v, %v; want %s", c.ms, snap, snap.Doc, ok, err, c.want)
		}
	}
	if _, ok, _ := s.SnapshotAt(ctx, "ctf", cat(299_999)); ok {
		t.Fatal("SnapshotAt before the first found one")
	}
	times, err := s.SnapshotTimes(ctx, "ctf")
	if err != nil || len(times) != 2 || !times[0].Equal(cat(300_000)) {
		t.Fatalf("SnapshotTimes = %v, %v", times, err)
	}
}

// An attempt logged with an Idempotency-Key is handed to decide as prior
// when the same key id sends the same Idempotency-Key again; returning it
// stores nothing. Another key id, or another Idempotency-Key, finds none.
func testAttemptIdempotency(t *testing.T, s contest.Store) {
	newContest(t, s, "ctf")
	ref := contest.AttemptRef{Key: "k1", Idem: "retry-1"}
	try := func(ref contest.AttemptRef, correct bool) (prior, got *contest.Attempt, err error) {
		err = s.Attempt(ctx, "ctf", 0, ref, func(*contest.Solve) error { return nil }, func(last uint64, p *contest.Attempt) (*contest.Attempt, error) {
			prior = p
			if p != nil {
				got = p
				return p, nil
			}
			got = &contest.Attempt{Challenge: "web", Team: "alice", Result: contest.ResultWrong, At: cat(10), Key: ref.Key, Idem: ref.Idem}
			if correct {
				got.Result, got.Seq = contest.ResultSolved, last+1
			}
			return got, nil
		})
		return prior, got, err
	}
	prior, first, err := try(ref, true)
	if err != nil || prior != nil || first.ID == 0 || first.Seq != 1 {
		t.Fatalf("first attempt: prior %+v, got %+v, %v", prior, first, err)
	}
	prior, _, err = try(ref, true)
	if err != nil || prior == nil || prior.ID != first.ID || prior.Seq != 1 || prior.Team != "alice" || prior.Result != contest.ResultSolved ||
		prior.Idem != "retry-1" || prior.Key != "k1" || !prior.At.Equal(cat(10)) {
		t.Fatalf("retry: prior %+v, %v; want the first attempt", prior, err)
	}
	for _, other := range []contest.AttemptRef{{Key: "k2", Idem: "retry-1"}, {Key: "k1", Idem: "retry-2"}} {
		if prior, _, err := try(other, false); err != nil || prior != nil {
			t.Fatalf("%+v: prior %+v, %v; want none", other, prior, err)
		}
	}
	log, err := s.Attempts(ctx, "ctf", 0, 10)
	if err != nil || len(log) != 3 {
		t.Fatalf("Attempts = %+v, %v; want 3 (the retry stored nothing)", log, err)
	}
	if log[0].Idem != "retry-1" || log[1].Idem != "retry-1" || log[2].Idem != "retry-2" {
		t.Fatalf("idempotency keys %q %q %q", log[0].Idem, log[1].Idem, log[2].Idem)
	}
	if c, _ := s.LoadContest(ctx, "ctf"); c.Seq != 1 {
		t.Fatalf("contest seq %d, want 1", c.Seq)
	}
}
