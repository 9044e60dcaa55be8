package storetest

import (
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
)

// runContestDeletes runs the contract of contest deletion and of refused
// attempts in the log (RunContests calls it).
func runContestDeletes(t *testing.T, open func(t *testing.T) contest.Store) {
	t.Run("DeleteContest", func(t *testing.T) { testDeleteContest(t, open(t)) })
	t.Run("DeleteChallenge", func(t *testing.T) { testDeleteChallenge(t, open(t)) })
	t.Run("AttemptRefused", func(t *testing.T) { testAttemptRefused(t, open(t)) })
}

func putChallenge(t *testing.T, s contest.Store, id, ch string) {
	t.Helper()
	c := &contest.Challenge{Contest: id, ID: ch, Scoring: contest.Scoring{Value: 100}, CreatedAt: cat(0), UpdatedAt: cat(0)}
	mustNormalize(t, c)
	if err := s.PutChallenge(ctx, c); err != nil {
		t.Fatalf("PutChallenge: %v", err)
	}
}

func testDeleteContest(t *testing.T, s contest.Store) {
	if ok, err := s.DeleteContest(ctx, "nope"); ok || err != nil {
		t.Fatalf("DeleteContest(missing) = %v, %v", ok, err)
	}
	for _, id := range []string{"ctf", "other"} {
		newContest(t, s, id)
		putChallenge(t, s, id, "web")
		if _, _, err := attempt(s, id, 0, "alice", "web", true, 10); err != nil {
			t.Fatal(err)
		}
		if _, _, err := attempt(s, id, 1, "bob", "web", false, 11); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutSnapshot(ctx, id, cat(20), 1, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := s.DeleteContest(ctx, "ctf"); !ok || err != nil {
		t.Fatalf("DeleteContest = %v, %v", ok, err)
	}
	if c, err := s.LoadContest(ctx, "ctf"); c != nil || err != nil {
		t.Fatalf("LoadContest after delete = %+v, %v", c, err)
	}
	// Made again under the same id, it starts empty: no challenge, solve,
	// attempt or snapshot of the old one comes back.
	newContest(t, s, "ctf")
	c, _ := s.LoadContest(ctx, "ctf")
	chals, _ := s.Challenges(ctx, "ctf")
	log, _ := s.Attempts(ctx, "ctf", 0, 10)
	times, _ := s.SnapshotTimes(ctx, "ctf")
	n := 0
	if err := s.Solves(ctx, "ctf", 0, func(*contest.Solve) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if c.Seq != 0 || len(chals) != 0 || len(log) != 0 || len(times) != 0 || n != 0 {
		t.Fatalf("recreated contest: seq %d, %d challenges, %d attempts, %d snapshots, %d solves", c.Seq, len(chals), len(log), len(times), n)
	}
	putChallenge(t, s, "ctf", "web")
	if a, _, err := attempt(s, "ctf", 0, "alice", "web", true, 30); err != nil || a.Seq != 1 {
		t.Fatalf("first solve of the recreated contest: %+v, %v; want seq 1", a, err)
	}
	// The other contest is untouched.
	log, _ = s.Attempts(ctx, "other", 0, 10)
	times, _ = s.SnapshotTimes(ctx, "other")
	if o, _ := s.LoadContest(ctx, "other"); o == nil || o.Seq != 1 || len(log) != 2 || len(times) != 1 {
		t.Fatalf("the other contest after a delete: %+v, %d attempts, %d snapshots", o, len(log), len(times))
	}
}

func testDeleteChallenge(t *testing.T, s contest.Store) {
	if err := s.DeleteChallenge(ctx, "nope", "web"); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Fatalf("DeleteChallenge on a missing contest = %v, want not_found", err)
	}
	newContest(t, s, "ctf")
	putChallenge(t, s, "ctf", "web")
	putChallenge(t, s, "ctf", "pwn")
	if err := s.DeleteChallenge(ctx, "ctf", "rev"); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Fatalf("DeleteChallenge(missing) = %v, want not_found", err)
	}
	if _, _, err := attempt(s, "ctf", 0, "alice", "web", true, 10); err != nil {
		t.Fatal(err)
	}
	if _, _, err := attempt(s, "ctf", 1, "alice", "pwn", false, 11); err != nil {
		t.Fatal(err)
	}
	before, _ := s.LoadContest(ctx, "ctf")
	if err := s.DeleteChallenge(ctx, "ctf", "web"); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("DeleteChallenge(solved) = %v, want conflict", err)
	}
	if c, _ := s.LoadContest(ctx, "ctf"); c.Version != before.Version {
		t.Fatalf("a refused delete moved the version %d -> %d", before.Version, c.Version)
	}
	if err := s.DeleteChallenge(ctx, "ctf", "pwn"); err != nil {
		t.Fatalf("DeleteChallenge: %v", err)
	}
	chals, _ := s.Challenges(ctx, "ctf")
	log, _ := s.Attempts(ctx, "ctf", 0, 10)
	c, _ := s.LoadContest(ctx, "ctf")
	if len(chals) != 1 || chals[0].ID != "web" || c.Version <= before.Version || len(log) != 2 {
		t.Fatalf("after delete: challenges %+v, version %d (was %d), %d attempts (the log keeps them)", chals, c.Version, before.Version, len(log))
	}
}

func testAttemptRefused(t *testing.T, s contest.Store) {
	newContest(t, s, "ctf")
	for i, res := range []string{contest.ResultDuplicate, contest.ResultUnknownChallenge, contest.ResultClosed} {
		err := s.Attempt(ctx, "ctf", 0, contest.AttemptRef{Key: "k1", Idem: res}, func(*contest.Solve) error { return nil },
			func(last uint64, prior *contest.Attempt) (*contest.Attempt, error) {
				return &contest.Attempt{Challenge: "web", Team: "alice", Result: res, At: cat(int64(i)), Key: "k1", Idem: res, Correct: i != 1, Seq: 7}, nil
			})
		if err != nil {
			t.Fatalf("refused attempt %s: %v", res, err)
		}
	}
	log, err := s.Attempts(ctx, "ctf", 0, 10)
	if err != nil || len(log) != 3 {
		t.Fatalf("Attempts = %+v, %v", log, err)
	}
	for i, a := range log {
		if !contest.Refused(a.Result) || a.Seq != 0 || a.Correct != (i != 1) {
			t.Fatalf("logged refusal %+v", a)
		}
	}
	if c, _ := s.LoadContest(ctx, "ctf"); c.Seq != 0 {
		t.Fatalf("a refusal moved the seq to %d", c.Seq)
	}
	var prior *contest.Attempt
	s.Attempt(ctx, "ctf", 0, contest.AttemptRef{Key: "k1", Idem: contest.ResultClosed}, func(*contest.Solve) error { return nil },
		func(last uint64, p *contest.Attempt) (*contest.Attempt, error) { prior = p; return p, nil })
	if prior == nil || prior.Result != contest.ResultClosed || !prior.Correct {
		t.Fatalf("retry of a refusal: prior %+v", prior)
	}
}
