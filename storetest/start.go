package storetest

import (
	"bytes"
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/podiumhq/podium"
)

// testStartLoader: a store that offers podium.StartLoader answers, for
// every board at once, what the per-board methods answer (LastSeq,
// Periods, Log after the watermark, LoadEntries).
func testStartLoader(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	sl, ok := s.(podium.StartLoader)
	if !ok {
		t.Skip("this store does not offer podium.StartLoader")
	}
	// Boards with entries in several periods, logs partly behind the
	// watermark, one board with nothing, one with a log but no watermark.
	daily := putBoard(t, s, "daily", podium.Daily, 2)
	all := putBoard(t, s, "all", podium.Never, 1)
	putBoard(t, s, "empty", podium.Never, 1)
	logged := putBoard(t, s, "logged", podium.Never, 1)
	var b podium.Batch
	seq := uint64(0)
	for i, day := range []string{"2026-11-28", "2026-11-29", "2026-11-30"} {
		for p := range 3 + i {
			seq++
			player := fmt.Sprintf("p%d", p)
			b.Submissions = append(b.Submissions, sub(daily, seq, day, player, int64(100*i+p), 7))
			b.Upserts = append(b.Upserts, entry(daily, seq, day, player, int64(100*i+p), 7))
		}
	}
	b.Watermarks = append(b.Watermarks, podium.Watermark{Board: "daily", Seq: seq - 2})
	for i := range 4 {
		e := entry(all, uint64(i+1), podium.PeriodAll, fmt.Sprintf("q%d", i), int64(i))
		if i == 2 {
			e.Meta = []byte(`{"x":1}`)
		}
		b.Submissions = append(b.Submissions, sub(all, uint64(i+1), podium.PeriodAll, e.Player, int64(i)))
		b.Upserts = append(b.Upserts, e)
	}
	b.Watermarks = append(b.Watermarks, podium.Watermark{Board: "all", Seq: 4})
	b.Submissions = append(b.Submissions, sub(logged, 1, podium.PeriodAll, "r", 5), sub(logged, 2, podium.PeriodAll, "r", 4))
	commit(t, s, &b)
	ids := []string{"all", "daily", "empty", "logged"}

	seqs, err := sl.LastSeqs(ctx)
	if err != nil {
		t.Fatalf("LastSeqs: %v", err)
	}
	for _, id := range ids {
		if want := lastSeq(t, s, id); seqs[id] != want {
			t.Errorf("LastSeqs[%s] = %d, LastSeq %d", id, seqs[id], want)
		}
	}
	pcs, err := sl.AllPeriods(ctx)
	if err != nil {
		t.Fatalf("AllPeriods: %v", err)
	}
	for _, id := range ids {
		if want := periods(t, s, id); !reflect.DeepEqual(pcs[id], want) && len(pcs[id])+len(want) > 0 {
			t.Errorf("AllPeriods[%s] = %v, Periods %v", id, pcs[id], want)
		}
	}

	wms, err := s.Watermarks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tails := map[string][]podium.Submission{}
	err = sl.Tails(ctx, func(sub *podium.Submission) error {
		c := *sub
		c.Keys = slices.Clone(sub.Keys)
		c.Meta = bytes.Clone(sub.Meta)
		tails[sub.Board] = append(tails[sub.Board], c)
		return nil
	})
	if err != nil {
		t.Fatalf("Tails: %v", err)
	}
	for _, id := range ids {
		var want []podium.Submission
		if err := s.Log(ctx, id, wms[id], func(sub *podium.Submission) error {
			c := *sub
			c.Keys = slices.Clone(sub.Keys)
			c.Meta = bytes.Clone(sub.Meta)
			want = append(want, c)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		got := tails[id]
		slices.SortFunc(got, func(a, b podium.Submission) int { return cmp.Compare(a.Seq, b.Seq) })
		if len(got) != len(want) {
			t.Errorf("Tails of %s: %d rows, Log after %d: %d", id, len(got), wms[id], len(want))
			continue
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.Board != w.Board || g.Seq != w.Seq || g.Period != w.Period || g.Player != w.Player || g.Kind != w.Kind ||
				!slices.Equal(g.Keys, w.Keys) || !g.At.Equal(w.At) || !bytes.Equal(g.Meta, w.Meta) {
				t.Errorf("Tails of %s, row %d: %+v, Log %+v", id, i, g, w)
			}
		}
	}
	if len(tails["daily"]) != 2 || len(tails["all"]) != 0 || len(tails["logged"]) != 2 {
		t.Errorf("Tails: %d, %d, %d rows past the watermarks, want 2, 0, 2", len(tails["daily"]), len(tails["all"]), len(tails["logged"]))
	}

	want := []podium.EntryRef{{Board: "daily", Period: "2026-11-30"}, {Board: "daily", Period: "2026-11-29"},
		{Board: "all", Period: podium.PeriodAll}, {Board: "empty", Period: podium.PeriodAll}, {Board: "daily", Period: "2026-12-01"}}
	got := map[podium.EntryRef][]podium.Entry{}
	err = sl.LoadPeriods(ctx, want, func(e *podium.Entry) error {
		c := *e
		c.Keys = slices.Clone(e.Keys)
		c.Meta = bytes.Clone(e.Meta)
		k := podium.EntryRef{Board: e.Board, Period: e.Period}
		got[k] = append(got[k], c)
		return nil
	})
	if err != nil {
		t.Fatalf("LoadPeriods: %v", err)
	}
	n := 0
	for _, r := range want {
		es := got[r]
		slices.SortFunc(es, func(a, b podium.Entry) int { return strings.Compare(a.Player, b.Player) })
		checkEntries(t, es, load(t, s, r.Board, r.Period))
		n += len(es)
	}
	if n != 5+4+4 || len(got) != 3 {
		t.Errorf("LoadPeriods: %d entries in %d periods, want 13 in 3", n, len(got))
	}
	stop := fmt.Errorf("stop")
	if err := sl.LoadPeriods(ctx, want, func(*podium.Entry) error { return stop }); err != stop {
		t.Errorf("LoadPeriods with a failing callback: %v, want its error", err)
	}
	if err := sl.Tails(ctx, func(*podium.Submission) error { return stop }); err != stop {
		t.Errorf("Tails with a failing callback: %v, want its error", err)
	}
}
