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
