package ctf

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
)

// View is what a reader may see of a contest.
type View int

const (
	// Public is what everyone sees: after the freeze and until the
	// contest is revealed, the standings as they were at the freeze.
	Public View = iota
	// Live is what admins see, and a team of its own standing: every
	// solve, now.
	Live
)

// Board is a contest's standings as one view sees them. Standings is
// shared with other readers: it must not be modified.
type Board struct {
	Contest    contest.Contest
	Challenges []contest.Challenge
	Standings  *contest.Standings
	// Frozen says the public view stopped at the freeze (Standings.Cutoff).
	Frozen bool
}

// Standings returns a contest's standings in a view.
func (s *Service) Standings(id string, view View) (*Board, error) {
	st, err := s.get(id)
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	def := st.def
	st.mu.Unlock()
	var cutoff time.Time
	if view == Public {
		cutoff = def.FrozenAt(s.now())
	}
	// The challenges are those the standings were computed with: its
	// Challenges follow them index for index, also while a challenge is
	// added or deleted.
	res, chals := s.standingsWith(st, cutoff)
	return &Board{Contest: def, Challenges: chals, Standings: res, Frozen: !cutoff.IsZero()}, nil
}

// StandingsAt returns a contest's standings with the solves made before
// cutoff (zero: every solve), as the public view shows them once frozen
// at cutoff: what a webhook reports of a contest's freeze.
func (s *Service) StandingsAt(id string, cutoff time.Time) (*Board, error) {
	st, err := s.get(id)
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	def := st.def
	st.mu.Unlock()
	res, chals := s.standingsWith(st, cutoff)
	return &Board{Contest: def, Challenges: chals, Standings: res, Frozen: !cutoff.IsZero()}, nil
}

