package rank

import (
	"math"
	"slices"
	"testing"
)

// order returns the players of x in rank order among all entries.
func order(x *Index) []uint32 {
	var ps []uint32
	x.Range(1, x.Len(), true, func(_ int, e Entry) bool {
		ps = append(ps, e.Player)
		return true
	})
	return ps
}

func TestOrder(t *testing.T) {
	const (
		minI = math.MinInt64
		maxI = math.MaxInt64
	)
	type k = [4]int64
	tests := []struct {
		name    string
		desc    []bool
		entries []Entry // Player is the expected rank
	}{
		{"DescendingKey", []bool{true}, []Entry{
			{Player: 1, Keys: k{maxI}, Seq: 1},
			{Player: 2, Keys: k{1}, Seq: 2},
			{Player: 3, Keys: k{0}, Seq: 3},
			{Player: 4, Keys: k{-1}, Seq: 4},
			{Player: 5, Keys: k{minI + 1}, Seq: 5},
			{Player: 6, Keys: k{minI}, Seq: 6},
		}},
		{"AscendingKey", []bool{false}, []Entry{
			{Player: 1, Keys: k{minI}, Seq: 1},
			{Player: 2, Keys: k{-1}, Seq: 2},
			{Player: 3, Keys: k{0}, Seq: 3},
			{Player: 4, Keys: k{maxI - 1}, Seq: 4},
			{Player: 5, Keys: k{maxI}, Seq: 5},
		}},
		{"MixedDirections", []bool{true, false}, []Entry{
			{Player: 1, Keys: k{10, minI}, Seq: 9},
			{Player: 2, Keys: k{10, 5}, Seq: 8},
			{Player: 3, Keys: k{10, maxI}, Seq: 7},
			{Player: 4, Keys: k{9, minI}, Seq: 6},
		}},
		{"FourKeys", []bool{false, true, false, true}, []Entry{
			{Player: 1, Keys: k{0, 0, 0, 1}, Seq: 4},
			{Player: 2, Keys: k{0, 0, 0, 0}, Seq: 3},
			{Player: 3, Keys: k{0, 0, 1, maxI}, Seq: 2},
			{Player: 4, Keys: k{0, -1, minI, maxI}, Seq: 1},
			{Player: 5, Keys: k{1, maxI, minI, maxI}, Seq: 0},
		}},
		{"TieBrokenByAtThenSeq", []bool{true}, []Entry{
			{Player: 1, Keys: k{7}, At: minI, Seq: 50},
			{Player: 2, Keys: k{7}, At: -1, Seq: 40},
			{Player: 3, Keys: k{7}, At: 1000, Seq: 1},
			{Player: 4, Keys: k{7}, At: 1000, Seq: 2},
			{Player: 5, Keys: k{7}, At: maxI, Seq: 0},
		}},
		{"SeqAcrossTheSignBit", []bool{true}, []Entry{
			{Player: 1, Keys: k{7}, Seq: 0},
			{Player: 2, Keys: k{7}, Seq: 1<<63 - 1},
			{Player: 3, Keys: k{7}, Seq: 1 << 63},
			{Player: 4, Keys: k{7}, Seq: math.MaxUint64},
		}},
		{"UnusedKeysIgnored", []bool{true}, []Entry{
			{Player: 1, Keys: k{2, minI, minI, minI}, Seq: 2},
			{Player: 2, Keys: k{1, maxI, maxI, maxI}, Seq: 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Insert in reverse and check, then bulk load and check.
			x := New(tt.desc)
			for i := len(tt.entries) - 1; i >= 0; i-- {
				x.Put(tt.entries[i])
			}
			want := make([]uint32, len(tt.entries))
			for i := range want {
				want[i] = uint32(i + 1)
			}
			if got := order(x); !slices.Equal(got, want) {
				t.Errorf("after Put: order %v, want %v", got, want)
			}
			y := New(tt.desc)
			y.Load(tt.entries)
			if got := order(y); !slices.Equal(got, want) {
				t.Errorf("after Load: order %v, want %v", got, want)
			}
			for _, e := range tt.entries {
				if r, _ := x.Rank(e.Player, true); r != int(e.Player) {
					t.Errorf("Rank(%d) = %d", e.Player, r)
				}
				got, _ := x.Get(e.Player)
				for i := len(tt.desc); i < 4; i++ {
					e.Keys[i] = 0
				}
				if got != e {
					t.Errorf("Get(%d) = %+v, want %+v (unused keys 0)", e.Player, got, e)
				}
			}
		})
	}
}

func TestHiddenRanks(t *testing.T) {
	x := New([]bool{true})
	for p := uint32(1); p <= 5; p++ {
		x.Put(Entry{Player: p, Keys: [4]int64{int64(100 - p)}, Seq: uint64(p)})
	}
	// Ranks by player: 1 2 3 4 5. Hide 2 and 4.
	x.SetHidden(2, true)
	x.Put(Entry{Player: 4, Hidden: true, Keys: [4]int64{96}, Seq: 9})

	t.Run("Counts", func(t *testing.T) {
		if x.Len() != 5 || x.Visible() != 3 {
			t.Errorf("Len/Visible = %d/%d, want 5/3", x.Len(), x.Visible())
		}
	})
	t.Run("Rank", func(t *testing.T) {
		for _, c := range []struct {
			p        uint32
			all, vis int
		}{{1, 1, 1}, {2, 2, 2}, {3, 3, 2}, {4, 4, 3}, {5, 5, 3}} {
			if r, _ := x.Rank(c.p, true); r != c.all {
				t.Errorf("Rank(%d, all) = %d, want %d", c.p, r, c.all)
			}
			// A hidden player stands after the visible ones ahead of it.
			if r, _ := x.Rank(c.p, false); r != c.vis {
				t.Errorf("Rank(%d, visible) = %d, want %d", c.p, r, c.vis)
			}
		}
	})
	t.Run("At", func(t *testing.T) {
		for rank, p := range []uint32{1, 3, 5} {
			if e, ok := x.At(rank+1, false); !ok || e.Player != p {
				t.Errorf("At(%d, visible) = %d %v, want %d", rank+1, e.Player, ok, p)
			}
		}
		if _, ok := x.At(4, false); ok {
			t.Error("At(4, visible) found an entry past the visible ones")
		}
		if e, _ := x.At(4, true); e.Player != 4 || !e.Hidden {
			t.Errorf("At(4, all) = %+v, want hidden player 4", e)
		}
	})
	t.Run("Range", func(t *testing.T) {
		var got []int
		x.Range(2, 10, false, func(r int, e Entry) bool {
			got = append(got, r, int(e.Player))
			return true
		})
		if want := []int{2, 3, 3, 5}; !slices.Equal(got, want) {
			t.Errorf("Range(2, visible) = %v, want rank,player %v", got, want)
		}
	})
	t.Run("Show", func(t *testing.T) {
		y := New([]bool{true})
		y.Put(Entry{Player: 1, Hidden: true, Keys: [4]int64{5}})
		y.Put(Entry{Player: 2, Keys: [4]int64{4}, Seq: 1})
		if r, _ := y.Rank(2, false); r != 1 {
			t.Errorf("Rank behind a hidden player = %d, want 1", r)
		}
		if !y.SetHidden(1, false) || y.Visible() != 2 {
			t.Errorf("SetHidden(1, false): Visible = %d, want 2", y.Visible())
		}
		if r, _ := y.Rank(2, false); r != 2 {
			t.Errorf("Rank after showing the player ahead = %d, want 2", r)
		}
		if y.SetHidden(3, true) {
			t.Error("SetHidden of a player without an entry returned true")
		}
	})
}

func TestLoadLastDuplicateWins(t *testing.T) {
	x := New([]bool{true})
	x.Put(Entry{Player: 9, Keys: [4]int64{1}})
	x.Load([]Entry{
		{Player: 1, Keys: [4]int64{10}, Seq: 1},
		{Player: 2, Keys: [4]int64{20}, Seq: 2},
		{Player: 1, Keys: [4]int64{30}, Seq: 3},
	})
	if x.Len() != 2 {
		t.Fatalf("Len = %d, want 2 (old content replaced, duplicate folded)", x.Len())
	}
	if e, _ := x.Get(1); e.Keys[0] != 30 {
		t.Errorf("player 1 keeps key %d, want the last one, 30", e.Keys[0])
	}
	if _, ok := x.Get(9); ok {
		t.Error("Load kept an entry from before")
	}
}

func TestRangeBounds(t *testing.T) {
	x := New([]bool{false})
	for p := range uint32(10) {
		x.Put(Entry{Player: p, Keys: [4]int64{int64(p)}, Seq: uint64(p)})
	}
	for _, c := range []struct {
		name     string
		start, n int
		want     []uint32
	}{
		{"StartBelowOne", -5, 2, []uint32{0, 1}},
		{"Tail", 9, 5, []uint32{8, 9}},
		{"PastEnd", 11, 5, nil},
		{"ZeroCount", 1, 0, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []uint32
			x.Range(c.start, c.n, true, func(_ int, e Entry) bool {
				got = append(got, e.Player)
				return true
			})
			if !slices.Equal(got, c.want) {
				t.Errorf("Range(%d, %d) = %v, want %v", c.start, c.n, got, c.want)
			}
		})
	}
}

