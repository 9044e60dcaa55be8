package ctf

import (
	"testing"
	"time"

	"github.com/podiumhq/podium/contest"
)

// TestSnapshotRecordsBloodRule (issue 17 item 4): a snapshot records the
// blood rule it was computed with, and the check recomputes it with that
// rule; a snapshot stored before blood rules (none recorded) was computed
// with percents and is recomputed so, though the contest's gzctf
// challenge now takes GZCTF's rule.
func TestSnapshotRecordsBloodRule(t *testing.T) {
	c := &contest.Contest{ID: "c", Start: t0, End: t0.Add(time.Hour), FirstBlood: [3]int64{5, 3, 1}}
	if err := c.Normalize(); err != nil {
		t.Fatal(err)
	}
	chals := []contest.Challenge{{ID: "gz", Scoring: contest.Scoring{Function: contest.GZCTF, Value: 30, MinRate: 0.5, Difficulty: 3}}}
	solves := []contest.Solve{{Seq: 1, Challenge: "gz", Team: "a", At: t0.Add(time.Minute)}}
	at := t0.Add(5 * time.Minute)
	now := snapshotDoc(at, c, chals, []string{}, contest.Compute(contest.Input{Contest: c, Challenges: chals, Solves: solves, Cutoff: at}))
	if now.BloodRule != contest.BloodAuto || now.Standings[0].Score != 31 {
		t.Fatalf("snapshot: rule %q, score %d; want auto, 31 (GZCTF's 30*1.05f)", now.BloodRule, now.Standings[0].Score)
	}
	if d := diffSnapshots(now, recompute(c, solves, now, at)); d != "" {
		t.Fatalf("recomputed differently: %s", d)
	}
	old := *now
	old.BloodRule = ""
	old.Standings = []SnapshotLine{now.Standings[0]}
	old.Standings[0].Score = 32 // what the percent rule gave
	if d := diffSnapshots(&old, recompute(c, solves, &old, at)); d != "" {
		t.Fatalf("a snapshot from before blood rules: %s", d)
	}
}
