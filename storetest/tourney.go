package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// Tournaments (podium.TourneyStore): joins, payouts and settlements are
// stored by Commit in the batch's transaction, all or nothing with its log
// rows; a fence that no longer holds stores nothing; leases change hands
// only when free or expired, and the epoch grows when they do; DeleteBoard
// removes a board's joins, payouts and settlement.

func tourneyStore(t *testing.T, s podium.Store) podium.TourneyStore {
	t.Helper()
	ts, ok := s.(podium.TourneyStore)
	if !ok {
		t.Fatalf("%T is not a podium.TourneyStore", s)
	}
	return ts
}

func testTourney(t *testing.T, open func(*testing.T) podium.Store) {
	t.Run("JoinsPayouts", func(t *testing.T) {
		s := open(t)
		ts := tourneyStore(t, s)
		b := &podium.Board{ID: "cup", Keys: []podium.KeyDef{{Name: "t", Order: podium.Asc}}, CreatedAt: t0, UpdatedAt: t0}
		mustNormalize(t, b)
		if err := s.PutBoard(ctx, b); err != nil {
			t.Fatal(err)
		}
		commit(t, s, &podium.Batch{Parts: tourneyRows(t, s, &podium.TourneyBatch{Joins: []podium.Join{
			{Board: "cup", Player: "bob", N: 1, At: at(1)}, {Board: "cup", Player: "amy", N: 2, At: at(2)}}})})
		commit(t, s, &podium.Batch{Submissions: []podium.Submission{sub(b, 1, "all", "cid", 5)},
			Parts: tourneyRows(t, s, &podium.TourneyBatch{Joins: []podium.Join{{Board: "cup", Player: "cid", N: 3, At: at(3)}}})})
		js, err := ts.Joins(ctx, "cup", 0)
		if err != nil {
			t.Fatal(err)
		}
		want := []podium.Join{{Board: "cup", Player: "bob", N: 1, At: at(1)}, {Board: "cup", Player: "amy", N: 2, At: at(2)},
			{Board: "cup", Player: "cid", N: 3, At: at(3)}}
		if len(js) != 3 {
			t.Fatalf("Joins = %+v, want %+v", js, want)
		}
		for i := range js {
			if js[i].Player != want[i].Player || js[i].N != want[i].N || !js[i].At.Equal(want[i].At.Truncate(time.Millisecond)) {
				t.Fatalf("Joins[%d] = %+v, want %+v", i, js[i], want[i])
			}
		}
		if js, err := ts.Joins(ctx, "cup", 2); err != nil || len(js) != 1 || js[0].Player != "cid" {
			t.Fatalf("Joins after 2 = %+v, %v; want cid alone", js, err)
		}
		// A join twice fails the whole batch: its log row is not stored.
		if err := s.Commit(ctx, &podium.Batch{Submissions: []podium.Submission{sub(b, 2, "all", "bob", 7)},
			Parts: tourneyRows(t, s, &podium.TourneyBatch{Joins: []podium.Join{{Board: "cup", Player: "bob", N: 4, At: at(4)}}})}); err == nil {
			t.Fatal("a second join of bob was stored")
		}
		if seq, err := s.LastSeq(ctx, "cup"); err != nil || seq != 1 {
			t.Fatalf("LastSeq = %d, %v; want 1 (the failed batch stored nothing)", seq, err)
		}

		// Payouts are upserted; a later one in the same batch wins.
		commit(t, s, &podium.Batch{Parts: tourneyRows(t, s, &podium.TourneyBatch{
			Payouts: []podium.Payout{{Board: "cup", Player: "bob", Rank: 1, Points: 1000, At: at(10)},
				{Board: "cup", Player: "amy", Rank: 2, Points: 500, At: at(10)},
				{Board: "cup", Player: "amy", Rank: 3, Points: 333, At: at(11)}},
			Settlements: []podium.Settlement{{Board: "cup", SettledAt: at(10), Runs: 1, Players: 2, Paid: 1333, Epoch: 0, Holder: "n1"}},
		})})
		commit(t, s, &podium.Batch{Parts: tourneyRows(t, s, &podium.TourneyBatch{
			Payouts:     []podium.Payout{{Board: "cup", Player: "bob", Rank: 0, Points: 0, At: at(20)}},
			Settlements: []podium.Settlement{{Board: "cup", SettledAt: at(20), Runs: 2, Players: 2, Paid: 333, Epoch: 3, Holder: "n2"}},
		})})
		ps, err := ts.Payouts(ctx, "cup")
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 2 || ps[0].Player != "amy" || ps[0].Rank != 3 || ps[0].Points != 333 || !ps[0].At.Equal(at(11).Truncate(time.Millisecond)) ||
			ps[1].Player != "bob" || ps[1].Rank != 0 || ps[1].Points != 0 || !ps[1].At.Equal(at(20).Truncate(time.Millisecond)) {
			t.Fatalf("Payouts = %+v", ps)
		}
		sts, err := ts.Settlements(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(sts) != 1 || sts[0].Board != "cup" || sts[0].Runs != 2 || sts[0].Paid != 333 || sts[0].Epoch != 3 ||
			sts[0].Holder != "n2" || !sts[0].SettledAt.Equal(at(20).Truncate(time.Millisecond)) {
			t.Fatalf("Settlements = %+v", sts)
		}

		if err := s.DeleteBoard(ctx, "cup"); err != nil {
			t.Fatal(err)
		}
		js, _ = ts.Joins(ctx, "cup", 0)
		ps, _ = ts.Payouts(ctx, "cup")
		sts, _ = ts.Settlements(ctx)
		if len(js)+len(ps)+len(sts) != 0 {
			t.Fatalf("after DeleteBoard: joins %v, payouts %v, settlements %v", js, ps, sts)
		}
	})

	t.Run("Lease", func(t *testing.T) {
		s := open(t)
		ts := tourneyStore(t, s)
		now := t0.Truncate(time.Millisecond)
		l, ok, err := ts.AcquireLease(ctx, "settle", "a", now, 10*time.Second)
		if err != nil || !ok || l.Holder != "a" || l.Epoch != 1 || !l.Expires.Equal(now.Add(10*time.Second)) {
			t.Fatalf("first AcquireLease = %+v, %v, %v; want a at epoch 1", l, ok, err)
		}
		if l2, ok, err := ts.AcquireLease(ctx, "settle", "b", now.Add(time.Second), 10*time.Second); err != nil || ok || l2.Holder != "a" || l2.Epoch != 1 {
			t.Fatalf("b took a held lease: %+v, %v, %v", l2, ok, err)
		}
		if l2, ok, err := ts.AcquireLease(ctx, "settle", "a", now.Add(5*time.Second), 10*time.Second); err != nil || !ok || l2.Epoch != 1 {
			t.Fatalf("renewal by a = %+v, %v, %v; want the same epoch", l2, ok, err)
		}
		fenced := func(holder string, epoch int64) error {
			return s.Commit(ctx, &podium.Batch{Parts: tourneyRows(t, s, &podium.TourneyBatch{Fence: &podium.Fence{Name: "settle", Holder: holder, Epoch: epoch},
				Payouts: []podium.Payout{{Board: "x", Player: holder, Rank: 1, Points: epoch, At: now}}})})
		}
		if err := fenced("a", 1); err != nil {
			t.Fatalf("a commits under its lease: %v", err)
		}
		// Expired: b takes it over at the next epoch, and a's fence fails.
		l2, ok, err := ts.AcquireLease(ctx, "settle", "b", now.Add(16*time.Second), 10*time.Second)
		if err != nil || !ok || l2.Holder != "b" || l2.Epoch != 2 {
			t.Fatalf("takeover = %+v, %v, %v; want b at epoch 2", l2, ok, err)
		}
		err = fenced("a", 1)
		if err == nil || podium.ErrorCode(err) != podium.ECodeConflict {
			t.Fatalf("a committed after losing its lease: %v (want a conflict)", err)
		}
		if err := fenced("b", 2); err != nil {
			t.Fatalf("b commits under its lease: %v", err)
		}
		ps, _ := ts.Payouts(ctx, "x")
		want := []podium.Payout{{Board: "x", Player: "a", Rank: 1, Points: 1, At: now}, {Board: "x", Player: "b", Rank: 1, Points: 2, At: now}}
		if len(ps) != 2 || ps[0].Points != 1 || ps[1].Points != 2 {
			t.Fatalf("Payouts = %+v, want %+v (the fenced-out commit stored nothing)", ps, want)
		}
		// Released: a takes it at once, at the next epoch; a release by a
		// stale epoch does nothing.
		if err := ts.ReleaseLease(ctx, "settle", "b", 1); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := ts.AcquireLease(ctx, "settle", "a", now.Add(17*time.Second), 10*time.Second); ok {
			t.Fatal("a release at a stale epoch freed the lease")
		}
		if err := ts.ReleaseLease(ctx, "settle", "b", 2); err != nil {
			t.Fatal(err)
		}
		l3, ok, err := ts.AcquireLease(ctx, "settle", "a", now.Add(17*time.Second), 10*time.Second)
		if err != nil || !ok || !reflect.DeepEqual([]any{l3.Holder, l3.Epoch}, []any{"a", int64(3)}) {
			t.Fatalf("after release = %+v, %v, %v; want a at epoch 3", l3, ok, err)
		}
	})
}