// standingsWith computes (or takes from the cache) st's standings with
// the solves before cutoff (zero: all), with the challenges they were
// computed with (a copy).
func (s *Service) standingsWith(st *state, cutoff time.Time) (*contest.Standings, []contest.Challenge) {
	key := int64(0)
	if !cutoff.IsZero() {
		key = podium.Millis(cutoff)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	ver, versioned := s.playersVersion()
	if key == 0 {
		// The live standings: copied out of st.live, which solves keep
		// up to date; the copy is shared until the next change.
		l := s.liveFor(st, ver, versioned)
		c := st.cache[0]
		if c == nil {
			c = &cached{standings: l.Standings(), challenges: st.shown}
			st.cache[0] = c
		}
		return c.standings, slices.Clone(c.challenges)
	}
	c := st.cache[key]
	if c != nil && versioned && c.checked && c.ver == ver {
		return c.standings, slices.Clone(c.challenges)
	}
	hidden := s.hiddenTeams(st)
	if c != nil && slices.Equal(c.hidden, hidden) {
		c.ver, c.checked = ver, versioned
		return c.standings, slices.Clone(c.challenges)
	}
	res := st.compute(cutoff, hidden)
	if len(st.cache) >= 16 {
		clear(st.cache)
	}
	st.cache[key] = &cached{standings: res, hidden: hidden, challenges: st.shown, ver: ver, checked: versioned}
	return res, slices.Clone(st.shown)
}

// playersVersion returns the players' version, and false if Players
// keeps none. Read it before the hidden teams: a change after it moves it.
func (s *Service) playersVersion() (uint64, bool) {
	if pv, ok := s.players.(playersVersion); ok {
		return pv.PlayersVersion(), true
	}
	return 0, false
}

// liveFor returns st's live standings, built anew when there are none or
// when the hidden teams changed since they were built; the caller holds
// st.mu. With the players' version unchanged since the last look, it
// costs O(1); otherwise one pass over the teams.
func (s *Service) liveFor(st *state, ver uint64, versioned bool) *contest.Live {
	if st.live != nil && versioned && st.liveChecked && st.liveVer == ver {
		return st.live
	}
	if st.live == nil || !st.live.HiddenAre(s.hiddenTeams(st)) {
		st.live = contest.NewLive(&st.def, st.shown, st.solves, s.isHidden)
		delete(st.cache, 0)
	}
	st.liveVer, st.liveChecked = ver, versioned
	return st.live
}

// isHidden reports whether team is a hidden player now.
func (s *Service) isHidden(team string) bool {
	p, err := s.players.Player(team)
	return err == nil && p.Hidden
}

// compute runs the reducer over st; the caller holds mu.
func (st *state) compute(cutoff time.Time, hidden []string) *contest.Standings {
	return contest.Compute(contest.Input{Contest: &st.def, Challenges: st.shown, Solves: st.solves, Cutoff: cutoff,
		Hidden: func(t string) bool { _, ok := slices.BinarySearch(hidden, t); return ok }})
}

// hiddenTeams lists, sorted, the teams of st that are hidden players now;
// the caller holds st.mu.
func (s *Service) hiddenTeams(st *state) []string {
	var out []string
	for _, t := range st.teams {
		if s.isHidden(t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// Attempts returns up to limit entries of a contest's audit log after id
// after, oldest first.
func (s *Service) Attempts(ctx context.Context, id string, after int64, limit int) ([]contest.Attempt, error) {
	if _, err := s.get(id); err != nil {
		return nil, err
	}
	return s.store.Attempts(ctx, id, after, limit)
}

// Point is one step of a team's score over time.
type Point struct {
	At    time.Time
	Score int64
}

// Series is a team's score over time: its score after each of its
// scoring solves, every solve valued as it is now (as CTFd draws it).
type Series struct {
	Team   string
	Points []Point
}

// Chart returns the score-over-time series of the top teams of a view's
// standings, in standings order.
func Chart(b *Board, top int) []Series {
	var out []Series
	for i := range b.Standings.Teams {
		t := &b.Standings.Teams[i]
		if t.Hidden {
			continue
		}
		if len(out) == top {
			break
		}
		sr := Series{Team: t.Team}
		var sum int64
		awards := slices.Clone(t.Awards)
		slices.SortFunc(awards, func(a, b contest.Award) int { return cmp.Compare(a.Seq, b.Seq) })
		for _, a := range awards {
			if a.Points == 0 {
				continue
			}
			sum += a.Points
			sr.Points = append(sr.Points, Point{At: a.At, Score: sum})
		}
		out = append(out, sr)
	}
	return out
}

// AttemptFilter selects entries of a contest's audit log; zero fields
// select all.
type AttemptFilter struct {
	Team      string
	Challenge string
	Correct   *bool // the judge's verdict
}

func (f *AttemptFilter) match(a *contest.Attempt) bool {
	return (f.Team == "" || a.Team == f.Team) && (f.Challenge == "" || a.Challenge == f.Challenge) &&
		(f.Correct == nil || a.Correct == *f.Correct)
}

// MaxAttemptScan bounds the entries of the audit log that one filtered
// read looks at, so that a filter matching nothing costs a bounded read.
const MaxAttemptScan = 10000

// FilterAttempts returns up to limit entries of a contest's audit log
// after id after that match f, oldest first, and the id of the last entry
// it looked at: the after of the next read. With a filter it looks at no
// more than MaxAttemptScan entries, so a page may hold fewer than limit
// while more follow; the log is read to its end when next == after.
func (s *Service) FilterAttempts(ctx context.Context, id string, after int64, limit int, f AttemptFilter) ([]contest.Attempt, int64, error) {
	if f == (AttemptFilter{}) {
		list, err := s.Attempts(ctx, id, after, limit)
		if err != nil {
			return nil, after, err
		}
		if len(list) > 0 {
			after = list[len(list)-1].ID
		}
		return list, after, nil
	}
	out := []contest.Attempt{}
	for scanned := 0; scanned < MaxAttemptScan; {
		want := min(1000, MaxAttemptScan-scanned)
		page, err := s.Attempts(ctx, id, after, want)
		if err != nil {
			return nil, after, err
		}
		for i := range page {
			after = page[i].ID
			if f.match(&page[i]) {
				out = append(out, page[i])
				if len(out) == limit {
					return out, after, nil
				}
			}
		}
		scanned += len(page)
		if len(page) < want {
			break
		}
	}
	return out, after, nil
}
