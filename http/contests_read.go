package http

import (
	"net/http"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/ctf"
)

// Reads of contests. ?view=public is what everyone sees (frozen after the
// freeze until the contest is revealed); ?view=live is everything now,
// for admin keys of the contest and, on one team's standing, submit keys
// (the judge or portal that shows a team its own live score). The default
// is live for those who may see it, public for the others.

func (s *contestHandlers) contestView(r *http.Request, c *contest.Contest, k *podium.APIKey, submitMay bool) (ctf.View, error) {
	may := k != nil && (k.Allows(podium.ScopeAdmin, c.ID) || submitMay && k.Allows(podium.ScopeSubmit, c.ID))
	v, _ := queryValue(r, "view")
	switch v {
	case "":
		if may {
			return ctf.Live, nil
		}
		return ctf.Public, nil
	case "public":
		return ctf.Public, nil
	case "live":
		if !may {
			if k == nil {
				return 0, podium.Errorf(podium.ECodeUnauthenticated, "the live view needs an API key: send Authorization: Bearer <key>")
			}
			return 0, podium.Errorf(podium.ECodeForbidden, "the live view of this contest needs an admin key (or a submit key, for one team's standing)")
		}
		return ctf.Live, nil
	}
	return 0, podium.Errorf(podium.ECodeInvalid, "view must be public or live")
}

func viewName(v ctf.View) string {
	if v == ctf.Live {
		return "live"
	}
	return "public"
}

func (s *contestHandlers) name(team string) string {
	if p, err := s.eng.Player(team); err == nil && p.Name != "" {
		return p.Name
	}
	return team
}

type standingJSON struct {
	Rank        *int        `json:"rank"`
	Team        string      `json:"team"`
	Name        string      `json:"name"`
	Hidden      bool        `json:"hidden,omitempty"`
	Score       int64       `json:"score"`
	Solved      int         `json:"solved"`
	LastSolveAt *jtime      `json:"last_solve_at"`
	Solves      []awardJSON `json:"solves,omitempty"`
}

type awardJSON struct {
	Challenge string `json:"challenge"`
	At        *jtime `json:"at"`
	Value     int64  `json:"value"`
	Blood     int    `json:"first_blood,omitempty"`
	Bonus     int64  `json:"bonus"`
	Points    int64  `json:"points"`
}

func (s *contestHandlers) standingOut(t *contest.Standing, awards bool) standingJSON {
	out := standingJSON{Team: t.Team, Name: s.name(t.Team), Hidden: t.Hidden, Score: t.Score, Solved: t.Solved, LastSolveAt: jt(t.LastAt)}
	if !t.Hidden {
		r := t.Rank
		out.Rank = &r
	}
	if awards {
		out.Solves = make([]awardJSON, len(t.Awards))
		for i, a := range t.Awards {
			out.Solves[i] = awardJSON{Challenge: a.Challenge, At: jt(a.At), Value: a.Value, Blood: a.Blood, Bonus: a.Bonus, Points: a.Points}
		}
	}
	return out
}

func (s *contestHandlers) contestStandings(w http.ResponseWriter, r *http.Request) error {
	c, k, err := s.contestFor(r)
	if err != nil {
		return err
	}
	view, err := s.contestView(r, &c, k, false)
	if err != nil {
		return err
	}
	offset, limit, err := queryPage(r)
	if err != nil {
		return err
	}
	hidden, err := queryBool(r, "include_hidden")
	if err != nil {
		return err
	}
	if hidden && view != ctf.Live {
		return podium.Errorf(podium.ECodeForbidden, "include_hidden needs the live view (an admin key)")
	}
	solves, err := queryBool(r, "solves")
	if err != nil {
		return err
	}
	if at, ok := queryValue(r, "at"); ok {
		if solves {
			return podium.Errorf(podium.ECodeInvalid, "solves is not kept in snapshots: leave it out with at")
		}
		return s.contestSnapshot(w, r, &c, view, at, offset, limit, hidden)
	}
	b, err := s.contests.Standings(c.ID, view)
	if err != nil {
		return err
	}
	lines, total := []standingJSON{}, 0
	for i := range b.Standings.Teams {
		t := &b.Standings.Teams[i]
		if t.Hidden && !hidden {
			continue
		}
		if total >= offset && len(lines) < limit {
			lines = append(lines, s.standingOut(t, solves))
		}
		total++
	}
	return writeAny(w, http.StatusOK, map[string]any{"contest": c.ID, "view": viewName(view), "frozen": b.Frozen,
		"cutoff": jt(b.Standings.Cutoff), "seq": b.Standings.Seq, "total": total, "standings": lines})
}

