package storetest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// testLimits: a board's key bounds and quota survive the store, and
// CountSubmissions counts exactly one player's score submissions of one
// period, up to a seq and within a time window (quota.go).
func testLimits(t *testing.T, open func(*testing.T) podium.Store) {
	i64 := func(v int64) *int64 { return &v }
	t.Run("BoardRoundTrip", func(t *testing.T) {
		s := open(t)
		b := podium.Board{ID: "daily", Keys: []podium.KeyDef{
			{Name: "time_ms", Order: podium.Asc, Min: i64(1000), Max: i64(3_600_000)},
			{Name: "bbbv", Order: podium.Desc, Min: i64(-5)},
		}, Reset: podium.Reset{Every: podium.Daily}, Quota: &podium.Quota{Max: 3}, CreatedAt: t0, UpdatedAt: t0}
		mustNormalize(t, &b)
		if err := s.PutBoard(ctx, &b); err != nil {
			t.Fatalf("PutBoard: %v", err)
		}
		got := boards(t, s)
		if len(got) != 1 {
			t.Fatalf("Boards returned %d boards, want 1", len(got))
		}
		checkBoard(t, got[0], b)
		if k := got[0].Keys[1]; k.Max != nil || k.Min == nil || *k.Min != -5 {
			t.Errorf("keys[1] read back with min %v, max %v; want -5 and none", k.Min, k.Max)
		}
	})
	t.Run("CountSubmissions", func(t *testing.T) {
		s := open(t)
		b := board(t, "daily", 1)
		other := board(t, "other", 1)
		// A day of board "daily": alice scores at seqs 1, 2, 4 and 7 (7 in
		// another period), bob at 3, an admin deletes alice's entry at 5
		// (not a score), and alice scores on another board at 1.
		subs := []podium.Submission{
			sub(b, 1, "2026-11-30", "alice", 10), sub(b, 2, "2026-11-30", "alice", 11),
			sub(b, 3, "2026-11-30", "bob", 12), sub(b, 4, "2026-11-30", "alice", 13),
			{Seq: 5, Board: b.ID, Period: "2026-11-30", Player: "alice", Kind: podium.KindDelete, At: at(5)},
			sub(b, 6, "2026-11-30", "alice", 14), sub(b, 7, "2026-12-01", "alice", 15),
			sub(other, 1, "2026-11-30", "alice", 1),
		}
		commit(t, s, &podium.Batch{Submissions: subs})
		var zero time.Time
		for _, c := range []struct {
			name, period, player string
			upTo                 uint64
			since, until         time.Time
			want                 int
		}{
			{"all of a period", "2026-11-30", "alice", 100, zero, zero, 4},
			{"up to a seq", "2026-11-30", "alice", 4, zero, zero, 3},
			{"seq 0", "2026-11-30", "alice", 0, zero, zero, 0},
			{"another player", "2026-11-30", "bob", 100, zero, zero, 1},
			{"another period", "2026-12-01", "alice", 100, zero, zero, 1},
			{"no such player", "2026-11-30", "carol", 100, zero, zero, 0},
			// at(n) is the time of seq n: [at(2), at(6)) holds 2 and 4.
			{"a window", "2026-11-30", "alice", 100, at(2), at(6), 2},
			{"a window past them", "2026-11-30", "alice", 100, at(7), at(100), 0},
			{"max seq", "2026-11-30", "alice", ^uint64(0), zero, zero, 4},
		} {
			got, err := s.CountSubmissions(ctx, b.ID, c.period, []string{c.player}, c.upTo, c.since, c.until)
			if err != nil || got[c.player] != c.want || len(got) > 1 || c.want == 0 && len(got) != 0 {
				t.Errorf("%s: CountSubmissions = %v, %v; want %s: %d", c.name, got, err, c.player, c.want)
			}
		}
		// Many players at once (more than a store may bind in one
		// statement), the ones without submissions left out.
		many := []string{"carol", "alice"}
		for i := range 1200 {
			many = append(many, fmt.Sprintf("nobody-%d", i))
		}
		many = append(many, "bob")
		got, err := s.CountSubmissions(ctx, b.ID, "2026-11-30", many, 100, zero, zero)
		if err != nil || !reflect.DeepEqual(got, map[string]int{"alice": 4, "bob": 1}) {
			t.Errorf("CountSubmissions of %d players = %v, %v; want alice 4, bob 1", len(many), got, err)
		}
		got, err = s.CountSubmissions(ctx, "missing", "2026-11-30", []string{"alice"}, 100, zero, zero)
		if err != nil || len(got) != 0 {
			t.Errorf("CountSubmissions of a board without a log = %v, %v; want none", got, err)
		}
		got, err = s.CountSubmissions(ctx, b.ID, "2026-11-30", nil, 100, zero, zero)
		if err != nil || len(got) != 0 {
			t.Errorf("CountSubmissions of no players = %v, %v; want none", got, err)
		}
	})
}
