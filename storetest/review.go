package storetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// The moderation contract (podium.ReviewStore):
//   - a Batch's Review items are stored pending, with their keys, meta,
//     times and reason as given; Decisions decide pending items, and a
//     decision of an item that is not pending (or missing) fails the whole
//     batch with podium.ErrDecided, storing nothing of it;
//   - ReviewItems filters by board, player and state and pages in
//     (submitted, id) order after a cursor;
//   - freezes are put, replaced, listed and deleted (ECodeNotFound when
//     missing); on a SharedStore each appends a player change;
//   - History lists a player's log rows on a board, newest first, below a
//     seq, with the review item whose approval wrote the row.

func reviewStore(t *testing.T, s podium.Store) podium.ReviewStore {
	t.Helper()
	rs, ok := s.(podium.ReviewStore)
	if !ok {
		t.Fatalf("%T is not a podium.ReviewStore", s)
	}
	return rs
}

func reviewItem(id, board, player string, ms int64, keys ...int64) podium.ReviewItem {
	return podium.ReviewItem{ID: id, Board: board, Period: "all", Player: player, Keys: keys,
		SubmittedAt: at(ms).UTC().Truncate(time.Millisecond), Reason: podium.HoldAll, Status: podium.ReviewPending}
}

func reviewIDs(items []podium.ReviewItem) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

