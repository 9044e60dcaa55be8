package podium

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

var tz = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

func sec(s int) time.Time { return tz.Add(time.Duration(s) * time.Second) }

func TestApplyBestK(t *testing.T) {
	b := &Board{ID: "b", Keys: []KeyDef{{Name: "t", Order: Asc}, {Name: "v", Order: Desc}}, Mode: BestK, Keep: 3}
	var cur *Entry
	fmtRes := func(e *Entry) string {
		var parts []string
		for _, r := range e.Results {
			parts = append(parts, fmt.Sprintf("%v#%d", r.Keys, r.Seq))
		}
		return strings.Join(parts, " ")
	}
	steps := []struct {
		keys    []int64
		changed bool
		want    string // results after
		best    uint64 // seq of the entry (its best)
	}{
		{[]int64{50, 1}, true, "[50 1]#1", 1},
		{[]int64{60, 1}, true, "[50 1]#1 [60 1]#2", 1},
		{[]int64{50, 1}, true, "[50 1]#1 [50 1]#3 [60 1]#2", 1}, // a tie ranks after the earlier one
		{[]int64{70, 1}, false, "[50 1]#1 [50 1]#3 [60 1]#2", 1},
		{[]int64{50, 2}, true, "[50 2]#5 [50 1]#1 [50 1]#3", 5}, // more v is better
		{[]int64{55, 0}, false, "[50 2]#5 [50 1]#1 [50 1]#3", 5},
	}
	for i, st := range steps {
		s := &Submission{Seq: uint64(i + 1), Board: "b", Player: "p", Keys: st.keys, At: sec(i), Meta: []byte(fmt.Sprintf(`{"i":%d}`, i))}
		next, changed, err := Apply(b, cur, s)
		if err != nil {
			t.Fatal(err)
		}
		if changed != st.changed || fmtRes(&next) != st.want || next.Seq != st.best {
			t.Fatalf("step %d %v: changed %v results %s seq %d; want %v %s %d", i, st.keys, changed, fmtRes(&next), next.Seq, st.changed, st.want, st.best)
		}
		if next.Keys[0] != next.Results[0].Keys[0] || !next.At.Equal(next.Results[0].At) {
			t.Fatalf("step %d: the entry is not its best result: %+v", i, next)
		}
		if want := fmt.Sprintf(`{"i":%d}`, st.best-1); string(next.Meta) != want {
			t.Fatalf("step %d: meta %s, want the best result's %s", i, next.Meta, want)
		}
		cur = &next
	}
	// A submission already reflected (seq not above every kept result's)
	// changes nothing: replay over an entry checkpointed ahead.
	for _, seq := range []uint64{3, 5} {
		next, changed, _ := Apply(b, cur, &Submission{Seq: seq, Keys: []int64{1, 1}, At: sec(0)})
		if changed || fmtRes(&next) != fmtRes(cur) {
			t.Fatalf("seq %d applied again: %s", seq, fmtRes(&next))
		}
	}
	// The results given to Apply are never modified.
	before := fmtRes(cur)
	Apply(b, cur, &Submission{Seq: 9, Keys: []int64{1, 9}, At: sec(9)})
	if fmtRes(cur) != before {
		t.Fatalf("Apply changed the current entry's results: %s", fmtRes(cur))
	}
}