// contestSnapshot answers ?at=: the newest stored snapshot at or before
// at. A snapshot after the freeze of a contest not yet revealed is only
// for the live view.
func (s *contestHandlers) contestSnapshot(w http.ResponseWriter, r *http.Request, c *contest.Contest, view ctf.View, at string, offset, limit int, hidden bool) error {
	t, err := parseTime("at", at)
	if err != nil {
		return err
	}
	doc, err := s.contests.Snapshot(r.Context(), c.ID, t)
	if err != nil {
		return err
	}
	if view != ctf.Live && !c.Revealed && c.Freeze != nil && doc.At.After(*c.Freeze) {
		return podium.Errorf(podium.ECodeForbidden, "snapshots after the freeze are shown once the contest is revealed")
	}
	lines, total := []standingJSON{}, 0
	for _, l := range doc.Standings {
		if l.Hidden && !hidden {
			continue
		}
		if total >= offset && len(lines) < limit {
			sj := standingJSON{Team: l.Team, Name: s.name(l.Team), Hidden: l.Hidden, Score: l.Score, Solved: l.Solved}
			if l.LastAt != nil {
				sj.LastSolveAt = jt(*l.LastAt)
			}
			if !l.Hidden {
				rank := l.Rank
				sj.Rank = &rank
			}
			lines = append(lines, sj)
		}
		total++
	}
	return writeAny(w, http.StatusOK, map[string]any{"contest": c.ID, "view": "snapshot", "at": jt(doc.At),
		"seq": doc.Seq, "total": total, "standings": lines})
}

func (s *contestHandlers) contestTeam(w http.ResponseWriter, r *http.Request) error {
	c, k, err := s.contestFor(r)
	if err != nil {
		return err
	}
	team := r.PathValue("team")
	if err := podium.ValidPlayerRef(team); err != nil {
		return err
	}
	view, err := s.contestView(r, &c, k, true)
	if err != nil {
		return err
	}
	b, err := s.contests.Standings(c.ID, view)
	if err != nil {
		return err
	}
	st := b.Standings.Team(team)
	var out standingJSON
	if st == nil || (st.Hidden && view != ctf.Live) {
		out = standingJSON{Team: team, Name: s.name(team), Solves: []awardJSON{}}
	} else {
		out = s.standingOut(st, true)
	}
	return writeAny(w, http.StatusOK, map[string]any{"contest": c.ID, "view": viewName(view), "frozen": b.Frozen,
		"seq": b.Standings.Seq, "standing": out})
}

type bloodJSON struct {
	Position int    `json:"position"`
	Team     string `json:"team"`
	Name     string `json:"name"`
	At       *jtime `json:"at"`
}

func (s *contestHandlers) bloods(b *ctf.Board, cs *contest.ChallengeState) []bloodJSON {
	out := make([]bloodJSON, 0, len(cs.FirstBloods))
	for i, team := range cs.FirstBloods {
		bj := bloodJSON{Position: i + 1, Team: team, Name: s.name(team)}
		if t := b.Standings.Team(team); t != nil {
			for _, a := range t.Awards {
				if a.Challenge == cs.ID {
					bj.At = jt(a.At)
				}
			}
		}
		out = append(out, bj)
	}
	return out
}

func (s *contestHandlers) contestBoard(r *http.Request) (*ctf.Board, ctf.View, error) {
	c, k, err := s.contestFor(r)
	if err != nil {
		return nil, 0, err
	}
	view, err := s.contestView(r, &c, k, false)
	if err != nil {
		return nil, 0, err
	}
	b, err := s.contests.Standings(c.ID, view)
	return b, view, err
}

func (s *contestHandlers) contestChallenges(w http.ResponseWriter, r *http.Request) error {
	b, view, err := s.contestBoard(r)
	if err != nil {
		return err
	}
	type chJSON struct {
		challengeJSON
		Value       int64       `json:"value"`
		Solves      int64       `json:"solves"`
		FirstBloods []bloodJSON `json:"first_bloods"`
	}
	out := make([]chJSON, len(b.Challenges))
	for i := range b.Challenges {
		cs := &b.Standings.Challenges[i]
		out[i] = chJSON{challengeJSON: challengeOut(&b.Challenges[i]), Value: cs.Value, Solves: cs.Solves, FirstBloods: s.bloods(b, cs)}
	}
	if view == ctf.Live {
		// The live view (admins) lists the hidden challenges too, in
		// their order: they count nothing, so their value is that of no
		// solve.
		all, err := s.contests.Challenges(b.Contest.ID)
		if err != nil {
			return err
		}
		if len(all) != len(out) {
			listed := make(map[string]chJSON, len(out))
			for _, c := range out {
				listed[c.ID] = c
			}
			out = out[:0:0]
			for i := range all {
				c, ok := listed[all[i].ID]
				if !ok {
					if !all[i].Hidden {
						continue // made since the standings were computed
					}
					c = chJSON{challengeJSON: challengeOut(&all[i]), Value: all[i].Scoring.ValueAt(0, b.Standings.MaxSolves), FirstBloods: []bloodJSON{}}
				}
				out = append(out, c)
			}
		}
	}
	return writeAny(w, http.StatusOK, map[string]any{"contest": b.Contest.ID, "view": viewName(view), "frozen": b.Frozen,
		"seq": b.Standings.Seq, "challenges": out})
}

