package sqlite

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// playerLog commits n score rows on board b from seq first on; the player
// of seq s is who(s).
func playerLog(t *testing.T, s *Store, b string, first uint64, n int, who func(uint64) string) {
	t.Helper()
	var batch podium.Batch
	at := time.UnixMilli(1_700_000_000_000)
	for i := range n {
		seq := first + uint64(i)
		batch.Submissions = append(batch.Submissions, podium.Submission{Seq: seq, Board: b, Period: "all", Player: who(seq), Keys: []int64{int64(seq)}, At: at.Add(time.Duration(seq) * time.Millisecond)})
	}
	if err := s.Commit(ctx, &batch); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// inIndex counts board b's rows that the partial player index holds.
func inIndex(t *testing.T, s *Store, b string) int {
	t.Helper()
	var n int
	if err := s.w.QueryRowContext(ctx, "SELECT count(*) FROM submissions INDEXED BY submissions_player WHERE board = ? AND px IS NOT 0", b).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func withQuota(b *podium.Board, max int) *podium.Board {
	b.Quota = &podium.Quota{Max: max}
	if err := b.Normalize(); err != nil {
		panic(err)
	}
	return b
}

// alice logs every seventh row, bob the rest.
func alice7(seq uint64) string {
	if seq%7 == 0 {
		return "alice"
	}
	return "bob"
}

// The index holds the rows of boards with a quota or review holds only:
// a plain board's commit pays no random index insert.
func TestPlayerIndexOnlyForBoardsThatUseIt(t *testing.T) {
	s := openTest(t, Options{Sync: "normal"})
	plain, quota, review := board("plain", 1), withQuota(board("quota", 1), 5), board("review", 1)
	review.Review = &podium.Review{Hold: "all"}
	for _, b := range []*podium.Board{plain, quota, review} {
		if err := s.PutBoard(ctx, b); err != nil {
			t.Fatal(err)
		}
		playerLog(t, s, b.ID, 1, 30, alice7)
	}
	for id, want := range map[string]int{"plain": 0, "quota": 30, "review": 30} {
		if got := inIndex(t, s, id); got != want {
			t.Errorf("board %s: %d rows in the player index, want %d", id, got, want)
		}
	}
	// Counts are exact either way: the plain board is read by seq.
	for _, id := range []string{"plain", "quota"} {
		got, err := s.CountSubmissions(ctx, id, "all", []string{"alice", "bob", "carol"}, 28, time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"alice": 4, "bob": 24}; !reflect.DeepEqual(got, want) {
			t.Errorf("board %s: counts %v, want %v", id, got, want)
		}
	}
}

// A board that gains a quota has its earlier rows brought into the index,
// in chunks, before PutBoard returns; one that loses it logs new rows out.
func TestPlayerIndexBackfill(t *testing.T) {
	defer func(n int) { backfillSeqs = n }(backfillSeqs)
	backfillSeqs = 7
	s := openTest(t, Options{Sync: "normal"})
	b := board("b", 1)
	if err := s.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	playerLog(t, s, "b", 1, 50, alice7)
	if n := inIndex(t, s, "b"); n != 0 {
		t.Fatalf("%d rows indexed before the quota, want 0", n)
	}
	if err := s.PutBoard(ctx, withQuota(b, 3)); err != nil {
		t.Fatal(err)
	}
	if n := inIndex(t, s, "b"); n != 50 {
		t.Fatalf("%d rows indexed after the quota, want all 50", n)
	}
	if st := s.indexOf("b"); st != indexed {
		t.Fatalf("state after the backfill = %d, want indexed", st)
	}
	var pending int
	if err := s.w.QueryRowContext(ctx, "SELECT count(*) FROM player_index_backfill").Scan(&pending); err != nil || pending != 0 {
		t.Fatalf("backfill rows left: %d, %v", pending, err)
	}
	playerLog(t, s, "b", 51, 10, alice7)
	got, err := s.CountSubmissions(ctx, "b", "all", []string{"alice"}, 100, time.Time{}, time.Time{})
	if err != nil || got["alice"] != 8 {
		t.Fatalf("alice's count = %v, %v; want 8 (seqs 7 to 56)", got, err)
	}
	b.Quota = nil
	if err := s.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	playerLog(t, s, "b", 61, 10, alice7)
	if n := inIndex(t, s, "b"); n != 60 {
		t.Errorf("%d rows indexed after the quota was removed, want the 60 logged before", n)
	}
}

// A backfill that a crash cut short resumes when the store opens, and
// the index is not used for counts until it is whole.
func TestPlayerIndexBackfillResumes(t *testing.T) {
	defer func(n int) { backfillSeqs = n }(backfillSeqs)
	backfillSeqs = 4
	s := openTest(t, Options{Sync: "normal"})
	b := board("b", 1)
	if err := s.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	playerLog(t, s, "b", 1, 40, alice7)
	// What a crash in the middle of PutBoard's backfill leaves: the board
	// stored with its quota, the backfill row, seqs above 24 indexed.
	body, err := withQuota(b, 3).Document()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(ctx, "UPDATE boards SET body = ? WHERE id = 'b'", string(body)); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"INSERT INTO player_index_backfill (board, next) VALUES ('b', 24)", "UPDATE submissions SET px = 1 WHERE board = 'b' AND seq > 24"} {
		if _, err := s.w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s = reopen(t, s, Options{Sync: "normal"})
	if n := inIndex(t, s, "b"); n != 40 {
		t.Fatalf("%d rows indexed after reopening, want 40", n)
	}
	if st := s.indexOf("b"); st != indexed {
		t.Fatalf("state after reopening = %d, want indexed", st)
	}
	got, err := s.CountSubmissions(ctx, "b", "all", []string{"alice"}, 100, time.Time{}, time.Time{})
	if err != nil || got["alice"] != 5 {
		t.Fatalf("alice's count = %v, %v; want 5", got, err)
	}
}

// History on a board without the index scans HistoryScan rows a call and
// says where it stopped; following resume gives exactly the rows an
// indexed board gives in one call.
func TestHistoryScan(t *testing.T) {
	s := openTest(t, Options{Sync: "normal", HistoryScan: 10})
	plain, quota := board("plain", 1), withQuota(board("quota", 1), 100)
	for _, b := range []*podium.Board{plain, quota} {
		if err := s.PutBoard(ctx, b); err != nil {
			t.Fatal(err)
		}
		playerLog(t, s, b.ID, 1, 75, alice7)
	}
	want, resume, err := s.History(ctx, "quota", "alice", []string{"all"}, 0, 100)
	if err != nil || resume != 0 || len(want) != 10 {
		t.Fatalf("indexed history: %d rows, resume %d, %v; want alice's 10 rows at once", len(want), resume, err)
	}
	var got []podium.HistoryRow
	var calls []string
	before := uint64(0)
	for range 20 {
		rows, resume, err := s.History(ctx, "plain", "alice", []string{"all"}, before, 3)
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, fmt.Sprintf("%d:%d/%d", before, len(rows), resume))
		got = append(got, rows...)
		switch {
		case len(rows) == 3:
			before = rows[2].Seq
		case resume != 0:
			before = resume
		default:
			before = 0
		}
		if before == 0 {
			break
		}
	}
	if len(got) != len(want) {
		t.Fatalf("paged history: %d rows (calls %v), want %d", len(got), calls, len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		w.Board, g.Board = "", ""
		if !reflect.DeepEqual(w, g) {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
	// The first call looks at seqs 66-75 only (alice has 70 there).
	if calls[0] != "0:1/66" {
		t.Errorf("first call = %s, want one row and a resume at 66", calls[0])
	}
}
