package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// TestListBoardsPages: walking the list a page at a time, from the id
// each page says, sees every board the filter keeps once and in id order,
// through creates and deletes between the pages; scan bounds the boards a
// page looks at, so a filter that keeps few boards gives short pages that
// still go on.
func TestListBoardsPages(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	put := func(id string, public bool) {
		t.Helper()
		b := &podium.Board{ID: id, Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}, Public: public}
		if _, _, err := e.eng.PutBoard(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for i := range 700 {
		id := fmt.Sprintf("b%04d", (i*389)%700) // not in id order
		put(id, i%7 == 0)
		if i%7 == 0 {
			want = append(want, id)
		}
	}
	slices.Sort(want)
	public := func(b *podium.Board) bool { return b.Public }

	walk := func(limit, scan int, between func(page int)) (got []string, pages int) {
		after := ""
		for {
			list, more := e.eng.ListBoards(after, limit, scan, public)
			if len(list) > limit {
				t.Fatalf("page of %d boards, limit %d", len(list), limit)
			}
			for _, bi := range list {
				got = append(got, bi.ID)
			}
			pages++
			if more == "" {
				return got, pages
			}
			if more <= after {
				t.Fatalf("the walk went back: after %q, then %q", after, more)
			}
			after = more
			if between != nil {
				between(pages)
			}
		}
	}
	if got, pages := walk(7, 0, nil); !slices.Equal(got, want) || pages != (len(want)+6)/7 {
		t.Fatalf("limit 7: %d pages, %v", pages, got)
	}
	// A scan of 50 boards sees at most 50/7+1 public ones: short pages,
	// every board still listed once.
	got, pages := walk(100, 50, nil)
	if !slices.Equal(got, want) || pages != 700/50 {
		t.Fatalf("scan 50: %d pages, %v", pages, got)
	}
	// Boards made and deleted between pages: those after the cursor show
	// (b0699z sorts after every other), those before it do not, and no
	// board that stays is seen twice or lost.
	got, _ = walk(10, 0, func(page int) {
		if page == 1 {
			put("a-before", true)
			put("b0699z", true)
			if err := e.eng.DeleteBoard(ctx, want[len(want)-1]); err != nil {
				t.Fatal(err)
			}
		}
	})
	if w := append(slices.Clone(want[:len(want)-1]), "b0699z"); !slices.Equal(got, w) {
		t.Fatalf("with changes between pages: %v, want %v", got, w)
	}
	// After a restart the list is in id order too.
	e.restart()
	byID := func(a, b engine.BoardInfo) int { return strings.Compare(a.ID, b.ID) }
	if all := e.eng.Boards(false); len(all) != 701 || !slices.IsSortedFunc(all, byID) {
		t.Fatalf("after a restart: %d boards, sorted %v", len(all), slices.IsSortedFunc(all, byID))
	}
}
