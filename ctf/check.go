package ctf

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/podiumhq/podium/contest"
)

// Problem is one inconsistency Check found in a contest.
type Problem struct {
	Contest string `json:"contest"`
	What    string `json:"what"`
}

// maxProblems bounds what Check reports per contest.
const maxProblems = 20

// Check compares what podium holds of every contest with the solves in
// the database, the authority:
//   - the solves in memory must be the database's (same seq, team,
//     challenge and time), and the contest's head its last solve's seq;
//   - every stored snapshot must be what the reducer computes from the
//     database's solves before its time, with the parameters the snapshot
//     records (first-blood percents, challenge scorings, hidden teams).
//
// It reports what differs; it changes nothing.
func (s *Service) Check(ctx context.Context) ([]Problem, error) {
	heads, err := s.store.Contests(ctx)
	if err != nil {
		return nil, err
	}
	var out []Problem
	for i := range heads {
		ps, err := s.checkContest(ctx, &heads[i])
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

func (s *Service) checkContest(ctx context.Context, h *contest.Stored) ([]Problem, error) {
	var out []Problem
	report := func(f string, a ...any) {
		if len(out) < maxProblems {
			out = append(out, Problem{Contest: h.ID, What: fmt.Sprintf(f, a...)})
		}
	}
	// Memory is read before the database: it only ever holds committed
	// solves, so every solve it holds is in what is read after it, even
	// while this node or others go on writing.
	var mem []contest.Solve
	if st, err := s.get(h.ID); err == nil {
		st.mu.Lock()
		mem = slices.Clone(st.solves)
		st.mu.Unlock()
	}
	var db []contest.Solve
	if err := s.store.Solves(ctx, h.ID, 0, func(sv *contest.Solve) error {
		if want := uint64(len(db)) + 1; sv.Seq != want {
			report("solve seq %d where %d was expected", sv.Seq, want)
		}
		db = append(db, *sv)
		return nil
	}); err != nil {
		return nil, err
	}
	// The head, read before the solves, moves with each solve in the same
	// transaction: the solves up to it must all be there and end at it.
	var upTo uint64
	for _, sv := range db {
		if sv.Seq <= h.Seq {
			upTo = max(upTo, sv.Seq)
		}
	}
	if upTo != h.Seq {
		report("the contest's head is at seq %d, its solves up to it end at %d", h.Seq, upTo)
	}
	for i := range mem {
		if i >= len(db) {
			report("solve %d is in memory but not in the database", mem[i].Seq)
			break
		}
		m, d := mem[i], db[i]
		if m.Seq != d.Seq || m.Team != d.Team || m.Challenge != d.Challenge || !m.At.Equal(d.At) {
			report("solve %d in memory (%s on %s at %s) differs from the database's (%s on %s at %s)",
				m.Seq, m.Team, m.Challenge, m.At, d.Team, d.Challenge, d.At)
		}
	}
	times, err := s.store.SnapshotTimes(ctx, h.ID)
	if err != nil {
		return nil, err
	}
	for _, at := range times {
		snap, ok, err := s.store.SnapshotAt(ctx, h.ID, at)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		var doc SnapshotDoc
		if err := json.Unmarshal(snap.Doc, &doc); err != nil {
			report("snapshot at %s does not decode: %v", at, err)
			continue
		}
		want := recompute(&h.Contest, db, &doc, at)
		if d := diffSnapshots(&doc, want); d != "" {
			report("snapshot at %s differs from the standings recomputed from the solves: %s", at.Format("2006-01-02T15:04:05.000Z07:00"), d)
		}
	}
	return out, nil
}

// recompute computes the snapshot at at from the solves, with the
// parameters doc records: its challenges (in its order, with their
// recorded scoring), first-blood percents and rule, and hidden teams.
func recompute(c *contest.Contest, solves []contest.Solve, doc *SnapshotDoc, at time.Time) *SnapshotDoc {
	def := *c
	def.FirstBlood, def.BloodRule = doc.FirstBlood, doc.BloodRule
	if def.BloodRule == "" {
		def.BloodRule = contest.BloodPercent // stored before blood rules: computed with percents
	}
	chals := make([]contest.Challenge, len(doc.Challenges))
	for i, sc := range doc.Challenges {
		chals[i] = contest.Challenge{ID: sc.ID, Scoring: sc.Scoring}
	}
	hidden := slices.Clone(doc.Hidden)
	slices.Sort(hidden)
	res := contest.Compute(contest.Input{Contest: &def, Challenges: chals, Solves: solves, Cutoff: at,
		Hidden: func(t string) bool { _, ok := slices.BinarySearch(hidden, t); return ok }})
	return snapshotDoc(at, &def, chals, doc.Hidden, res)
}

// diffSnapshots describes the first difference between a stored snapshot
// and a recomputed one, "" if none.
func diffSnapshots(got, want *SnapshotDoc) string {
	if got.Seq != want.Seq {
		return fmt.Sprintf("it counts solves up to seq %d, the solves before its time end at %d", got.Seq, want.Seq)
	}
	if len(got.Standings) != len(want.Standings) {
		return fmt.Sprintf("%d teams, %d recomputed", len(got.Standings), len(want.Standings))
	}
	for i := range got.Standings {
		g, w := got.Standings[i], want.Standings[i]
		if g.Rank != w.Rank || g.Team != w.Team || g.Hidden != w.Hidden || g.Score != w.Score || g.Solved != w.Solved ||
			(g.LastAt == nil) != (w.LastAt == nil) || (g.LastAt != nil && !g.LastAt.Equal(*w.LastAt)) {
			return fmt.Sprintf("line %d is %s with %d points (rank %d), recomputed %s with %d (rank %d)",
				i+1, g.Team, g.Score, g.Rank, w.Team, w.Score, w.Rank)
		}
	}
	for i := range got.Challenges {
		if !reflect.DeepEqual(got.Challenges[i].ChallengeState, want.Challenges[i].ChallengeState) {
			return fmt.Sprintf("challenge %s: %+v, recomputed %+v", got.Challenges[i].ID, got.Challenges[i].ChallengeState, want.Challenges[i].ChallengeState)
		}
	}
	return ""
}
