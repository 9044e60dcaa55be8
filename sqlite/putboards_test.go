package sqlite

import (
	"errors"
	"slices"
	"testing"

	"github.com/podiumhq/podium"
)

// refusedPart is a part no store takes (its Check fails).
type refusedPart struct{}

func (refusedPart) Len() int     { return 1 }
func (refusedPart) Check() error { return errors.New("this part cannot be stored") }

// PutBoards stores its boards in one transaction with one fsync, or none
// of them: a refused part or an id given twice fails the whole call.
func TestPutBoards(t *testing.T) {
	s := openTest(t, Options{Sync: "full"})
	ids := func() []string {
		t.Helper()
		bs, err := s.Boards(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range bs {
			out = append(out, b.ID)
		}
		return out
	}
	puts := []podium.BoardPut{{Board: board("a", 1)}, {Board: board("b", 1), Parts: []podium.Part{refusedPart{}}}, {Board: board("c", 1)}}
	if err := s.PutBoards(ctx, puts); err == nil {
		t.Fatal("PutBoards with a refused part succeeded")
	}
	if got := ids(); len(got) != 0 {
		t.Fatalf("boards after a refused PutBoards: %q, want none", got)
	}
	if err := s.PutBoards(ctx, []podium.BoardPut{{Board: board("a", 1)}, {Board: board("a", 2)}}); err == nil {
		t.Fatal("PutBoards with an id twice succeeded")
	}
	puts[1].Parts = nil
	fsyncs := s.Fsyncs()
	if err := s.PutBoards(ctx, puts); err != nil {
		t.Fatal(err)
	}
	if n := s.Fsyncs() - fsyncs; n != 1 {
		t.Errorf("PutBoards of 3 boards: %d fsyncs, want 1", n)
	}
	if got := ids(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("boards = %q, want a, b, c", got)
	}
}
