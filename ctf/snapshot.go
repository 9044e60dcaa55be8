package ctf

import (
	"context"
	"encoding/json"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
)

// Snapshots: the standings at Start + k*SnapshotEvery and at End, stored
// once each. A snapshot at t is the reducer over the solves made before
// t, so every node computes the same document for it whenever it takes
// it; the store keeps the first of them (a unique (contest, at) key).

// SnapshotDoc is a stored snapshot: the standings with every team, hidden
// ones marked, and what it was computed with (first-blood percents and
// rule, challenge scorings, hidden teams), so that a check can recompute it
// from the solves exactly.
type SnapshotDoc struct {
	At         time.Time `json:"at"`
	Seq        uint64    `json:"seq"`
	FirstBlood [3]int64  `json:"first_blood"`
	// BloodRule is the contest's blood rule; a snapshot stored before
	// issue 17 has none and was computed with contest.BloodPercent.
	BloodRule  string              `json:"blood_rule,omitempty"`
	Hidden     []string            `json:"hidden"`
	Standings  []SnapshotLine      `json:"standings"`
	Challenges []SnapshotChallenge `json:"challenges"`
}

// SnapshotLine is one team in a snapshot.
type SnapshotLine struct {
	Rank   int        `json:"rank"`
	Team   string     `json:"team"`
	Hidden bool       `json:"hidden,omitempty"`
	Score  int64      `json:"score"`
	Solved int        `json:"solved"`
	LastAt *time.Time `json:"last_solve_at"`
}

// SnapshotChallenge is one challenge in a snapshot.
type SnapshotChallenge struct {
	contest.ChallengeState
	Scoring contest.Scoring `json:"scoring"`
}

func snapshotDoc(at time.Time, c *contest.Contest, chals []contest.Challenge, hidden []string, s *contest.Standings) *SnapshotDoc {
	d := &SnapshotDoc{At: at, Seq: s.Seq, FirstBlood: c.FirstBlood, BloodRule: c.BloodRule, Hidden: hidden}
	if d.BloodRule == "" {
		d.BloodRule = contest.BloodAuto
	}
	if d.Hidden == nil {
		d.Hidden = []string{}
	}
	d.Standings = make([]SnapshotLine, 0, len(s.Teams))
	for _, t := range s.Teams {
		l := SnapshotLine{Rank: t.Rank, Team: t.Team, Hidden: t.Hidden, Score: t.Score, Solved: t.Solved}
		if !t.LastAt.IsZero() {
			at := t.LastAt
			l.LastAt = &at
		}
		d.Standings = append(d.Standings, l)
	}
	d.Challenges = make([]SnapshotChallenge, len(s.Challenges))
	for i, cs := range s.Challenges {
		d.Challenges[i] = SnapshotChallenge{ChallengeState: cs, Scoring: chals[i].Scoring}
	}
	return d
}

// MaxSnapshots bounds the periodic snapshots of a contest: a contest
// longer than MaxSnapshots intervals has its snapshots spaced evenly over
// its time instead (a contest may last from 1970 to 9999: at 5 minutes,
// 800 million snapshots, each a copy of the standings).
const MaxSnapshots = 1000

// snapshotTimes returns the snapshot times of c after after and at or
// before upTo, oldest first.
func snapshotTimes(c *contest.Contest, every time.Duration, after, upTo time.Time) []time.Time {
	var out []time.Time
	// In milliseconds: the span of a contest (up to 8000 years) overflows
	// a Duration.
	start, end := podium.Millis(c.Start), podium.Millis(c.End)
	step := max(every.Milliseconds(), 1)
	if (end-start)/step > MaxSnapshots {
		step = (end - start + MaxSnapshots - 1) / MaxSnapshots
	}
	k := int64(1)
	if a := podium.Millis(after); a > start {
		k = (a-start)/step + 1 // the first time after after
	}
	for ; start+k*step < end; k++ {
		t := podium.FromMillis(start + k*step)
		if t.After(upTo) {
			break
		}
		if t.After(after) {
			out = append(out, t)
		}
	}
	if !c.End.After(upTo) && c.End.After(after) {
		out = append(out, c.End)
	}
	return out
}

// TakeSnapshots stores every snapshot that is due: its time passed more
// than SnapshotDelay ago and no newer one is stored. The server calls it
// every few seconds.
func (s *Service) TakeSnapshots(ctx context.Context) error {
	s.mu.RLock()
	ids := make([]string, 0, len(s.contests))
	for id := range s.contests {
		ids = append(ids, id)
	}
	s.mu.RUnlock()
	now := s.now()
	for _, id := range ids {
		st, err := s.get(id)
		if err != nil {
			continue
		}
		st.mu.Lock()
		def, snapped := st.def, st.snapped
		st.mu.Unlock()
		due := snapshotTimes(&def, s.every, snapped, now.Add(-s.delay))
		if len(due) == 0 {
			continue
		}
		// The solves other nodes committed before the snapshot time must
		// be here first.
		if err := s.syncOne(ctx, id); err != nil {
			return err
		}
		for _, at := range due {
			st.mu.Lock()
			hidden := s.hiddenTeams(st)
			doc := snapshotDoc(at, &st.def, st.shown, hidden, st.compute(at, hidden))
			st.mu.Unlock()
			body, err := json.Marshal(doc)
			if err != nil {
				return err
			}
			if _, err := s.store.PutSnapshot(ctx, id, at, doc.Seq, body); err != nil {
				return err
			}
			st.mu.Lock()
			if at.After(st.snapped) {
				st.snapped = at
			}
			st.mu.Unlock()
		}
	}
	return nil
}

func (s *Service) snapshots(ctx context.Context) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	var lastLog time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.watchPlayers()
		if err := s.TakeSnapshots(ctx); err != nil && time.Since(lastLog) > time.Minute {
			s.log.Warn("ctf: snapshots", "err", err)
			lastLog = time.Now()
		}
	}
}

// Snapshot returns the newest stored snapshot of a contest taken at or
// before at. None is ECodeNotFound.
func (s *Service) Snapshot(ctx context.Context, id string, at time.Time) (*SnapshotDoc, error) {
	if _, err := s.get(id); err != nil {
		return nil, err
	}
	snap, ok, err := s.store.SnapshotAt(ctx, id, at)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, podium.Errorf(podium.ECodeNotFound, "contest %q has no snapshot at or before %s", id, at.UTC().Format(time.RFC3339))
	}
	var d SnapshotDoc
	if err := json.Unmarshal(snap.Doc, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// SnapshotTimes lists the times of a contest's stored snapshots.
func (s *Service) SnapshotTimes(ctx context.Context, id string) ([]time.Time, error) {
	if _, err := s.get(id); err != nil {
		return nil, err
	}
	return s.store.SnapshotTimes(ctx, id)
}
