package sqlite

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// The log's statements bind a run's board, period and px once
// (submissionRow): a batch that mixes boards, periods, an indexed and a
// plain board, metas and deletes, in runs that cross the chunk sizes,
// reads back row for row, and each row is in the player index exactly
// when its board is.
func TestCommitLogRuns(t *testing.T) {
	s := openTest(t, Options{Sync: "normal"})
	if err := s.PutBoard(ctx, board("plain", 2)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBoard(ctx, withQuota(board("quota", 2), 1000)); err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1_700_000_000_000).UTC()
	seqs := map[string]uint64{}
	var batch podium.Batch
	// run adds n rows of one board and period.
	run := func(b, period string, n int) {
		for range n {
			seqs[b]++
			seq := seqs[b]
			sub := podium.Submission{Seq: seq, Board: b, Period: period, Player: fmt.Sprintf("p%d", seq%13),
				Keys: []int64{int64(seq), -int64(seq)}, At: at.Add(time.Duration(seq) * time.Millisecond)}
			switch {
			case seq%5 == 0:
				sub.Meta = json.RawMessage(fmt.Sprintf(`{"n":%d}`, seq))
			case seq%11 == 0:
				sub.Kind, sub.Keys = podium.KindDelete, nil
			}
			batch.Submissions = append(batch.Submissions, sub)
		}
	}
	run("plain", "all", 1)
	run("quota", "all", 70) // 64 + 4 + 1 + 1
	run("quota", "2026-w49", 3)
	run("plain", "all", 17)
	run("plain", "2026-w49", 1)
	run("quota", "all", 129)
	run("plain", "all", 64)
	if err := s.Commit(ctx, &batch); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	for _, b := range []string{"plain", "quota"} {
		var want []podium.Submission
		for _, sub := range batch.Submissions {
			if sub.Board == b {
				want = append(want, sub)
			}
		}
		slices.SortFunc(want, func(x, y podium.Submission) int { return int(x.Seq) - int(y.Seq) })
		var got []podium.Submission
		err := s.Log(ctx, b, 0, func(sub *podium.Submission) error {
			c := *sub
			c.Keys = slices.Clone(sub.Keys)
			c.Meta = slices.Clone(sub.Meta)
			got = append(got, c)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("board %s: %d rows logged, want %d", b, len(got), len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.Seq != w.Seq || g.Board != w.Board || g.Period != w.Period || g.Player != w.Player || g.Kind != w.Kind ||
				!slices.Equal(g.Keys, w.Keys) || !g.At.Equal(w.At) || string(podium.StoredMeta(g.Meta)) != string(podium.StoredMeta(w.Meta)) {
				t.Errorf("board %s row %d: got %+v, want %+v", b, i, g, w)
			}
		}
	}
	if n := inIndex(t, s, "plain"); n != 0 {
		t.Errorf("%d rows of the plain board in the player index, want 0", n)
	}
	if n := inIndex(t, s, "quota"); n != int(seqs["quota"]) {
		t.Errorf("%d rows of the quota board in the player index, want %d", n, seqs["quota"])
	}

	// A (board, seq) logged already, in a batch's second run, fails the
	// whole batch: its first run is not stored either.
	last := seqs["plain"]
	batch.Reset()
	run("plain", "all", 3)
	batch.Submissions = append(batch.Submissions, podium.Submission{Seq: 1, Board: "quota", Period: "all", Player: "p1", Keys: []int64{1, 1}, At: at})
	if err := s.Commit(ctx, &batch); err == nil {
		t.Fatal("Commit of a batch that logs a seq again succeeded")
	}
	if got, err := s.LastSeq(ctx, "plain"); err != nil || got != last {
		t.Errorf("after the failed batch, the plain board's LastSeq = %d, %v; want %d", got, err, last)
	}
}