func testReview(t *testing.T, open func(*testing.T) podium.Store) {
	st := open(t)
	rs := reviewStore(t, st)
	bd := putBoard(t, st, "b", podium.Never, 2)
	putBoard(t, st, "c", podium.Never, 2)
	// A board keeps its review setting.
	rb := board(t, "r", 2)
	rb.Review = &podium.Review{Hold: podium.HoldThreshold, Threshold: []int64{3, -4}}
	mustNormalize(t, rb)
	if err := st.PutBoard(ctx, rb); err != nil {
		t.Fatal(err)
	}
	boards, err := st.Boards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range boards {
		if x.ID == "r" && !reflect.DeepEqual(x.Review, rb.Review) {
			t.Errorf("board r's review setting = %+v, want %+v", x.Review, rb.Review)
		}
	}

	a := reviewItem("rv_000000000000000a", "b", "alice", 10, 5, -7)
	a.Meta = []byte(`{"replay":"x"}`)
	b := reviewItem("rv_000000000000000b", "b", "bob", 20, 6, 1)
	b.Reason = podium.HoldTop
	c := reviewItem("rv_000000000000000c", "c", "alice", 20, 1, 2)
	d := reviewItem("rv_000000000000000d", "b", "alice", 30, 9, 9)
	commit(t, st, &podium.Batch{Parts: reviewRows(t, st, []podium.ReviewItem{a, b, c}, nil)})
	commit(t, st, &podium.Batch{Parts: reviewRows(t, st, []podium.ReviewItem{d}, nil)})

	t.Run("Item", func(t *testing.T) {
		got, err := rs.ReviewItem(ctx, a.ID)
		if err != nil || got == nil || !reflect.DeepEqual(*got, a) {
			t.Fatalf("ReviewItem = %+v, %v; want %+v", got, err, a)
		}
		if got, err := rs.ReviewItem(ctx, "rv_ffffffffffffffff"); got != nil || err != nil {
			t.Errorf("a missing item = %+v, %v; want nil, nil", got, err)
		}
	})

	list := func(f podium.ReviewFilter) []string {
		t.Helper()
		if f.Limit == 0 {
			f.Limit = 100
		}
		items, err := rs.ReviewItems(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return reviewIDs(items)
	}
	t.Run("Filter", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			f    podium.ReviewFilter
			want []string
		}{
			{"All", podium.ReviewFilter{}, []string{a.ID, b.ID, c.ID, d.ID}},
			{"Board", podium.ReviewFilter{Board: "b"}, []string{a.ID, b.ID, d.ID}},
			{"Player", podium.ReviewFilter{Player: "alice"}, []string{a.ID, c.ID, d.ID}},
			{"BoardPlayer", podium.ReviewFilter{Board: "b", Player: "alice"}, []string{a.ID, d.ID}},
			{"Limit", podium.ReviewFilter{Limit: 2}, []string{a.ID, b.ID}},
			// b and c were submitted at the same time: the id orders them.
			{"After", podium.ReviewFilter{After: podium.ReviewCursor{At: b.SubmittedAt, ID: b.ID}}, []string{c.ID, d.ID}},
			{"Rejected", podium.ReviewFilter{Status: podium.ReviewRejected}, []string{}},
		} {
			if got := list(tc.f); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	})

	t.Run("Decide", func(t *testing.T) {
		// An approval: the log row and the decision in one batch.
		s1 := sub(bd, 1, "all", "alice", 5, -7)
		approve := podium.ReviewDecision{ID: a.ID, Status: podium.ReviewApproved, At: at(40).UTC().Truncate(time.Millisecond), By: "admin", Seq: 1}
		commit(t, st, &podium.Batch{Submissions: []podium.Submission{s1}, Parts: reviewRows(t, st, nil, []podium.ReviewDecision{approve})})
		got, err := rs.ReviewItem(ctx, a.ID)
		if err != nil || got == nil {
			t.Fatal(got, err)
		}
		if got.Status != podium.ReviewApproved || got.Seq != 1 || got.DecidedBy != "admin" || !got.DecidedAt.Equal(approve.At) || got.Note != "" {
			t.Errorf("approved item = %+v", got)
		}
		reject := podium.ReviewDecision{ID: b.ID, Status: podium.ReviewRejected, At: at(50), By: "key_1", Note: "impossible time"}
		commit(t, st, &podium.Batch{Parts: reviewRows(t, st, nil, []podium.ReviewDecision{reject})})
		if got, _ := rs.ReviewItem(ctx, b.ID); got == nil || got.Status != podium.ReviewRejected || got.Note != "impossible time" || got.Seq != 0 || got.DecidedBy != "key_1" {
			t.Errorf("rejected item = %+v", got)
		}
		// Deciding again fails the whole batch: its log row is not stored.
		again := podium.ReviewDecision{ID: b.ID, Status: podium.ReviewApproved, At: at(60), By: "admin", Seq: 2}
		err = st.Commit(ctx, &podium.Batch{Submissions: []podium.Submission{sub(bd, 2, "all", "bob", 6, 1)}, Parts: reviewRows(t, st, nil, []podium.ReviewDecision{again})})
		if !errors.Is(err, podium.ErrDecided) || podium.ErrorCode(err) != podium.ECodeConflict {
			t.Errorf("a second decision: %v, want ErrDecided (conflict)", err)
		}
		if seq := lastSeq(t, st, "b"); seq != 1 {
			t.Errorf("LastSeq after the refused batch = %d, want 1", seq)
		}
		if got, _ := rs.ReviewItem(ctx, b.ID); got == nil || got.Status != podium.ReviewRejected {
			t.Errorf("item after a refused second decision = %+v, want rejected", got)
		}
		missing := podium.ReviewDecision{ID: "rv_ffffffffffffffff", Status: podium.ReviewRejected, At: at(60), By: "admin", Note: "x"}
		if err := st.Commit(ctx, &podium.Batch{Parts: reviewRows(t, st, nil, []podium.ReviewDecision{missing})}); !errors.Is(err, podium.ErrDecided) {
			t.Errorf("deciding a missing item: %v, want ErrDecided", err)
		}
		if got := list(podium.ReviewFilter{Status: podium.ReviewPending}); !reflect.DeepEqual(got, []string{c.ID, d.ID}) {
			t.Errorf("pending after the decisions: %v", got)
		}
	})

	t.Run("History", func(t *testing.T) {
		commit(t, st, &podium.Batch{Submissions: []podium.Submission{
			sub(bd, 2, "all", "bob", 1, 1), sub(bd, 3, "all", "alice", 4, 4), sub(bd, 4, "all", "alice", 3, 3)}})
		h, resume, err := rs.History(ctx, "b", "alice", []string{"all"}, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if resume != 0 {
			t.Errorf("History of a short log stopped at seq %d; want every row read (resume 0)", resume)
		}
		var seqs []uint64
		for _, r := range h {
			seqs = append(seqs, r.Seq)
		}
		if !reflect.DeepEqual(seqs, []uint64{4, 3, 1}) {
			t.Fatalf("history seqs = %v, want [4 3 1]", seqs)
		}
		if h[2].ReviewID != a.ID || h[0].ReviewID != "" || !reflect.DeepEqual(h[2].Keys, []int64{5, -7}) || h[2].At.UnixMilli() != at(1).UnixMilli() || h[2].Period != "all" {
			t.Errorf("oldest history row = %+v, want seq 1 approved by %s with keys [5 -7]", h[2], a.ID)
		}
		page, _, err := rs.History(ctx, "b", "alice", []string{"x", "all"}, 4, 1)
		if err != nil || len(page) != 1 || page[0].Seq != 3 {
			t.Errorf("History(before 4, limit 1) = %+v, %v; want seq 3", page, err)
		}
		if h, resume, err := rs.History(ctx, "b", "nobody", []string{"all"}, 0, 10); err != nil || len(h) != 0 || resume != 0 {
			t.Errorf("history of a player without rows = %+v, %v", h, err)
		}
		// Only the periods asked for.
		commit(t, st, &podium.Batch{Submissions: []podium.Submission{sub(bd, 5, "p2", "alice", 1, 1)}})
		for _, tc := range []struct {
			periods []string
			want    []uint64
		}{{[]string{"all"}, []uint64{4, 3, 1}}, {[]string{"all", "p2"}, []uint64{5, 4, 3, 1}}, {[]string{"p2"}, []uint64{5}}, {nil, nil}} {
			h, _, err := rs.History(ctx, "b", "alice", tc.periods, 0, 10)
			var got []uint64
			for _, r := range h {
				got = append(got, r.Seq)
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("History(periods %v) = %v, %v; want %v", tc.periods, got, err, tc.want)
			}
		}
	})

	t.Run("DeleteBoard", func(t *testing.T) {
		if err := st.DeleteBoard(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		if got, err := rs.ReviewItem(ctx, c.ID); got != nil || err != nil {
			t.Errorf("an item of a deleted board = %+v, %v; want it gone with the board", got, err)
		}
	})

	t.Run("Freeze", func(t *testing.T) {
		shared, _ := st.(podium.SharedStore)
		var cursor int64
		if shared != nil {
			var err error
			if cursor, err = shared.LastChange(ctx); err != nil {
				t.Fatal(err)
			}
		}
		f := podium.Freeze{Player: "mallory", By: "admin", Reason: "cheating", At: at(5).UTC().Truncate(time.Millisecond)}
		if err := rs.PutFreeze(ctx, &f); err != nil {
			t.Fatal(err)
		}
		f.Reason = "still cheating"
		if err := rs.PutFreeze(ctx, &f); err != nil {
			t.Fatal(err)
		}
		g := podium.Freeze{Player: "eve", By: "key_2", Reason: "", At: at(6).UTC().Truncate(time.Millisecond)}
		if err := rs.PutFreeze(ctx, &g); err != nil {
			t.Fatal(err)
		}
		all, err := rs.Freezes(ctx)
		if err != nil || !reflect.DeepEqual(all, []podium.Freeze{g, f}) {
			t.Errorf("Freezes = %+v, %v; want %+v", all, err, []podium.Freeze{g, f})
		}
		if got, err := rs.LoadFreeze(ctx, "mallory"); err != nil || got == nil || *got != f {
			t.Errorf("LoadFreeze = %+v, %v", got, err)
		}
		if err := rs.DeleteFreeze(ctx, "mallory"); err != nil {
			t.Fatal(err)
		}
		if got, err := rs.LoadFreeze(ctx, "mallory"); err != nil || got != nil {
			t.Errorf("LoadFreeze after delete = %+v, %v", got, err)
		}
		if err := rs.DeleteFreeze(ctx, "mallory"); podium.ErrorCode(err) != podium.ECodeNotFound {
			t.Errorf("deleting a missing freeze: %v, want not_found", err)
		}
		if shared != nil {
			cs, err := shared.Changes(ctx, cursor, 100)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, c := range cs {
				if c.Kind != podium.ChangePlayer {
					t.Errorf("change %+v, want a player change", c)
				}
				keys = append(keys, c.Key)
			}
			if !reflect.DeepEqual(keys, []string{"mallory", "mallory", "eve", "mallory"}) {
				t.Errorf("changes = %v, want mallory, mallory, eve, mallory", keys)
			}
		}
	})
}