func TestComputeAggregate(t *testing.T) {
	keys := []KeyDef{{Name: "t", Order: Asc}, {Name: "v", Order: Desc}}
	e := func(k ...int64) *Entry { return &Entry{Keys: k} }
	withResults := func(rs ...[]int64) *Entry {
		en := &Entry{Keys: rs[0]}
		for _, r := range rs {
			en.Results = append(en.Results, Result{Keys: r})
		}
		return en
	}
	sum := &Board{ID: "s", Keys: keys, Aggregate: &Aggregate{Kind: SumOfBests, Sources: make([]AggregateSource, 3)}}
	all := &Board{ID: "s", Keys: keys, Aggregate: &Aggregate{Kind: SumOfBests, RequireAll: true, Sources: make([]AggregateSource, 3)}}
	bk := &Board{ID: "s", Keys: keys, Aggregate: &Aggregate{Kind: BestKSum, Sources: []AggregateSource{
		{K: 3, Fill: []int64{10, 0}}, {K: 2, Fill: []int64{60, 1}}}}}
	for _, tc := range []struct {
		name string
		b    *Board
		in   []*Entry
		want string
	}{
		{"sum", sum, []*Entry{e(1, 2), nil, e(10, 20)}, "[11 22] true"},
		{"sum none", sum, []*Entry{nil, nil, nil}, "[] false"},
		{"require_all missing", all, []*Entry{e(1, 2), nil, e(10, 20)}, "[] false"},
		{"require_all", all, []*Entry{e(1, 2), e(3, 4), e(10, 20)}, "[14 26] true"},
		{"best_k fill", bk, []*Entry{withResults([]int64{1, 1}, []int64{2, 2}), nil}, "[133 5] true"},
		{"best_k more than k", bk, []*Entry{withResults([]int64{1, 0}, []int64{2, 0}, []int64{3, 0}, []int64{4, 0}), withResults([]int64{5, 5})}, "[71 6] true"},
		{"best_k of a best board", bk, []*Entry{e(7, 7), nil}, "[147 9] true"},
		{"best_k none", bk, []*Entry{nil, nil}, "[] false"},
	} {
		keys, ok, err := tc.b.ComputeAggregate(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if keys == nil {
			keys = []int64{}
		}
		if got := fmt.Sprintf("%v %v", keys, ok); got != tc.want {
			t.Errorf("%s: %v %v, want %s", tc.name, keys, ok, tc.want)
		}
	}
	_, _, err := sum.ComputeAggregate([]*Entry{e(math.MaxInt64, 0), e(1, 0), nil})
	if ErrorCode(err) != ECodeUnprocessable {
		t.Errorf("overflow: %v", err)
	}
	_, _, err = bk.ComputeAggregate([]*Entry{nil, withResults([]int64{math.MaxInt64 - 50, 0})})
	if ErrorCode(err) != ECodeUnprocessable {
		t.Errorf("overflow with fill: %v", err)
	}
}

func TestAggregateReached(t *testing.T) {
	keys := []KeyDef{{Name: "t", Order: Asc}}
	bk := &Board{ID: "s", Keys: keys, Aggregate: &Aggregate{Kind: BestKSum, Sources: []AggregateSource{{K: 1, Fill: []int64{9}}, {K: 1, Fill: []int64{9}}}}}
	src := []*Entry{
		{Keys: []int64{1}, At: sec(5), Results: []Result{{Keys: []int64{1}, At: sec(5)}, {Keys: []int64{2}, At: sec(50)}}},
		{Keys: []int64{3}, At: sec(7)},
	}
	if got := bk.AggregateReached(src); !got.Equal(sec(7)) {
		t.Errorf("reached %v, want %v (the uncounted result at 50 s does not count)", got, sec(7))
	}
}

func TestResultsEncoding(t *testing.T) {
	rs := []Result{{Keys: []int64{1, -2}, At: sec(1), Seq: 3}, {Keys: []int64{math.MaxInt64, math.MinInt64}, At: sec(2), Seq: 1}}
	got, err := DecodeResults(EncodeResults(rs))
	if err != nil || !EqualResults(got, rs) {
		t.Fatalf("round trip: %v %v", got, err)
	}
	if EncodeResults(nil) != nil {
		t.Error("no results must be stored as NULL")
	}
	for _, bad := range []string{`[{"keys":[]}]`, `{`, `[{"keys":[1,2,3,4,5]}]`} {
		if _, err := DecodeResults([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

func TestBoardUpdateFormat(t *testing.T) {
	agg := &Aggregate{Kind: SumOfBests, Sources: []AggregateSource{{Board: "a"}}}
	u := &BoardUpdate{ID: "s", Keys: []KeyDef{{Name: "t", Order: Asc}}, Aggregate: agg}
	b := u.Apply(nil)
	if err := b.Normalize(); err != nil || b.Mode != AggregateMode {
		t.Fatalf("an aggregate without a mode: %v %s", err, b.Mode)
	}
	agg.Sources[0].Board = "changed"
	if b.Aggregate.Sources[0].Board != "a" {
		t.Fatal("the board shares the update's definition")
	}
	// A title update keeps the definition; a mode update drops it.
	title := "x"
	b2 := (&BoardUpdate{ID: "s", Title: &title}).Apply(&b)
	if b2.Aggregate == nil || b2.Mode != AggregateMode {
		t.Fatalf("title update lost the aggregate: %+v", b2)
	}
	mode := Best
	b3 := (&BoardUpdate{ID: "s", Mode: &mode}).Apply(&b)
	if b3.Aggregate != nil || b3.Normalize() != nil {
		t.Fatalf("mode update kept the aggregate: %+v", b3)
	}
	keep := 5
	bk := (&BoardUpdate{ID: "k", Keys: []KeyDef{{Name: "t", Order: Asc}}, Mode: &[]Mode{BestK}[0], Keep: &keep}).Apply(nil)
	if err := bk.Normalize(); err != nil || bk.Keep != 5 {
		t.Fatalf("best_k: %v %+v", err, bk)
	}
	doc, _ := bk.Document()
	var back Board
	if err := back.SetDocument(doc); err != nil || back.Keep != 5 || back.Mode != BestK {
		t.Fatalf("document round trip: %v %+v", err, back)
	}
}
