package ctf

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
)

// ChallengePatch is a change of a challenge, as PUT sends it: a nil field
// keeps the stored value (a new challenge starts from the defaults: name
// = id, static scoring worth 0, shown).
type ChallengePatch struct {
	Name     *string
	Category *string
	Order    *int64
	Hidden   *bool
	Scoring  *ScoringPatch
}

// ScoringPatch changes a challenge's scoring. With Function set, it is
// the whole new scoring (the parameters left out are zero: another
// function takes other parameters); without, the fields set replace
// those of the stored scoring.
type ScoringPatch struct {
	Function            *string
	Value, Minimum      *int64
	Decay               *int64
	MinRate, Difficulty *float64
}

// apply returns ch changed by p.
func (p *ChallengePatch) apply(ch contest.Challenge) contest.Challenge {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&ch.Name, p.Name)
	set(&ch.Category, p.Category)
	if p.Order != nil {
		ch.Order = *p.Order
	}
	if p.Hidden != nil {
		ch.Hidden = *p.Hidden
	}
	if sp := p.Scoring; sp != nil {
		if sp.Function != nil {
			ch.Scoring = contest.Scoring{Function: *sp.Function}
		}
		for _, f := range []struct {
			dst *int64
			v   *int64
		}{{&ch.Scoring.Value, sp.Value}, {&ch.Scoring.Minimum, sp.Minimum}, {&ch.Scoring.Decay, sp.Decay}} {
			if f.v != nil {
				*f.dst = *f.v
			}
		}
		if sp.MinRate != nil {
			ch.Scoring.MinRate = *sp.MinRate
		}
		if sp.Difficulty != nil {
			ch.Scoring.Difficulty = *sp.Difficulty
		}
	}
	return ch
}

// Mode says what PatchChallenge does with a change that moves the
// standings.
type Mode int

const (
	// Guarded applies a change unless it moves the standings (its
	// scoring or hidden flag changes and it has solves): that one is
	// ECodeConflict, with what it would do in the message.
	Guarded Mode = iota
	// Confirmed applies the change whatever it does.
	Confirmed
	// Preview computes what the change would do and stores nothing.
	Preview
)

// Impact is what a change of a challenge does to the live standings
// (every solve, now; hidden teams included, unranked). Values are nil
// where the challenge is hidden (it counts for nothing).
type Impact struct {
	Old, New contest.Challenge // Old is zero for a new challenge
	Created  bool
	// Solves is the number of solves of the challenge, by any team.
	Solves int
	// Moves says the change reaches the standings: its scoring or hidden
	// flag changes and it has solves.
	Moves              bool
	OldValue, NewValue *int64
	// Teams are the teams whose score or rank changes, in the new
	// standings' order.
	Teams []TeamChange
}

// TeamChange is one team's line before and after a change; a rank is 0
// for a hidden team.
type TeamChange struct {
	Team               string
	Hidden             bool
	OldScore, NewScore int64
	OldRank, NewRank   int
}

// PatchChallenge changes challenge chID of contest id by p (creating it
// when new) under mode, and returns the challenge stored (or, for
// Preview, the one it would store), whether it is new, and what the
// change does to the standings. A change that moves the standings is
// ECodeConflict under Guarded. A missing contest is ECodeNotFound, a
// patch that leaves an invalid challenge ECodeInvalid.
func (s *Service) PatchChallenge(ctx context.Context, id, chID string, p *ChallengePatch, mode Mode) (contest.Challenge, *Impact, error) {
	st, err := s.load(ctx, id)
	if err != nil {
		return contest.Challenge{}, nil, err
	}
	st.mu.Lock()
	im := &Impact{Created: true}
	base := contest.Challenge{Contest: id, ID: chID}
	for _, c := range st.challenges {
		if c.ID == chID {
			base, im.Old, im.Created = c, c, false
		}
	}
	ch := p.apply(base)
	if err := ch.Normalize(); err != nil {
		st.mu.Unlock()
		return contest.Challenge{}, nil, err
	}
	im.New = ch
	for i := range st.solves {
		if st.solves[i].Challenge == chID {
			im.Solves++
		}
	}
	im.Moves = !im.Created && im.Solves > 0 && (ch.Scoring != im.Old.Scoring || ch.Hidden != im.Old.Hidden)
	if im.Moves || mode == Preview {
		s.impact(st, im)
	}
	st.mu.Unlock()
	switch {
	case mode == Preview:
		return ch, im, nil
	case im.Moves && mode == Guarded:
		return contest.Challenge{}, im, podium.Errorf(podium.ECodeConflict, "%s", im.describe())
	}
	out, _, err := s.PutChallenge(ctx, &ch)
	return out, im, err
}