func TestPanics(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"NoKeys", func() { New(nil) }},
		{"FiveKeys", func() { New(make([]bool, 5)) }},
		{"PutBigPlayer", func() { New([]bool{true}).Put(Entry{Player: 1 << 31}) }},
		{"LoadBigPlayer", func() { New([]bool{true}).Load([]Entry{{Player: math.MaxUint32}}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			c.f()
		})
	}
}

func TestBytesGrows(t *testing.T) {
	x := New([]bool{true})
	empty := x.Bytes()
	for p := range uint32(10000) {
		x.Put(Entry{Player: p, Keys: [4]int64{int64(p)}})
	}
	per := float64(x.Bytes()-empty) / 10000
	if per < 28 || per > 64 {
		t.Errorf("Bytes says %.1f B/entry for 1 key, want 28..64", per)
	}
}

// TestAheadSharesRanks: entries equal on every key share the rank of the
// first of them (1, 2, 2, 4), counted over all entries or visible ones.
func TestAheadSharesRanks(t *testing.T) {
	x := New([]bool{true, false}) // points desc, then time asc
	put := func(p uint32, pts, ms int64, seq uint64, hidden bool) {
		x.Put(Entry{Player: p, Keys: [4]int64{pts, ms}, At: int64(seq), Seq: seq, Hidden: hidden})
	}
	put(1, 100, 50, 1, false)
	put(2, 90, 60, 2, false)
	put(3, 90, 60, 3, false) // ties with 2
	put(4, 90, 70, 4, false) // same points, slower
	put(5, 100, 50, 5, true) // ties with 1, hidden
	put(6, 80, 10, 6, false)
	for _, c := range []struct {
		keys     [4]int64
		all, vis int
	}{
		{[4]int64{100, 50}, 0, 0},
		{[4]int64{90, 60}, 2, 1},
		{[4]int64{90, 70}, 4, 3},
		{[4]int64{80, 10}, 5, 4},
		{[4]int64{90, 65}, 4, 3},       // no such entry: where it would go
		{[4]int64{200, 0}, 0, 0},       // ahead of everyone
		{[4]int64{-1, 0}, 6, 5},        // behind everyone
		{[4]int64{90, 60, 7, 7}, 2, 1}, // keys past the second are ignored
	} {
		if got := x.Ahead(c.keys, true); got != c.all {
			t.Errorf("Ahead(%v, all) = %d, want %d", c.keys, got, c.all)
		}
		if got := x.Ahead(c.keys, false); got != c.vis {
			t.Errorf("Ahead(%v, visible) = %d, want %d", c.keys, got, c.vis)
		}
	}
	var shared []int
	x.Range(1, 10, false, func(_ int, e Entry) bool {
		shared = append(shared, x.Ahead(e.Keys, false)+1)
		return true
	})
	if want := []int{1, 2, 2, 4, 5}; !slices.Equal(shared, want) {
		t.Errorf("shared ranks of the visible entries = %v, want %v", shared, want)
	}
}
