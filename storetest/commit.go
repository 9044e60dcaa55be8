package storetest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

func testCommit(t *testing.T, open func(*testing.T) podium.Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		s := open(t)
		one := putBoard(t, s, "one", podium.Never, 1)
		four := putBoard(t, s, "four", podium.Daily, 4)
		meta := json.RawMessage(`{"replay":"r-9f2","ok":true}`)

		// The first batch sets up entries that the second deletes and
		// replaces.
		first := &podium.Batch{
			Submissions: []podium.Submission{sub(one, 1, "all", "old", 10), sub(four, 1, "2026-11-29", "old", 1, 2, 3, 4)},
			Upserts:     []podium.Entry{entry(one, 1, "all", "old", 10), entry(four, 1, "2026-11-29", "old", 1, 2, 3, 4)},
		}
		commit(t, s, first)

		var b podium.Batch
		var wantOne, wantFour []podium.Entry
		var wantLogOne []podium.Submission
		wantLogOne = append(wantLogOne, first.Submissions[0])
		for i, k := range extremes {
			seq := uint64(2 + i)
			player := fmt.Sprintf("p%d", i)
			sb := sub(one, seq, "all", player, k)
			e := entry(one, seq, "all", player, k)
			if i%2 == 0 {
				sb.Meta, e.Meta = meta, meta
			}
			b.Submissions = append(b.Submissions, sb)
			b.Upserts = append(b.Upserts, e)
			wantOne = append(wantOne, e)
			wantLogOne = append(wantLogOne, sb)
		}
		fourKeys := [][]int64{{-5, 0, 5, 1 << 62}, {extremes[0], extremes[1], extremes[0], extremes[1]}}
		for i, keys := range fourKeys {
			seq := uint64(2 + i)
			b.Submissions = append(b.Submissions, sub(four, seq, "2026-11-30", fmt.Sprintf("q%d", i), keys...))
			e := entry(four, seq, "2026-11-30", fmt.Sprintf("q%d", i), keys...)
			b.Upserts = append(b.Upserts, e)
			wantFour = append(wantFour, e)
		}
		del := podium.Submission{Seq: 4, Board: "four", Period: "2026-11-29", Player: "old", Kind: podium.KindDelete, At: at(4)}
		b.Submissions = append(b.Submissions, del)
		b.Deletes = append(b.Deletes, podium.EntryRef{Board: "four", Period: "2026-11-29", Player: "old"})
		// Replace "old" on board one with new keys, at, seq and meta.
		b.Submissions = append(b.Submissions, sub(one, 100, "all", "old", -7))
		wantLogOne = append(wantLogOne, b.Submissions[len(b.Submissions)-1])
		upd := entry(one, 100, "all", "old", -7)
		upd.Meta = json.RawMessage(`{"v":2}`)
		b.Upserts = append(b.Upserts, upd)
		wantOne = append(wantOne, upd)
		b.Idempotency = []podium.IdempotencyRecord{{Scope: "k2 POST /v1/scores", Key: "abc", RequestHash: []byte{1, 2, 3}, Status: 200, Body: []byte(`{"seq":2}`), CreatedAt: t0}}
		commit(t, s, &b)

		checkEntries(t, load(t, s, "one", "all"), wantOne)
		checkEntries(t, load(t, s, "four", "2026-11-30"), wantFour)
		if es := load(t, s, "four", "2026-11-29"); len(es) != 0 {
			t.Errorf("a deleted entry is still loaded: %+v", es)
		}
		checkLog(t, logOf(t, s, "one"), wantLogOne)
		wantLogFour := append(append([]podium.Submission{first.Submissions[1]}, b.Submissions[len(extremes):len(extremes)+2]...), del)
		checkLog(t, logOf(t, s, "four"), wantLogFour)
		if seq := lastSeq(t, s, "one"); seq != 100 {
			t.Errorf("LastSeq(one) = %d, want 100", seq)
		}
		if seq := lastSeq(t, s, "four"); seq != 4 {
			t.Errorf("LastSeq(four) = %d, want 4", seq)
		}
		if ps := periods(t, s, "four"); !reflect.DeepEqual(ps, []podium.PeriodCount{{ID: "2026-11-30", Entries: 2}}) {
			t.Errorf("Periods(four) = %+v, want only 2026-11-30 with 2 entries", ps)
		}
		if ps := periods(t, s, "one"); !reflect.DeepEqual(ps, []podium.PeriodCount{{ID: "all", Entries: len(wantOne)}}) {
			t.Errorf("Periods(one) = %+v, want all with %d entries", ps, len(wantOne))
		}
		recs, err := s.IdempotencyRecords(ctx, time.Time{})
		if err != nil {
			t.Fatalf("IdempotencyRecords: %v", err)
		}
		checkRecords(t, recs, b.Idempotency)
	})

	t.Run("SameEntryTwice", func(t *testing.T) {
		s := open(t)
		bd := putBoard(t, s, "b", podium.Never, 2)
		commit(t, s, &podium.Batch{Upserts: []podium.Entry{entry(bd, 1, "all", "a", 1, 1), entry(bd, 2, "all", "a", 2, 2)}})
		checkEntries(t, load(t, s, "b", "all"), []podium.Entry{entry(bd, 2, "all", "a", 2, 2)})
	})

	t.Run("DeletesBeforeUpserts", func(t *testing.T) {
		s := open(t)
		bd := putBoard(t, s, "b", podium.Never, 1)
		commit(t, s, &podium.Batch{Upserts: []podium.Entry{entry(bd, 1, "all", "a", 1)}})
		commit(t, s, &podium.Batch{
			Deletes: []podium.EntryRef{{Board: "b", Period: "all", Player: "a"}, {Board: "b", Period: "all", Player: "nobody"}},
			Upserts: []podium.Entry{entry(bd, 2, "all", "a", 9)},
		})
		checkEntries(t, load(t, s, "b", "all"), []podium.Entry{entry(bd, 2, "all", "a", 9)})
	})

	t.Run("Empty", func(t *testing.T) {
		if err := open(t).Commit(ctx, &podium.Batch{}); err != nil {
			t.Fatalf("Commit of an empty batch: %v", err)
		}
	})

	// A failed commit leaves nothing behind: the duplicate submission comes
	// last, after every other row of the batch could have been written.
	t.Run("AtomicOnDuplicateSeq", func(t *testing.T) {
		s := open(t)
		bd := putBoard(t, s, "b", podium.Never, 1)
		before := &podium.Batch{
			Submissions: []podium.Submission{sub(bd, 1, "all", "a", 5)},
			Upserts:     []podium.Entry{entry(bd, 1, "all", "a", 5), entry(bd, 1, "all", "z", 50)},
		}
		commit(t, s, before)
		bad := &podium.Batch{
			Submissions: []podium.Submission{sub(bd, 2, "all", "b", 6), sub(bd, 3, "all", "a", 1), sub(bd, 1, "all", "c", 7)},
			Upserts:     []podium.Entry{entry(bd, 2, "all", "b", 6), entry(bd, 3, "all", "a", 1)},
			Deletes:     []podium.EntryRef{{Board: "b", Period: "all", Player: "z"}},
			Idempotency: []podium.IdempotencyRecord{{Scope: "s", Key: "k", RequestHash: []byte{1}, Status: 200, Body: []byte("{}"), CreatedAt: t0}},
		}
		if err := s.Commit(ctx, bad); err == nil {
			t.Fatal("Commit of a batch repeating a logged (board, seq) succeeded")
		}
		checkUnchanged(t, s, bd, before)
	})

	t.Run("AtomicOnCancel", func(t *testing.T) {
		s := open(t)
		bd := putBoard(t, s, "b", podium.Never, 1)
		before := &podium.Batch{Submissions: []podium.Submission{sub(bd, 1, "all", "a", 5)}, Upserts: []podium.Entry{entry(bd, 1, "all", "a", 5)}}
		commit(t, s, before)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		bad := &podium.Batch{
			Submissions: []podium.Submission{sub(bd, 2, "all", "b", 6)},
			Upserts:     []podium.Entry{entry(bd, 2, "all", "b", 6)},
			Idempotency: []podium.IdempotencyRecord{{Scope: "s", Key: "k", RequestHash: []byte{1}, Status: 200, Body: []byte("{}"), CreatedAt: t0}},
		}
		if err := s.Commit(cctx, bad); err == nil {
			t.Fatal("Commit with a cancelled context succeeded")
		}
		checkUnchanged(t, s, bd, before)
	})
}