func (s *contestHandlers) contestFirstBloods(w http.ResponseWriter, r *http.Request) error {
	b, view, err := s.contestBoard(r)
	if err != nil {
		return err
	}
	type fb struct {
		Challenge string `json:"challenge"`
		bloodJSON
	}
	out := []fb{}
	for i := range b.Standings.Challenges {
		cs := &b.Standings.Challenges[i]
		for _, bj := range s.bloods(b, cs) {
			out = append(out, fb{Challenge: cs.ID, bloodJSON: bj})
		}
	}
	return writeAny(w, http.StatusOK, map[string]any{"contest": b.Contest.ID, "view": viewName(view), "frozen": b.Frozen,
		"first_bloods": out})
}

func (s *contestHandlers) contestSnapshots(w http.ResponseWriter, r *http.Request) error {
	c, k, err := s.contestFor(r)
	if err != nil {
		return err
	}
	times, err := s.contests.SnapshotTimes(r.Context(), c.ID)
	if err != nil {
		return err
	}
	live := k != nil && k.Allows(podium.ScopeAdmin, c.ID)
	out := []*jtime{}
	for _, t := range times {
		if live || c.Revealed || c.Freeze == nil || !t.After(*c.Freeze) {
			out = append(out, jt(t))
		}
	}
	return writeAny(w, http.StatusOK, map[string]any{"contest": c.ID, "snapshots": out})
}

func (s *contestHandlers) contestChart(w http.ResponseWriter, r *http.Request) error {
	top, err := queryInt(r, "top", 10, 1, 50)
	if err != nil {
		return err
	}
	b, view, err := s.contestBoard(r)
	if err != nil {
		return err
	}
	type series struct {
		Team   string   `json:"team"`
		Name   string   `json:"name"`
		Points [][2]any `json:"points"`
	}
	out := []series{}
	for _, sr := range ctf.Chart(b, top) {
		se := series{Team: sr.Team, Name: s.name(sr.Team), Points: [][2]any{}}
		for _, p := range sr.Points {
			se.Points = append(se.Points, [2]any{jt(p.At), p.Score})
		}
		out = append(out, se)
	}
	return writeAny(w, http.StatusOK, map[string]any{"contest": b.Contest.ID, "view": viewName(view), "frozen": b.Frozen,
		"start": jt(b.Contest.Start), "end": jt(b.Contest.End), "cutoff": jt(b.Standings.Cutoff), "series": out})
}

// contestCTFtime exports the standings in CTFtime's scoreboard feed
// format: tasks (challenge names), and per team its position, name, score,
// the points and unix time of each solved task, and the unix time of its
// last accepted flag.
func (s *contestHandlers) contestCTFtime(w http.ResponseWriter, r *http.Request) error {
	b, _, err := s.contestBoard(r)
	if err != nil {
		return err
	}
	names := map[string]string{}
	count := map[string]int{}
	for _, ch := range b.Challenges {
		count[ch.Name]++
	}
	tasks := make([]string, 0, len(b.Challenges))
	for _, ch := range b.Challenges {
		n := ch.Name
		if count[n] > 1 {
			n += " (" + ch.ID + ")" // names must be unique keys of taskStats
		}
		names[ch.ID] = n
		tasks = append(tasks, n)
	}
	type taskStat struct {
		Points int64 `json:"points"`
		Time   int64 `json:"time"`
	}
	type line struct {
		Pos        int                 `json:"pos"`
		Team       string              `json:"team"`
		Score      int64               `json:"score"`
		TaskStats  map[string]taskStat `json:"taskStats"`
		LastAccept int64               `json:"lastAccept"`
	}
	out := []line{}
	for i := range b.Standings.Teams {
		t := &b.Standings.Teams[i]
		if t.Hidden {
			continue
		}
		l := line{Pos: t.Rank, Team: s.name(t.Team), Score: t.Score, TaskStats: map[string]taskStat{}}
		var last time.Time
		for _, a := range t.Awards {
			l.TaskStats[names[a.Challenge]] = taskStat{Points: a.Points, Time: a.At.Unix()}
			if a.At.After(last) {
				last = a.At
			}
		}
		if !last.IsZero() {
			l.LastAccept = last.Unix()
		}
		out = append(out, l)
	}
	return writeAny(w, http.StatusOK, map[string]any{"tasks": tasks, "standings": out})
}
