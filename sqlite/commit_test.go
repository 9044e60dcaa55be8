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

// The entries' statements bind a run's board and period once (entryRow):
// upserts that mix boards and periods, with metas and results, read back
// as written, and of two upserts of one entry in a batch, in different
// runs, the later wins.
func TestCommitEntryRuns(t *testing.T) {
	s := openTest(t, Options{Sync: "normal"})
	at := time.UnixMilli(1_700_000_000_000).UTC()
	want := map[podium.EntryRef]podium.Entry{}
	var batch podium.Batch
	seq := uint64(0)
	run := func(b, period string, n int) {
		for i := range n {
			seq++
			e := podium.Entry{Board: b, Period: period, Player: fmt.Sprintf("p%d", i%40), Keys: []int64{int64(seq)}, At: at, Seq: seq}
			if seq%3 == 0 {
				e.Meta = json.RawMessage(fmt.Sprintf(`{"n":%d}`, seq))
			}
			if seq%4 == 0 {
				e.Results = []podium.Result{{Keys: []int64{int64(seq)}, At: at, Seq: seq}}
			}
			batch.Upserts = append(batch.Upserts, e)
			want[podium.EntryRef{Board: b, Period: period, Player: e.Player}] = e
		}
	}
	run("a", "all", 30)
	run("b", "all", 70)
	run("a", "w1", 5)
	run("a", "all", 40) // p0-p29 again: these win
	if err := s.Commit(ctx, &batch); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	got := 0
	for _, bp := range []podium.EntryRef{{Board: "a", Period: "all"}, {Board: "b", Period: "all"}, {Board: "a", Period: "w1"}} {
		err := s.LoadEntries(ctx, bp.Board, bp.Period, func(e *podium.Entry) error {
			got++
			w, ok := want[podium.EntryRef{Board: bp.Board, Period: bp.Period, Player: e.Player}]
			if !ok {
				return fmt.Errorf("unexpected entry %s/%s/%s", bp.Board, bp.Period, e.Player)
			}
			if e.Seq != w.Seq || !slices.Equal(e.Keys, w.Keys) || !e.At.Equal(w.At) ||
				string(podium.StoredMeta(e.Meta)) != string(podium.StoredMeta(w.Meta)) || len(e.Results) != len(w.Results) {
				return fmt.Errorf("entry %s/%s/%s: got %+v, want %+v", bp.Board, bp.Period, e.Player, *e, w)
			}
			if len(w.Results) == 1 && e.Results[0].Seq != w.Results[0].Seq {
				return fmt.Errorf("entry %s/%s/%s: results %+v, want %+v", bp.Board, bp.Period, e.Player, e.Results, w.Results)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if got != len(want) {
		t.Errorf("%d entries stored, want %d", got, len(want))
	}
}