// checkUnchanged checks that board bd holds exactly what before committed
// and that no idempotency record exists.
func checkUnchanged(t *testing.T, s podium.Store, bd *podium.Board, before *podium.Batch) {
	t.Helper()
	checkEntries(t, load(t, s, bd.ID, "all"), before.Upserts)
	checkLog(t, logOf(t, s, bd.ID), before.Submissions)
	if seq := lastSeq(t, s, bd.ID); seq != before.Submissions[len(before.Submissions)-1].Seq {
		t.Errorf("LastSeq after a failed commit = %d", seq)
	}
	if recs, err := s.IdempotencyRecords(ctx, time.Time{}); err != nil || len(recs) != 0 {
		t.Errorf("idempotency records after a failed commit: %v, %v", recs, err)
	}
}

func checkLog(t *testing.T, got, want []podium.Submission) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("log has %d submissions, want %d", len(got), len(want))
		return
	}
	for i := range want {
		g, w := got[i], want[i]
		what := fmt.Sprintf("logged submission %d of %s", w.Seq, w.Board)
		checkTime(t, what+" At", g.At, w.At)
		checkMeta(t, what, g.Meta, w.Meta)
		if g.Seq != w.Seq || g.Board != w.Board || g.Period != w.Period || g.Player != w.Player || g.Kind != w.Kind || !slices.Equal(g.Keys, w.Keys) {
			t.Errorf("%s read back as {seq=%d %s %s %s kind=%d keys=%v}, want {seq=%d %s %s %s kind=%d keys=%v}",
				what, g.Seq, g.Board, g.Period, g.Player, g.Kind, g.Keys, w.Seq, w.Board, w.Period, w.Player, w.Kind, w.Keys)
		}
	}
}

