package podium

import (
	"slices"
	"testing"
	"time"
)

// TestApplyBestKCopies: the entry Apply returns on a best_k board keeps its
// results in keys of its own, never in the current entry's or the
// submission's, whether the new result goes first, in the middle or last.
// The writer keeps the current entry in its overlay and the submission in
// the batch while the new entry goes into the index: a shared slice would
// let one change the other.
func TestApplyBestKCopies(t *testing.T) {
	b := &Board{Keys: []KeyDef{{Name: "t", Order: Asc}}, Mode: BestK, Keep: 3}
	at := time.Unix(1_700_000_000, 0)
	cur := &Entry{Keys: []int64{20}, At: at, Seq: 2, Results: []Result{
		{Keys: []int64{20}, At: at, Seq: 2},
		{Keys: []int64{40}, At: at, Seq: 1},
	}}
	for _, k := range []int64{10, 30, 50} {
		s := &Submission{Seq: 3, Kind: KindScore, Keys: []int64{k}, At: at.Add(time.Second)}
		next, changed, err := Apply(b, cur, s)
		if err != nil || !changed || len(next.Results) != 3 {
			t.Fatalf("keys %d: changed %v, %d results (%v)", k, changed, len(next.Results), err)
		}
		for i, r := range next.Results {
			for _, other := range append([][]int64{s.Keys, next.Keys}, cur.Results[0].Keys, cur.Results[1].Keys) {
				if &r.Keys[0] == &other[0] {
					t.Fatalf("keys %d: result %d shares its keys with the input or the entry", k, i)
				}
			}
		}
		got := make([]int64, len(next.Results))
		for i, r := range next.Results {
			got[i] = r.Keys[0]
		}
		want := map[int64][]int64{10: {10, 20, 40}, 30: {20, 30, 40}, 50: {20, 40, 50}}[k]
		if !slices.Equal(got, want) {
			t.Fatalf("keys %d: results %v, want %v", k, got, want)
		}
	}
}
