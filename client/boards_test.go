package client_test

import (
	"fmt"
	"testing"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/client"
)

// TestListBoardsPagesThrough: the server answers the board list a page of
// at most 1000 boards at a time; ListBoards follows the cursors to the
// end, and BoardsPage reads one page.
func TestListBoardsPagesThrough(t *testing.T) {
	srv := newTestServer(t, nil)
	ctx := ctxT(t)
	const n = 1234
	for i := range n {
		b := &podium.Board{ID: fmt.Sprintf("b%04d", i), Keys: []podium.KeyDef{{Name: "n", Order: podium.Desc}}, Public: i%2 == 0}
		if _, _, err := srv.eng.PutBoard(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	admin := client.New(srv.URL, client.WithKey(adminKey))
	all := must(admin.ListBoards(ctx))
	if len(all) != n || all[0].ID != "b0000" || all[n-1].ID != fmt.Sprintf("b%04d", n-1) {
		t.Fatalf("ListBoards: %d boards", len(all))
	}
	if pub := must(client.New(srv.URL).ListBoards(ctx)); len(pub) != n/2 {
		t.Fatalf("ListBoards anonymous: %d boards", len(pub))
	}
	p := must(admin.BoardsPage(ctx, "", 1000))
	if len(p.Boards) != 1000 || p.NextCursor == nil {
		t.Fatalf("first page: %d boards, cursor %v", len(p.Boards), p.NextCursor)
	}
	p = must(admin.BoardsPage(ctx, *p.NextCursor, 0))
	if len(p.Boards) != n-1000 || p.Boards[0].ID != "b1000" || p.NextCursor != nil {
		t.Fatalf("second page: %d boards, cursor %v", len(p.Boards), p.NextCursor)
	}
}

// TestRankExtras: the client reads percentile, rank_shared and a
// top_percent page, and sets rank_style.
func TestRankExtras(t *testing.T) {
	srv := newTestServer(t, nil)
	ctx := ctxT(t)
	admin := client.New(srv.URL, client.WithKey(adminKey))
	b, _, err := admin.PutBoard(ctx, "ties", client.BoardSpec{Keys: []client.RankKey{{Name: "n", Order: "desc"}}, Mode: "latest", RankStyle: "shared"})
	if err != nil || b.RankStyle != "shared" {
		t.Fatalf("board: rank_style %q, %v", b.RankStyle, err)
	}
	for i, p := range []string{"a", "b", "c", "d"} {
		v := int64(10 - min(i, 2)) // 10, 9, 8, 8
		must(admin.Submit(ctx, "ties", client.Score{Player: p, Score: &v}))
	}
	s := must(admin.Submit(ctx, "ties", client.Score{Player: "b", Score: new(int64(8))}))
	// a 10, c 8, d 8, b 8: b moves from 2 to 4, sharing 2.
	if s.Entry.Rank != 4 || s.Entry.RankShared != 2 || s.Entry.Percentile != 0 || s.Previous == nil || s.Previous.Rank != 2 || s.Previous.Percentile != 50 || s.Previous.RankShared != 2 {
		t.Fatalf("submit answer: %+v previous %+v", s.Entry, s.Previous)
	}
	p := must(admin.TopPercent(ctx, "ties", 50, 0, 10, client.ReadOptions{}))
	if p.TopPercent != 50 || p.TopCount != 2 || len(p.Entries) != 2 || p.Entries[1].Percentile != 50 || p.Entries[1].RankShared != 2 {
		t.Fatalf("top 50%%: %+v", p)
	}
}