func checkRecords(t *testing.T, got, want []podium.IdempotencyRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d idempotency records, want %d", len(got), len(want))
		return
	}
	for i := range want {
		g, w := got[i], want[i]
		checkTime(t, "idempotency record "+w.Key+" CreatedAt", g.CreatedAt, w.CreatedAt)
		if g.Scope != w.Scope || g.Key != w.Key || !bytes.Equal(g.RequestHash, w.RequestHash) || g.Status != w.Status || !bytes.Equal(g.Body, w.Body) {
			t.Errorf("idempotency record read back as {%q %q %x %d %q}, want {%q %q %x %d %q}",
				g.Scope, g.Key, g.RequestHash, g.Status, g.Body, w.Scope, w.Key, w.RequestHash, w.Status, w.Body)
		}
	}
}

func testIdempotency(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	rec := func(key string, created time.Time, body string) podium.IdempotencyRecord {
		return podium.IdempotencyRecord{Scope: "k1 POST /v1/boards/b/scores", Key: key, RequestHash: []byte("hash-" + key), Status: 201, Body: []byte(body), CreatedAt: created}
	}
	r1, r2, r3 := rec("one", at(0), `{"n":1}`), rec("two", at(1000), `{"n":2}`), rec("three", at(2000), `{"n":3}`)
	other := r2
	other.Scope = "k2 POST /v1/scores" // the same key in another scope is another record
	commit(t, s, &podium.Batch{Idempotency: []podium.IdempotencyRecord{r1, r2, other}})
	commit(t, s, &podium.Batch{Idempotency: []podium.IdempotencyRecord{r3}})

	// A second answer under the same scope and key does not replace the first.
	dup := r1
	dup.Body, dup.Status = []byte(`{"n":"again"}`), 500
	commit(t, s, &podium.Batch{Idempotency: []podium.IdempotencyRecord{dup}})

	// A record stored without an answer (status 0, the marker committed with
	// the request's writes) takes the answer that comes later.
	marker := rec("four", at(3000), "")
	marker.Status, marker.Body = 0, nil
	commit(t, s, &podium.Batch{Idempotency: []podium.IdempotencyRecord{marker}})
	r4 := rec("four", at(3000), `{"n":4}`)
	commit(t, s, &podium.Batch{Idempotency: []podium.IdempotencyRecord{r4}})

	since := func(tm time.Time) []podium.IdempotencyRecord {
		t.Helper()
		recs, err := s.IdempotencyRecords(ctx, tm)
		if err != nil {
			t.Fatalf("IdempotencyRecords: %v", err)
		}
		slices.SortFunc(recs, func(a, b podium.IdempotencyRecord) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.Scope, b.Scope), strings.Compare(a.Key, b.Key))
		})
		return recs
	}
	checkRecords(t, since(time.Time{}), []podium.IdempotencyRecord{r1, r2, other, r3, r4})
	// since is inclusive, at millisecond precision.
	checkRecords(t, since(at(1000).Truncate(time.Millisecond)), []podium.IdempotencyRecord{r2, other, r3, r4})
	checkRecords(t, since(at(1001)), []podium.IdempotencyRecord{r3, r4})

	// The index: newest first, without bodies, as far as fn wants.
	var index []podium.IdempotencyRecord
	if err := s.IdempotencyIndex(ctx, time.Time{}, func(r *podium.IdempotencyRecord) bool {
		index = append(index, *r)
		return true
	}); err != nil {
		t.Fatalf("IdempotencyIndex: %v", err)
	}
	if len(index) != 5 {
		t.Fatalf("IdempotencyIndex gave %d records, want 5", len(index))
	}
	for i, r := range index {
		if r.Body != nil {
			t.Errorf("IdempotencyIndex gave %q with a body", r.Key)
		}
		if i > 0 && r.CreatedAt.After(index[i-1].CreatedAt) {
			t.Errorf("IdempotencyIndex is not newest first: %v after %v", r.CreatedAt, index[i-1].CreatedAt)
		}
	}
	bodyless := func(recs ...podium.IdempotencyRecord) []podium.IdempotencyRecord {
		for i := range recs {
			recs[i].Body = nil
		}
		return recs
	}
	checkRecords(t, index[:2], bodyless(r4, r3))
	n := 0
	err := s.IdempotencyIndex(ctx, at(1000).Truncate(time.Millisecond), func(*podium.IdempotencyRecord) bool { n++; return n < 2 })
	if err != nil || n != 2 {
		t.Errorf("IdempotencyIndex asked to stop after 2 called fn %d times (%v)", n, err)
	}
	// A lookup gives one record, body included.
	for _, want := range []podium.IdempotencyRecord{r1, r4, other} {
		got, ok, err := s.LookupIdempotency(ctx, want.Scope, want.Key)
		if err != nil || !ok {
			t.Fatalf("LookupIdempotency(%q, %q) = %v, %v", want.Scope, want.Key, ok, err)
		}
		checkRecords(t, []podium.IdempotencyRecord{got}, []podium.IdempotencyRecord{want})
	}
	if _, ok, err := s.LookupIdempotency(ctx, "k2 POST /v1/scores", "one"); err != nil || ok {
		t.Errorf("LookupIdempotency of a key stored only in another scope = %v, %v; want none", ok, err)
	}

	n, err = s.PruneIdempotency(ctx, at(1000).Truncate(time.Millisecond))
	if err != nil {
		t.Fatalf("PruneIdempotency: %v", err)
	}
	if n != 1 {
		t.Errorf("PruneIdempotency deleted %d records, want 1 (only those before the time)", n)
	}
	if recs := since(time.Time{}); len(recs) != 4 {
		t.Errorf("after pruning, %d records remain, want 4", len(recs))
	}
	if n, err := s.PruneIdempotency(ctx, at(1_000_000)); err != nil || n != 4 {
		t.Errorf("PruneIdempotency of everything = %d, %v; want 4", n, err)
	}

}

