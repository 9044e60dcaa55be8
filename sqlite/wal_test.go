package sqlite

import (
	"testing"
)

func TestWALBudget(t *testing.T) {
	for _, tc := range []struct {
		opt, vol, want int64
	}{
		{0, 0, 64 << 20},         // volume unknown: the default
		{0, 100 << 30, 64 << 20}, // a large volume: the default
		{0, 20 << 20, 5 << 19},   // 20 MiB: an eighth, 2.5 MiB
		{0, 4 << 20, 1 << 20},    // never below 1 MiB
		{8 << 20, 20 << 20, 8 << 20},
		{1000, 0, 1 << 20},
	} {
		if got := budgetFor(tc.opt, tc.vol); got != tc.want {
			t.Errorf("budgetFor(%d, %d) = %d, want %d", tc.opt, tc.vol, got, tc.want)
		}
	}
	if pages, limit := walPragmas(64 << 20); pages != 8192 || limit != 32<<20 {
		t.Errorf("walPragmas(64 MiB) = %d pages, %d bytes", pages, limit)
	}
}

// TestWALStaysInBudget: with a 1 MiB budget, thousands of commits never
// leave a WAL much larger than the budget (checkpoints at half of it).
func TestWALStaysInBudget(t *testing.T) {
	s := openTest(t, Options{Sync: "normal", WALMax: 1 << 20})
	if err := s.PutBoard(ctx, board("b", 1)); err != nil {
		t.Fatal(err)
	}
	largest := int64(0)
	for i := range 3000 {
		if err := s.Commit(ctx, scores("b", uint64(i+1), 1)); err != nil {
			t.Fatal(err)
		}
		largest = max(largest, s.walSize())
	}
	// One commit's frames may pass the checkpoint mark before it runs.
	if largest > s.WALMax()+64<<10 {
		t.Fatalf("the WAL reached %d bytes with a budget of %d", largest, s.WALMax())
	}
}

// BenchmarkAfterWrite is the cost the WAL budget adds to a group commit
// of one score: mostly nothing, a look (an fstat and a statfs) once the
// WAL may have grown by half its slack.
func BenchmarkAfterWrite(b *testing.B) {
	s := benchStore(b, Options{Sync: "normal"})
	if err := s.PutBoard(ctx, board("b", 1)); err != nil {
		b.Fatal(err)
	}
	if err := s.Commit(ctx, scores("b", 1, 100)); err != nil {
		b.Fatal(err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for b.Loop() {
		s.afterWrite(ctx, nil, 1)
	}
}
