package groups_test

import (
	"math"
	"slices"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/groups"
)

// TestValue: the group rules over members' keys, the best k ranked under
// the board's orders, key by key.
func TestValue(t *testing.T) {
	desc := []podium.KeyDef{{Name: "points", Order: podium.Desc}}
	two := []podium.KeyDef{{Name: "ms", Order: podium.Asc}, {Name: "bbbv", Order: podium.Desc}}
	board := func(keys []podium.KeyDef, rule string, k int) *podium.Board {
		return &podium.Board{ID: "g", Keys: keys, GroupBoard: &podium.GroupBoard{Set: "s", Source: "src", Rule: rule, K: k}}
	}
	for _, c := range []struct {
		name    string
		def     *podium.Board
		entries [][]int64
		want    []int64
		ok      bool
		code    string
	}{
		{"NoEntries", board(desc, podium.GroupSum, 2), nil, nil, false, ""},
		{"SumBest2", board(desc, podium.GroupSum, 2), [][]int64{{5}, {30}, {10}}, []int64{40}, true, ""},
		{"SumAll", board(desc, podium.GroupSum, 0), [][]int64{{5}, {30}, {10}}, []int64{45}, true, ""},
		{"SumFewerThanK", board(desc, podium.GroupSum, 5), [][]int64{{5}, {30}}, []int64{35}, true, ""},
		{"AvgBest2", board(desc, podium.GroupAvg, 2), [][]int64{{5}, {30}, {11}}, []int64{20}, true, ""},
		{"AvgTowardZero", board(desc, podium.GroupAvg, 2), [][]int64{{-3}, {-4}}, []int64{-3}, true, ""},
		{"Best", board(desc, podium.GroupBest, 1), [][]int64{{5}, {30}, {10}}, []int64{30}, true, ""},
		{"BestAscThenDesc", board(two, podium.GroupBest, 1), [][]int64{{50, 1}, {40, 2}, {40, 9}}, []int64{40, 9}, true, ""},
		{"SumTwoKeysBest2", board(two, podium.GroupSum, 2), [][]int64{{50, 1}, {40, 2}, {40, 9}}, []int64{80, 11}, true, ""},
		{"Overflow", board(desc, podium.GroupSum, 0), [][]int64{{math.MaxInt64}, {1}}, nil, false, podium.ECodeUnprocessable},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok, err := groups.Value(c.def, c.entries)
			if c.code != "" {
				if podium.ErrorCode(err) != c.code {
					t.Fatalf("err = %v, want code %s", err, c.code)
				}
				return
			}
			if err != nil || ok != c.ok || !slices.Equal(got, c.want) {
				t.Fatalf("Value = %v, %v, %v; want %v, %v", got, ok, err, c.want, c.ok)
			}
		})
	}
}

// TestGroupBoardNormalize: what a group set or board checks alone.
func TestGroupBoardNormalize(t *testing.T) {
	k := []podium.KeyDef{{Name: "p", Order: podium.Desc}}
	for _, c := range []struct {
		name string
		b    podium.Board
		ok   bool
	}{
		{"SetDefaults", podium.Board{ID: "s", Keys: k, GroupSet: &podium.GroupSet{}}, true},
		{"SetTwoKeys", podium.Board{ID: "s", Keys: append(k, podium.KeyDef{Name: "q", Order: podium.Asc}), GroupSet: &podium.GroupSet{}}, false},
		{"SetResets", podium.Board{ID: "s", Keys: k, Reset: podium.Reset{Every: podium.Daily}, GroupSet: &podium.GroupSet{}}, false},
		{"SetCapTooHigh", podium.Board{ID: "s", Keys: k, GroupSet: &podium.GroupSet{MaxMembers: podium.MaxGroupMembers + 1}}, false},
		{"SetModeBest", podium.Board{ID: "s", Keys: k, Mode: podium.Best, GroupSet: &podium.GroupSet{}}, false},
		{"Board", podium.Board{ID: "g", Keys: k, GroupBoard: &podium.GroupBoard{Set: "s", Source: "p", Rule: "sum", K: 3}}, true},
		{"BoardRule", podium.Board{ID: "g", Keys: k, GroupBoard: &podium.GroupBoard{Set: "s", Source: "p", Rule: "median"}}, false},
		{"BoardSelf", podium.Board{ID: "g", Keys: k, GroupBoard: &podium.GroupBoard{Set: "g", Source: "p", Rule: "sum"}}, false},
		{"Both", podium.Board{ID: "g", Keys: k, GroupSet: &podium.GroupSet{}, GroupBoard: &podium.GroupBoard{Set: "s", Source: "p", Rule: "sum"}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.b
			err := b.Normalize()
			if (err == nil) != c.ok {
				t.Fatalf("Normalize = %v, want ok %v", err, c.ok)
			}
			if c.ok && b.Mode != podium.Latest {
				t.Fatalf("mode %s, want latest", b.Mode)
			}
			if c.name == "SetDefaults" && (b.GroupSet.MaxMembers != podium.DefaultGroupMembers || b.GroupSet.MaxPerPlayer != 1) {
				t.Fatalf("defaults: %+v", b.GroupSet)
			}
		})
	}
	if podium.ValidGroupID("Red") == nil || podium.ValidGroupID("red/blue") == nil || podium.ValidGroupID("red-1") != nil {
		t.Fatal("ValidGroupID")
	}
}
