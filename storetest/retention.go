package storetest

import (
	"fmt"
	"testing"

	"github.com/podiumhq/podium"
)

// testPrunePeriods: PrunePeriods deletes the entries and log rows of the
// periods before its bound, at most limit rows a call, entries first,
// the log from its head up to the first kept row, never the board's last
// logged row, and nothing of another board or a kept period.
func testPrunePeriods(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	rs, ok := s.(podium.RetentionStore)
	if !ok {
		t.Skip("the store does not implement podium.RetentionStore")
	}
	b := putBoard(t, s, "daily", podium.Daily, 1)
	other := putBoard(t, s, "other", podium.Daily, 1)
	// Days 01..03 are old, 04 is kept: 5 players each, one log row per
	// entry, in day order; then one late delete row of day 01 after day
	// 04's rows; the other board has the same rows.
	var seq uint64
	days := []string{"2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"}
	for _, bd := range []*podium.Board{b, other} {
		seq = 0
		var batch podium.Batch
		for _, d := range days {
			for p := 0; p < 5; p++ {
				seq++
				player := fmt.Sprintf("p%d", p)
				batch.Submissions = append(batch.Submissions, sub(bd, seq, d, player, int64(p)))
				batch.Upserts = append(batch.Upserts, entry(bd, seq, d, player, int64(p)))
			}
		}
		seq++
		late := podium.Submission{Seq: seq, Board: bd.ID, Period: "2026-11-01", Player: "gone", Kind: podium.KindDelete, At: at(int64(seq))}
		batch.Submissions = append(batch.Submissions, late)
		commit(t, s, &batch)
	}
	// 15 old entries and 15 old log rows: 30 rows, 7 a call.
	total, calls := 0, 0
	for {
		n, err := rs.PrunePeriods(ctx, b.ID, "2026-11-04", 7)
		if err != nil {
			t.Fatalf("PrunePeriods: %v", err)
		}
		if n > 7 {
			t.Fatalf("PrunePeriods deleted %d rows with a limit of 7", n)
		}
		total += n
		calls++
		if n < 7 {
			break
		}
		if calls > 10 {
			t.Fatal("PrunePeriods never ends")
		}
	}
	if total != 30 {
		t.Fatalf("deleted %d rows, want 30 (15 entries, 15 log rows)", total)
	}
	for _, d := range days[:3] {
		if got := load(t, s, b.ID, d); len(got) != 0 {
			t.Errorf("period %s keeps %d entries", d, len(got))
		}
		if got := load(t, s, other.ID, d); len(got) != 5 {
			t.Errorf("the other board's period %s has %d entries, want 5", d, len(got))
		}
	}
	if got := load(t, s, b.ID, days[3]); len(got) != 5 {
		t.Errorf("the kept period has %d entries, want 5", len(got))
	}
	lg := logOf(t, s, b.ID)
	if len(lg) != 6 || lg[0].Period != days[3] || lg[5].Seq != seq {
		t.Errorf("log after the prune: %d rows (first %+v), want day 04's 5 and the late row %d", len(lg), lg[0], seq)
	}
	if last, err := s.LastSeq(ctx, b.ID); err != nil || last != seq {
		t.Errorf("LastSeq = %d, %v; want %d", last, err, seq)
	}
	if n := len(logOf(t, s, other.ID)); n != 21 {
		t.Errorf("the other board's log has %d rows, want 21", n)
	}
	pcs, err := s.Periods(ctx, b.ID)
	if err != nil || len(pcs) != 1 || pcs[0].ID != days[3] {
		t.Errorf("Periods = %v, %v; want only %s", pcs, err, days[3])
	}

	// The board's last logged row stays even in an old period: on a store
	// that takes the head from the log, its seq would be reused.
	solo := putBoard(t, s, "solo", podium.Daily, 1)
	var batch podium.Batch
	for i := uint64(1); i <= 3; i++ {
		batch.Submissions = append(batch.Submissions, sub(solo, i, "2026-11-01", "p", int64(i)))
	}
	batch.Upserts = append(batch.Upserts, entry(solo, 3, "2026-11-01", "p", 3))
	commit(t, s, &batch)
	n, err := rs.PrunePeriods(ctx, solo.ID, "2026-11-04", 100)
	if err != nil || n != 3 {
		t.Fatalf("PrunePeriods(solo) = %d, %v; want 3 (the entry and two of three log rows)", n, err)
	}
	if last, err := s.LastSeq(ctx, solo.ID); err != nil || last != 3 {
		t.Errorf("LastSeq(solo) = %d, %v; want 3", last, err)
	}
	if n, err := rs.PrunePeriods(ctx, solo.ID, "2026-11-04", 100); err != nil || n != 0 {
		t.Errorf("a second PrunePeriods = %d, %v; want 0", n, err)
	}
	if n, err := rs.PrunePeriods(ctx, "missing", "2026-11-04", 100); err != nil || n != 0 {
		t.Errorf("PrunePeriods(missing board) = %d, %v; want 0, nil", n, err)
	}
}