func testReplaceEntries(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	bd := putBoard(t, s, "b", podium.Daily, 2)
	other := putBoard(t, s, "other", podium.Daily, 2)
	commit(t, s, &podium.Batch{Upserts: []podium.Entry{
		entry(bd, 1, "2026-11-28", "a", 1, 1), entry(bd, 2, "2026-11-29", "a", 2, 2), entry(bd, 3, "2026-11-29", "b", 3, 3),
		entry(other, 1, "2026-11-29", "a", 7, 7),
	}})
	repl := []podium.Entry{entry(bd, 5, "2026-11-29", "c", -1, -1), entry(bd, 6, "2026-11-30", "a", 4, 4)}
	repl[0].Meta = json.RawMessage(`{"rebuilt":true}`)
	if err := s.ReplaceEntries(ctx, "b", repl, 6); err != nil {
		t.Fatalf("ReplaceEntries: %v", err)
	}
	if wm := watermarks(t, s); wm["b"] != 6 || wm["other"] != 0 {
		t.Errorf("watermarks after ReplaceEntries = %v, want b at 6 and other at 0", wm)
	}
	if es := load(t, s, "b", "2026-11-28"); len(es) != 0 {
		t.Errorf("a period absent from the replacement still has %d entries", len(es))
	}
	checkEntries(t, load(t, s, "b", "2026-11-29"), repl[:1])
	checkEntries(t, load(t, s, "b", "2026-11-30"), repl[1:])
	checkEntries(t, load(t, s, "other", "2026-11-29"), []podium.Entry{entry(other, 1, "2026-11-29", "a", 7, 7)})
	if ps := periods(t, s, "b"); !reflect.DeepEqual(ps, []podium.PeriodCount{{ID: "2026-11-30", Entries: 1}, {ID: "2026-11-29", Entries: 1}}) {
		t.Errorf("Periods after ReplaceEntries = %+v", ps)
	}
	if err := s.ReplaceEntries(ctx, "b", nil, 9); err != nil {
		t.Fatalf("ReplaceEntries(nil): %v", err)
	}
	if wm := watermarks(t, s); wm["b"] != 9 {
		t.Errorf("watermark after ReplaceEntries(nil) = %d, want 9", wm["b"])
	}
	if ps := periods(t, s, "b"); len(ps) != 0 {
		t.Errorf("ReplaceEntries with no entries left periods %+v", ps)
	}
}

