package ctf

import (
	"context"
	"fmt"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
)

// PutContest creates or replaces a contest's definition. Revealed and the
// creation time are kept from the stored contest; Revealed changes only by
// Unfreeze and Refreeze. It returns the stored contest and whether it is new.
func (s *Service) PutContest(ctx context.Context, c *contest.Contest) (contest.Contest, bool, error) {
	if err := c.Normalize(); err != nil {
		return contest.Contest{}, false, err
	}
	now := s.now()
	c.CreatedAt, c.UpdatedAt, c.Revealed = s.newCreatedAt(c.ID, now), now, false
	created := true
	if cur, err := s.store.LoadContest(ctx, c.ID); err != nil {
		return contest.Contest{}, false, err
	} else if cur != nil {
		created = false
		c.CreatedAt, c.Revealed = cur.CreatedAt, cur.Revealed
	}
	if err := s.store.PutContest(ctx, c); err != nil {
		return contest.Contest{}, false, err
	}
	s.publish(ctx, c.ID, 0)
	if err := s.syncOne(ctx, c.ID); err != nil {
		return contest.Contest{}, false, err
	}
	got, err := s.Contest(c.ID)
	return got, created, err
}

// Unfreeze reveals a contest's final standings: its public standings
// become the live ones. Before the contest's end it is ECodeConflict
// unless force is set (a reveal while teams still play is for good: they
// see the live board); unfreezing a revealed contest changes nothing.
func (s *Service) Unfreeze(ctx context.Context, id string, force bool) (contest.Contest, error) {
	return s.setRevealed(ctx, id, true, func(c *contest.Contest, now time.Time) error {
		if !force && now.Before(c.End) {
			return podium.Errorf(podium.ECodeConflict, "contest %q runs until %s: revealing now shows the live standings to everyone while teams still play; wait for the end, or send {\"force\": true} to reveal anyway",
				id, c.End.Format(time.RFC3339))
		}
		return nil
	})
}

// Refreeze undoes a reveal before the contest's end: the public
// standings are frozen again at the freeze time (or are the live ones
// until it comes). After the end it is ECodeConflict: the final standings
// were shown. Refreezing a contest that is not revealed changes nothing.
func (s *Service) Refreeze(ctx context.Context, id string) (contest.Contest, error) {
	return s.setRevealed(ctx, id, false, func(c *contest.Contest, now time.Time) error {
		if !now.Before(c.End) {
			return podium.Errorf(podium.ECodeConflict, "contest %q ended at %s and its final standings are public: it cannot be frozen again",
				id, c.End.Format(time.RFC3339))
		}
		return nil
	})
}

// setRevealed sets a contest's Revealed to to, when allow (called with
// the stored contest and the time, only when it would change) says so.
func (s *Service) setRevealed(ctx context.Context, id string, to bool, allow func(c *contest.Contest, now time.Time) error) (contest.Contest, error) {
	cur, err := s.store.LoadContest(ctx, id)
	if err != nil {
		return contest.Contest{}, err
	}
	if cur == nil {
		return contest.Contest{}, errNotFound(id)
	}
	if cur.Revealed != to {
		c := cur.Contest
		now := s.now()
		if err := allow(&c, now); err != nil {
			return contest.Contest{}, err
		}
		c.Revealed, c.UpdatedAt = to, now
		if err := s.store.PutContest(ctx, &c); err != nil {
			return contest.Contest{}, err
		}
		s.publish(ctx, id, 0)
	}
	if err := s.syncOne(ctx, id); err != nil {
		return contest.Contest{}, err
	}
	return s.Contest(id)
}

