package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/podiumhq/podium"
)

// A board change's parts (PutBoard and DeleteBoard with parts: the
// webhooks' board events) are stored in the change's transaction: both or
// neither. A part Commit would refuse (another store's, or one its Check
// refuses) fails the change before anything is written; a part that fails
// as it is written (a fence on a lease not held) rolls the change back.

func testBoardParts(t *testing.T, open func(*testing.T) podium.Store) {
	board := func(t *testing.T, id string) *podium.Board {
		b := &podium.Board{ID: id, Reset: podium.Reset{Every: podium.Never}, CreatedAt: t0, UpdatedAt: t0,
			Keys: []podium.KeyDef{{Name: "k1", Order: podium.Asc}}}
		mustNormalize(t, b)
		return b
	}
	// refusals are parts that fail a change, besides the store's own
	// event part before them.
	refusals := func(s, other podium.Store) []struct {
		name string
		part podium.Part
	} {
		return []struct {
			name string
			part podium.Part
		}{
			{"Foreign", foreignPart{}},
			{"Nil", nil},
			{"OtherStore", webhookStore(t, other).WebhookPart([]podium.WebhookEvent{webhookEvent("other", 1, "x")})},
			{"CheckFails", webhookStore(t, s).WebhookPart([]podium.WebhookEvent{{Type: "board.created"}})}, // no id
			// Written, then failing: the transaction has the board's
			// rows and the event by then.
			{"FenceLost", tourneyStore(t, s).TourneyPart(&podium.TourneyBatch{Fence: &podium.Fence{Name: "nobody", Holder: "x", Epoch: 1}})},
		}
	}

	t.Run("Put", func(t *testing.T) {
		s, other := open(t), open(t)
		ws := webhookStore(t, s)
		for _, c := range refusals(s, other) {
			t.Run(c.name, func(t *testing.T) {
				parts := []podium.Part{ws.WebhookPart([]podium.WebhookEvent{webhookEvent("made-"+c.name, 1, "x")}), c.part}
				if err := s.PutBoard(ctx, board(t, "b-"+strings.ToLower(c.name)), parts...); err == nil {
					t.Fatal("PutBoard with a failing part stored the board")
				}
				if bs := boards(t, s); len(bs) != 0 {
					t.Fatalf("Boards after a refused PutBoard = %+v, want none", bs)
				}
				if q := webhookQueue(t, ws, "x"); len(q) != 0 {
					t.Fatalf("outbox after a refused PutBoard = %v, want empty", q)
				}
			})
		}
		t.Run("OK", func(t *testing.T) {
			if err := s.PutBoard(ctx, board(t, "b"), ws.WebhookPart([]podium.WebhookEvent{webhookEvent("made", 1, "x")})); err != nil {
				t.Fatalf("PutBoard with parts: %v", err)
			}
			if bs := boards(t, s); len(bs) != 1 || bs[0].ID != "b" {
				t.Fatalf("Boards = %+v, want b", bs)
			}
			if q := webhookQueue(t, ws, "x"); !slices.Equal(q, []string{"made"}) {
				t.Fatalf("outbox = %v, want the board's event", q)
			}
		})
	})

	t.Run("Delete", func(t *testing.T) {
		s, other := open(t), open(t)
		ws := webhookStore(t, s)
		b := putBoard(t, s, "b", podium.Never, 1)
		commit(t, s, &podium.Batch{Submissions: []podium.Submission{sub(b, 1, "all", "p", 3)},
			Upserts: []podium.Entry{entry(b, 1, "all", "p", 3)}})
		for _, c := range refusals(s, other) {
			t.Run(c.name, func(t *testing.T) {
				parts := []podium.Part{ws.WebhookPart([]podium.WebhookEvent{webhookEvent("gone-"+c.name, 1, "x")}), c.part}
				if err := s.DeleteBoard(ctx, "b", parts...); err == nil {
					t.Fatal("DeleteBoard with a failing part deleted the board")
				}
				if bs := boards(t, s); len(bs) != 1 || bs[0].ID != "b" {
					t.Fatalf("Boards after a refused DeleteBoard = %+v, want b", bs)
				}
				if n := len(logOf(t, s, "b")); n != 1 {
					t.Fatalf("the board's log after a refused DeleteBoard has %d submissions, want 1", n)
				}
				checkEntries(t, load(t, s, "b", "all"), []podium.Entry{entry(b, 1, "all", "p", 3)})
				if q := webhookQueue(t, ws, "x"); len(q) != 0 {
					t.Fatalf("outbox after a refused DeleteBoard = %v, want empty", q)
				}
			})
		}
		t.Run("Missing", func(t *testing.T) {
			err := s.DeleteBoard(ctx, "missing", ws.WebhookPart([]podium.WebhookEvent{webhookEvent("nothing", 1, "x")}))
			if podium.ErrorCode(err) != podium.ECodeBoardNotFound {
				t.Fatalf("DeleteBoard(missing) = %v, want %s", err, podium.ECodeBoardNotFound)
			}
			if q := webhookQueue(t, ws, "x"); len(q) != 0 {
				t.Fatalf("outbox after deleting a missing board = %v, want empty", q)
			}
		})
		t.Run("OK", func(t *testing.T) {
			if err := s.DeleteBoard(ctx, "b", ws.WebhookPart([]podium.WebhookEvent{webhookEvent("gone", 2, "x")})); err != nil {
				t.Fatalf("DeleteBoard with parts: %v", err)
			}
			if bs := boards(t, s); len(bs) != 0 {
				t.Fatalf("Boards = %+v, want none", bs)
			}
			if q := webhookQueue(t, ws, "x"); !slices.Equal(q, []string{"gone"}) {
				t.Fatalf("outbox = %v, want the board's event", q)
			}
		})
	})
}