func testLoadEntries(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	bd := putBoard(t, s, "b", podium.Never, 3)
	var want []podium.Entry
	for i := range 300 {
		e := entry(bd, uint64(i+1), "all", fmt.Sprintf("player-%03d", i), int64(i), -int64(i), int64(i)*1e12)
		if i%3 == 0 { // neighbours with and without meta catch a Meta that leaks between rows
			e.Meta = json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))
		}
		want = append(want, e)
	}
	commit(t, s, &podium.Batch{Upserts: want})
	checkEntries(t, load(t, s, "b", "all"), want)

	t.Run("UnknownBoard", func(t *testing.T) {
		called := false
		err := s.LoadEntries(ctx, "nope", "all", func(*podium.Entry) error { called = true; return nil })
		if err != nil || called {
			t.Errorf("LoadEntries of an unknown board: called=%v err=%v; want no call, no error", called, err)
		}
	})
	t.Run("StopsOnError", func(t *testing.T) {
		stop := errors.New("stop")
		calls := 0
		err := s.LoadEntries(ctx, "b", "all", func(*podium.Entry) error { calls++; return stop })
		if !errors.Is(err, stop) || calls != 1 {
			t.Errorf("LoadEntries with a failing callback: err=%v after %d calls; want the callback's error after 1 call", err, calls)
		}
	})
}