// impact fills in the values and team changes of im, computing the live
// standings with the old and the new challenge; the caller holds st.mu.
func (s *Service) impact(st *state, im *Impact) {
	hidden := s.hiddenTeams(st)
	isHidden := func(t string) bool { _, ok := slices.BinarySearch(hidden, t); return ok }
	chals := slices.Clone(st.challenges)
	if i := slices.IndexFunc(chals, func(c contest.Challenge) bool { return c.ID == im.New.ID }); i >= 0 {
		chals[i] = im.New
	} else {
		chals = append(chals, im.New)
	}
	before := contest.Compute(contest.Input{Contest: &st.def, Challenges: st.shown, Solves: st.solves, Hidden: isHidden})
	after := contest.Compute(contest.Input{Contest: &st.def, Challenges: contest.Visible(chals), Solves: st.solves, Hidden: isHidden})
	value := func(s *contest.Standings) *int64 {
		for _, c := range s.Challenges {
			if c.ID == im.New.ID {
				v := c.Value
				return &v
			}
		}
		return nil
	}
	im.OldValue, im.NewValue = value(before), value(after)
	if im.Created {
		im.OldValue = nil
	}
	for i := range after.Teams {
		n := &after.Teams[i]
		tc := TeamChange{Team: n.Team, Hidden: n.Hidden, NewScore: n.Score, NewRank: n.Rank}
		if o := before.Team(n.Team); o != nil {
			tc.OldScore, tc.OldRank = o.Score, o.Rank
		}
		if tc.OldScore != tc.NewScore || tc.OldRank != tc.NewRank {
			im.Teams = append(im.Teams, tc)
		}
	}
}

// describe says in a sentence what a change that moves the standings
// does.
func (im *Impact) describe() string {
	var b strings.Builder
	val := func(v *int64) string {
		if v == nil {
			return "nothing (hidden)"
		}
		return fmt.Sprint(*v)
	}
	fmt.Fprintf(&b, "challenge %q has %d solves and values are retroactive: ", im.New.ID, im.Solves)
	switch {
	case im.New.Hidden && !im.Old.Hidden:
		b.WriteString("hiding it takes its points from every solver")
	case !im.New.Hidden && im.Old.Hidden:
		b.WriteString("showing it gives its points to every solver")
	default:
		fmt.Fprintf(&b, "its value goes from %s to %s for every solver", val(im.OldValue), val(im.NewValue))
	}
	fmt.Fprintf(&b, "; %d teams' scores or ranks change", len(im.Teams))
	var moves []string
	for _, t := range im.Teams {
		if len(moves) == 3 {
			moves = append(moves, fmt.Sprintf("and %d more", len(im.Teams)-3))
			break
		}
		moves = append(moves, fmt.Sprintf("%s %d \u2192 %d", t.Team, t.OldScore, t.NewScore))
	}
	if len(moves) > 0 {
		b.WriteString(" (" + strings.Join(moves, ", ") + ")")
	}
	b.WriteString(". Send it again with ?confirm=true to apply it, or with ?preview=true to see the standings it gives")
	return b.String()
}