// PutChallenge creates or replaces a challenge of an existing contest. Its
// value changes at once for every solver (values are retroactive). It
// returns the stored challenge and whether it is new.
func (s *Service) PutChallenge(ctx context.Context, ch *contest.Challenge) (contest.Challenge, bool, error) {
	if err := ch.Normalize(); err != nil {
		return contest.Challenge{}, false, err
	}
	st, err := s.load(ctx, ch.Contest)
	if err != nil {
		return contest.Challenge{}, false, err
	}
	now := s.now()
	ch.CreatedAt, ch.UpdatedAt = now, now
	created := true
	st.mu.Lock()
	for _, c := range st.challenges {
		if c.ID == ch.ID {
			ch.CreatedAt, created = c.CreatedAt, false
		}
	}
	n := len(st.challenges)
	st.mu.Unlock()
	if created && n >= contest.MaxChallenges {
		return contest.Challenge{}, false, podium.Errorf(podium.ECodeUnprocessable, "a contest has at most %d challenges", contest.MaxChallenges)
	}
	if err := s.store.PutChallenge(ctx, ch); err != nil {
		return contest.Challenge{}, false, err
	}
	s.publish(ctx, ch.Contest, 0)
	if err := s.syncOne(ctx, ch.Contest); err != nil {
		return contest.Challenge{}, false, err
	}
	return *ch, created, nil
}

// syncOne brings one contest up to the database and tells the listeners.
func (s *Service) syncOne(ctx context.Context, id string) error {
	h, err := s.store.LoadContest(ctx, id)
	if err != nil {
		return err
	}
	if h == nil {
		return errNotFound(id)
	}
	st, err := s.get(id)
	if err != nil {
		// New here: Sync loads it.
		if err := s.Sync(ctx); err != nil {
			return err
		}
		return nil
	}
	if _, err := s.refresh(ctx, st, h); err != nil {
		return err
	}
	s.changed(id)
	return nil
}

// Outcome is the answer to an attempt: the logged attempt and, for a
// solve, the team's live standing and the challenge's value after it.
// Replayed says the attempt was logged by an earlier request with the
// same Idempotency-Key.
type Outcome struct {
	Attempt  contest.Attempt
	Standing *contest.Standing
	Value    int64
	Solves   int64
	Replayed bool
}

