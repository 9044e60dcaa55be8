package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// The contract of evidence for held submissions (podium.EvidenceStore with
// podium.ReviewStore):
//   - PutEvidence with ReviewID attaches under PendingEvidenceSeq only to
//     a pending item of the same board and player (ECodeInvalid for
//     another seq, ECodeNotFound for no such item, ErrDecided for a
//     decided one), with the same dedupe, conflict and expiry rules as a
//     seq; such seqs (>= 2^63) read back unchanged;
//   - a Batch's approval with Evidence moves an unexpired attachment to
//     the approved seq, promoted at the decision's time with the given
//     expiry, in the batch's transaction (a failing batch moves nothing);
//     an expired attachment in the way is replaced and its content
//     released; an expired pending one is not moved;
//   - a rejection leaves the attachment under its pending seq, unpromoted,
//     until it expires and is swept.

func testPendingEvidence(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	es := evidenceStore(t, s)
	putBoard(t, s, "pe", podium.Never, 1)
	putBoard(t, s, "other", podium.Never, 1)
	item := func(id, board, player string) podium.ReviewItem { return reviewItem(id, board, player, 10, 1) }
	i1, i2, i3, i4, i5 := "rv_8000000000000001", "rv_0000000000000002", "rv_0000000000000003", "rv_0000000000000004", "rv_0000000000000005"
	commit(t, s, &podium.Batch{
		Submissions: []podium.Submission{{Seq: 1, Board: "pe", Period: "all", Player: "amy", Keys: []int64{1}, At: at(1)}},
		Parts: reviewRows(t, s, []podium.ReviewItem{item(i1, "pe", "amy"), item(i2, "pe", "bob"), item(i3, "pe", "amy"), item(i4, "pe", "amy"),
			item(i5, "pe", "amy"), item("rv_0000000000000006", "other", "amy")}, nil),
	})
	now := at(10)
	pending := func(id, content string, ttl time.Duration) podium.Evidence {
		ev := newEvidence("pe", "amy", podium.PendingEvidenceSeq(id), content, 10, ttl)
		ev.ReviewID = id
		return ev
	}

	// Only a pending item of the same board and player, under its seq.
	if seq := podium.PendingEvidenceSeq(i1); seq != 1<<63|1 || !podium.IsPendingEvidenceSeq(seq) || podium.IsPendingEvidenceSeq(1) {
		t.Fatalf("PendingEvidenceSeq(%s) = %#x", i1, seq)
	}
	wrong := pending(i1, "A", time.Hour)
	wrong.Seq = 1
	if _, _, err := es.PutEvidence(ctx, &wrong, []byte("A"), now); podium.ErrorCode(err) != podium.ECodeInvalid {
		t.Fatalf("a held item's evidence under a log seq: %v", err)
	}
	for _, id := range []string{i2, "rv_0000000000000006", "rv_00000000000000ff"} { // bob's, another board's, none
		ev := pending(id, "A", time.Hour)
		if _, _, err := es.PutEvidence(ctx, &ev, []byte("A"), now); podium.ErrorCode(err) != podium.ECodeNotFound {
			t.Fatalf("PutEvidence(%s) for amy on pe: %v", id, err)
		}
	}
	if _, ok, _ := es.PlayerContent(ctx, "amy", "A"); ok {
		t.Fatal("a refused upload stored content")
	}
	ev1 := pending(i1, "A", time.Hour)
	got, outcome, err := es.PutEvidence(ctx, &ev1, []byte("AAAA"), now)
	ev1.Bytes = 4
	if err != nil || outcome != podium.EvidenceStored || got != ev1 {
		t.Fatalf("PutEvidence(pending) = %+v %v %v, want %+v", got, outcome, err, ev1)
	}
	if got, outcome, err := es.PutEvidence(ctx, &ev1, nil, now); err != nil || outcome != podium.EvidenceAlready || got != ev1 {
		t.Fatalf("again = %+v %v %v", got, outcome, err)
	}
	other := pending(i1, "B", time.Hour)
	if _, _, err := es.PutEvidence(ctx, &other, []byte("B"), now); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("other content for a held item: %v", err)
	}
	read, err := es.Evidence(ctx, "pe", "amy", podium.PendingEvidenceSeq(i1), now)
	if want := ev1; err != nil || read == nil || (func() bool { want.ReviewID = ""; return *read != want })() {
		t.Fatalf("Evidence(pending seq) = %+v %v", read, err)
	}
	for _, c := range []struct {
		id, content string
		ttl         time.Duration
	}{{i3, "C", time.Hour}, {i4, "D", time.Hour}, {i5, "E", time.Minute}} {
		ev := pending(c.id, c.content, c.ttl)
		if _, _, err := es.PutEvidence(ctx, &ev, []byte(c.content), now); err != nil {
			t.Fatal(err)
		}
	}

	// A batch that fails (i1 decided twice) moves nothing of i4.
	decidedAt := ms(at(10).Add(10 * time.Minute))
	approve := func(id string, seq uint64, expires time.Time) podium.ReviewDecision {
		return podium.ReviewDecision{ID: id, Status: podium.ReviewApproved, At: decidedAt, By: "admin", Seq: seq,
			Evidence: &podium.EvidenceFollow{Board: "pe", Player: "amy", Expires: expires}}
	}
	sub := func(seq uint64) podium.Submission {
		return podium.Submission{Seq: seq, Board: "pe", Period: "all", Player: "amy", Keys: []int64{1}, At: decidedAt}
	}
	commit(t, s, &podium.Batch{Submissions: []podium.Submission{sub(2)}, Parts: reviewRows(t, s, nil, []podium.ReviewDecision{approve(i1, 2, ms(at(1e8)))})})
	err = s.Commit(ctx, &podium.Batch{Submissions: []podium.Submission{sub(3)},
		Parts: reviewRows(t, s, nil, []podium.ReviewDecision{approve(i4, 3, time.Time{}), approve(i1, 3, time.Time{})})})
	if !errors.Is(err, podium.ErrDecided) && podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("deciding i1 twice: %v", err)
	}
	if e, err := es.Evidence(ctx, "pe", "amy", podium.PendingEvidenceSeq(i4), now); err != nil || e == nil {
		t.Fatalf("a failed approval moved i4's evidence: %+v %v", e, err)
	}
	// The approval moved i1's evidence to seq 2 and promoted it.
	if e, err := es.Evidence(ctx, "pe", "amy", podium.PendingEvidenceSeq(i1), now); err != nil || e != nil {
		t.Fatalf("i1's evidence is still pending after its approval: %+v %v", e, err)
	}
	moved, data, err := es.EvidenceData(ctx, "pe", "amy", 2, decidedAt)
	if err != nil || moved == nil || moved.ContentSHA256 != "A" || string(data) != "AAAA" || !moved.PromotedAt.Equal(decidedAt) ||
		!moved.ExpiresAt.Equal(ms(at(1e8))) || !moved.CreatedAt.Equal(ev1.CreatedAt) {
		t.Fatalf("i1's evidence at seq 2 = %+v %q %v", moved, data, err)
	}
	if ok, err := es.PromoteEvidence(ctx, "pe", "amy", 2, decidedAt, time.Time{}); err != nil || ok {
		t.Fatalf("promoted twice: %v %v", ok, err)
	}
	if _, _, err := es.PutEvidence(ctx, &ev1, nil, now); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("upload to an approved item: %v", err)
	}

	// An expired attachment in the way (seq 4, expired) is replaced, and
	// its content released; i5's expired one does not move.
	stale := newEvidence("pe", "amy", 1, "S", 10, time.Minute)
	if _, _, err := es.PutEvidence(ctx, &stale, []byte("S"), now); err != nil {
		t.Fatal(err)
	}
	commit(t, s, &podium.Batch{Submissions: []podium.Submission{sub(3), sub(4)},
		Parts: reviewRows(t, s, nil, []podium.ReviewDecision{approve(i5, 3, time.Time{})})})
	// seq 1 stands in for a stale row: approve i4 onto it.
	commit(t, s, &podium.Batch{Parts: reviewRows(t, s, nil, []podium.ReviewDecision{approve(i4, 1, time.Time{})})})
	if e, err := es.Evidence(ctx, "pe", "amy", 1, decidedAt); err != nil || e == nil || e.ContentSHA256 != "D" || !e.ExpiresAt.IsZero() {
		t.Fatalf("i4's evidence over an expired attachment: %+v %v", e, err)
	}
	if _, ok, _ := es.PlayerContent(ctx, "amy", "S"); ok {
		t.Fatal("the replaced attachment's content is still stored")
	}
	if e, err := es.Evidence(ctx, "pe", "amy", 3, at(0)); err != nil || e != nil {
		t.Fatalf("i5's expired evidence moved: %+v %v", e, err)
	}

	// A rejection leaves the evidence pending until its TTL; then uploads
	// are refused and the sweep takes it (and i5's).
	commit(t, s, &podium.Batch{Parts: reviewRows(t, s, nil, []podium.ReviewDecision{{ID: i3, Status: podium.ReviewRejected, At: decidedAt, By: "admin", Note: "no"}})})
	if e, err := es.Evidence(ctx, "pe", "amy", podium.PendingEvidenceSeq(i3), now); err != nil || e == nil || !e.PromotedAt.IsZero() ||
		!e.ExpiresAt.Equal(ms(at(10).Add(time.Hour))) {
		t.Fatalf("a rejected item's evidence: %+v %v", e, err)
	}
	ev3 := pending(i3, "C", time.Hour)
	if _, _, err := es.PutEvidence(ctx, &ev3, nil, now); !errors.Is(err, podium.ErrDecided) && podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("upload to a rejected item: %v", err)
	}
	if n, err := es.SweepEvidence(ctx, at(10).Add(2*time.Hour), 10); err != nil || n != 2 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	for _, c := range []string{"C", "E"} {
		if _, ok, _ := es.PlayerContent(ctx, "amy", c); ok {
			t.Fatalf("content %s outlived its pending attachment", c)
		}
	}
	if e, err := es.Evidence(ctx, "pe", "amy", 2, at(10).Add(2*time.Hour)); err != nil || e == nil {
		t.Fatalf("the approved evidence was swept: %v", err)
	}
}
