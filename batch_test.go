package podium_test

import (
	"errors"
	"testing"

	"github.com/podiumhq/podium"
)

type rowsPart struct {
	n   int
	err error
}

func (p rowsPart) Len() int     { return p.n }
func (p rowsPart) Check() error { return p.err }

// TestBatchParts: a batch counts and checks its parts; a nil part fails
// the check.
func TestBatchParts(t *testing.T) {
	b := podium.Batch{Submissions: []podium.Submission{{Seq: 1, Board: "b", Keys: []int64{1}}},
		Parts: []podium.Part{rowsPart{n: 2}, rowsPart{n: 3}}}
	if n := b.Len(); n != 6 {
		t.Errorf("Len = %d, want 6", n)
	}
	if err := b.Check(); err != nil {
		t.Errorf("Check = %v", err)
	}
	bad := errors.New("bad rows")
	b.Parts = append(b.Parts, rowsPart{n: 1, err: bad})
	if err := b.Check(); !errors.Is(err, bad) {
		t.Errorf("Check = %v, want the part's error", err)
	}
	b.Parts[2] = nil
	if err := b.Check(); err == nil {
		t.Error("Check accepted a nil part")
	}
	b.Reset()
	if b.Len() != 0 || len(b.Parts) != 0 || cap(b.Parts) < 3 {
		t.Errorf("after Reset: Len %d, parts %d (cap %d); want empty, capacity kept", b.Len(), len(b.Parts), cap(b.Parts))
	}
}

// TestBatchWithoutPartsAllocatesNothing: the submit path's batches have no
// parts, and parts cost them nothing.
func TestBatchWithoutPartsAllocatesNothing(t *testing.T) {
	b := podium.Batch{Submissions: []podium.Submission{{Seq: 1, Board: "b", Keys: []int64{1}}},
		Idempotency: []podium.IdempotencyRecord{{Scope: "s", Key: "k"}}}
	if n := testing.AllocsPerRun(100, func() {
		if b.Len() != 2 || b.Check() != nil {
			t.Fatal("unexpected batch")
		}
	}); n != 0 {
		t.Errorf("Len and Check of a batch without parts allocate %.0f times", n)
	}
}