// Attempt records what a judge reports: team tried challenge, rightly or
// not. Every attempt on an existing contest goes to the audit log, in the
// transaction of its effect: a correct one is the team's solve of the
// challenge; a refused one is logged and changes nothing else. Refusals:
// an unknown challenge is ECodeNotFound, an attempt outside the contest's
// time ECodeUnprocessable, a correct attempt on a challenge the team has
// solved ECodeConflict. A missing contest is ECodeNotFound and logs
// nothing (there is no log to write to), nor does a malformed team or
// challenge id (ECodeInvalid).
//
// idem, when not empty, is the request's Idempotency-Key: an attempt that
// key (the API key id) logged with it before is answered again, whatever
// happened since (the contest ended, the team solved it), a refusal with
// the same refusal, and nothing is logged again; the same idem for
// another team, challenge or verdict is ECodeConflict.
func (s *Service) Attempt(ctx context.Context, id, team, challenge string, correct bool, key, idem string) (Outcome, error) {
	if err := podium.ValidPlayerID(team); err != nil {
		return Outcome{}, podium.Errorf(podium.ECodeInvalid, "team must be 1 to %d bytes of text", podium.MaxPlayerIDLen)
	}
	if !contest.ValidChallengeID(challenge) {
		return Outcome{}, podium.Errorf(podium.ECodeInvalid, "challenge id must match [a-z0-9][a-z0-9_.:-]{0,63}")
	}
	st, err := s.load(ctx, id)
	if err != nil {
		return Outcome{}, err
	}
	st.mu.Lock()
	known := st.has(challenge)
	st.mu.Unlock()
	if !known {
		// Made on another node since this one last looked? Look before
		// logging a refusal.
		if err := s.syncOne(ctx, id); err != nil {
			return Outcome{}, err
		}
		if st, err = s.get(id); err != nil {
			return Outcome{}, err
		}
	}

	st.wmu.Lock()
	defer st.wmu.Unlock()
	st.mu.Lock()
	after := st.seq()
	st.mu.Unlock()
	var (
		a        *contest.Attempt
		def      contest.Contest
		replayed bool
	)
	err = s.store.Attempt(ctx, id, after, contest.AttemptRef{Key: key, Idem: idem}, st.apply, func(last uint64, prior *contest.Attempt) (*contest.Attempt, error) {
		st.mu.Lock()
		cur, dup, known := st.seq(), st.solved[pair{team, challenge}], st.has(challenge)
		def = st.def
		st.mu.Unlock()
		if prior != nil {
			if prior.Team != team || prior.Challenge != challenge || prior.Correct != correct {
				return nil, podium.Errorf(podium.ECodeConflict, "this Idempotency-Key was used for another attempt (%s on %s, %s)", prior.Team, prior.Challenge, prior.Result)
			}
			a, replayed = prior, true
			return prior, nil
		}
		if last != cur {
			return nil, fmt.Errorf("ctf: contest %s: the database is at seq %d, this node at %d after catching up", id, last, cur)
		}
		at := s.now()
		a = &contest.Attempt{Contest: id, Challenge: challenge, Team: team, Result: contest.ResultWrong,
			At: podium.FromMillis(podium.Millis(at)), Key: key, Idem: idem, Correct: correct}
		switch {
		case !known:
			a.Result = contest.ResultUnknownChallenge
		case !def.Running(at):
			a.Result = contest.ResultClosed
		case correct && dup:
			a.Result = contest.ResultDuplicate
		case correct:
			a.Result, a.Seq = contest.ResultSolved, last+1
		}
		return a, nil
	})
	if err != nil {
		return Outcome{}, err
	}
	if contest.Refused(a.Result) {
		return Outcome{}, refusal(a, &def)
	}
	out := Outcome{Attempt: *a, Replayed: replayed}
	if a.Result == contest.ResultSolved {
		if !replayed {
			if err := st.apply(&contest.Solve{Contest: id, Seq: a.Seq, Challenge: challenge, Team: team, At: a.At}); err != nil {
				return Outcome{}, err
			}
			s.publish(ctx, id, a.Seq)
		}
		// The solver's standing from the live standings, without copying
		// them out: a solve's cost does not grow with the teams.
		ver, versioned := s.playersVersion()
		st.mu.Lock()
		l := s.liveFor(st, ver, versioned)
		out.Standing = l.Team(team)
		if cs, ok := l.Challenge(challenge); ok {
			out.Value, out.Solves = cs.Value, cs.Solves
		}
		st.mu.Unlock()
	}
	if !replayed {
		s.changed(id)
	}
	return out, nil
}

// refusal is the error of a refused attempt a of contest c.
func refusal(a *contest.Attempt, c *contest.Contest) error {
	switch a.Result {
	case contest.ResultUnknownChallenge:
		return podium.Errorf(podium.ECodeNotFound, "challenge %q is not part of contest %q", a.Challenge, c.ID)
	case contest.ResultDuplicate:
		return errSolved(a.Team, a.Challenge)
	}
	if a.At.Before(c.Start) {
		return podium.Errorf(podium.ECodeUnprocessable, "contest %q has not started: it starts at %s", c.ID, c.Start.Format(time.RFC3339))
	}
	return podium.Errorf(podium.ECodeUnprocessable, "contest %q has ended (at %s)", c.ID, c.End.Format(time.RFC3339))
}

func errSolved(team, challenge string) error {
	return podium.Errorf(podium.ECodeConflict, "team %q has already solved %q", team, challenge)
}

// has reports whether the contest has a challenge that is not hidden;
// the caller holds mu.
func (st *state) has(challenge string) bool {
	for i := range st.shown {
		if st.shown[i].ID == challenge {
			return true
		}
	}
	return false
}