func testLog(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	bd := putBoard(t, s, "b", podium.Never, 2)
	var subs []podium.Submission
	// Committed out of order across batches; Log returns seq order.
	for _, seq := range []uint64{5, 3, 9, 1, 200, 12} {
		sb := sub(bd, seq, "all", fmt.Sprintf("p%d", seq), int64(seq), -int64(seq))
		if seq%2 == 1 {
			sb.Meta = json.RawMessage(`{"odd":true}`)
		}
		subs = append(subs, sb)
	}
	commit(t, s, &podium.Batch{Submissions: subs[:3]})
	commit(t, s, &podium.Batch{Submissions: subs[3:]})
	want := slices.Clone(subs)
	slices.SortFunc(want, func(a, b podium.Submission) int { return int(a.Seq) - int(b.Seq) })
	checkLog(t, logOf(t, s, "b"), want)
	if seq := lastSeq(t, s, "b"); seq != 200 {
		t.Errorf("LastSeq = %d, want 200", seq)
	}
	if seq := lastSeq(t, s, "unknown"); seq != 0 {
		t.Errorf("LastSeq of an unknown board = %d, want 0", seq)
	}
	stop := errors.New("stop")
	calls := 0
	if err := s.Log(ctx, "b", 0, func(*podium.Submission) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Log with a failing callback: err=%v after %d calls; want the callback's error after 1 call", err, calls)
	}
	// after: only what follows a seq, as a replay of the tail needs.
	var tail []podium.Submission
	if err := s.Log(ctx, "b", want[len(want)-2].Seq-1, func(sub *podium.Submission) error {
		c := *sub
		c.Keys = slices.Clone(sub.Keys)
		c.Meta = bytes.Clone(sub.Meta)
		tail = append(tail, c)
		return nil
	}); err != nil {
		t.Fatalf("Log after: %v", err)
	}
	checkLog(t, tail, want[len(want)-2:])
	if err := s.Log(ctx, "b", want[len(want)-1].Seq, func(*podium.Submission) error {
		t.Error("Log after the last seq called fn")
		return nil
	}); err != nil {
		t.Fatalf("Log after the last seq: %v", err)
	}
}

func testWatermarks(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	bd := putBoard(t, s, "b", podium.Never, 1)
	putBoard(t, s, "c", podium.Never, 1)
	if wm := watermarks(t, s); len(wm) != 0 {
		t.Errorf("a new store has watermarks %v", wm)
	}
	commit(t, s, &podium.Batch{Upserts: []podium.Entry{entry(bd, 3, podium.PeriodAll, "a", 1)},
		Watermarks: []podium.Watermark{{Board: "b", Seq: 3}, {Board: "c", Seq: 10}}})
	commit(t, s, &podium.Batch{Watermarks: []podium.Watermark{{Board: "b", Seq: 7}}})
	if wm := watermarks(t, s); !reflect.DeepEqual(wm, map[string]uint64{"b": 7, "c": 10}) {
		t.Errorf("watermarks = %v, want b 7 and c 10", wm)
	}
	if err := s.DeleteBoard(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if wm := watermarks(t, s); !reflect.DeepEqual(wm, map[string]uint64{"b": 7}) {
		t.Errorf("after deleting board c, watermarks = %v", wm)
	}
}

func watermarks(t *testing.T, s podium.Store) map[string]uint64 {
	t.Helper()
	wm, err := s.Watermarks(ctx)
	if err != nil {
		t.Fatalf("Watermarks: %v", err)
	}
	return wm
}

func testPeriods(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	for _, c := range []struct {
		every podium.Every
		ids   []string // oldest first, crossing a year
	}{
		{podium.Daily, []string{"2026-02-01", "2026-12-31", "2027-01-01", "2027-01-10"}},
		{podium.Weekly, []string{"2026-W09", "2026-W53", "2027-W01", "2027-W10"}},
		{podium.Monthly, []string{"2026-09", "2026-12", "2027-01", "2027-10"}},
	} {
		bd := putBoard(t, s, string(c.every), c.every, 1)
		var b podium.Batch
		var want []podium.PeriodCount
		seq := uint64(0)
		for i, id := range c.ids {
			for j := range i + 1 { // period i has i+1 entries
				seq++
				b.Upserts = append(b.Upserts, entry(bd, seq, id, fmt.Sprintf("p%d", j), int64(j)))
			}
			want = append([]podium.PeriodCount{{ID: id, Entries: i + 1}}, want...)
		}
		// Commit in an order unrelated to time.
		slices.Reverse(b.Upserts[:len(b.Upserts)/2])
		commit(t, s, &b)
		if got := periods(t, s, bd.ID); !reflect.DeepEqual(got, want) {
			t.Errorf("Periods of a %s board = %+v, want newest first %+v", c.every, got, want)
		}
	}
	if got := periods(t, s, "unknown"); len(got) != 0 {
		t.Errorf("Periods of an unknown board = %+v, want none", got)
	}
}
