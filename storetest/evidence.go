package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// The evidence contract (podium.EvidenceStore):
//   - PutEvidence attaches only to a logged score of the same player
//     (ECodeEntryNotFound otherwise); the same content again is
//     EvidenceAlready, other content ECodeConflict, and neither changes
//     anything; a player's identical content is stored once (EvidenceReused,
//     keeping the first compressed hash and bytes); data nil attaches
//     stored content only (ECodeNotFound when there is none);
//   - Evidence and EvidenceData hide attachments expired by now; an expired
//     attachment is replaced by a new PutEvidence;
//   - PromoteEvidence fixes the expiry once, never on an expired attachment;
//   - SweepEvidence deletes at most limit expired attachments, oldest first,
//     and the content none uses any more; a deleted board's evidence
//     expires at once.

func evidenceStore(t *testing.T, s podium.Store) podium.EvidenceStore {
	t.Helper()
	es, ok := s.(podium.EvidenceStore)
	if !ok {
		t.Fatalf("%T is not a podium.EvidenceStore", s)
	}
	return es
}

func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func newEvidence(board, player string, seq uint64, content string, createdMS int64, ttl time.Duration) podium.Evidence {
	return podium.Evidence{Board: board, Player: player, Seq: seq, ContentSHA256: content, CompressedSHA256: "z" + content,
		InflatedBytes: 100, Events: 3, CreatedAt: ms(at(createdMS)), ExpiresAt: ms(at(createdMS).Add(ttl))}
}

func testEvidence(t *testing.T, open func(*testing.T) podium.Store) {
	s := open(t)
	es := evidenceStore(t, s)
	putBoard(t, s, "ev", podium.Never, 1)
	putBoard(t, s, "gone", podium.Never, 1)
	var subs []podium.Submission
	for i, p := range []string{"amy", "amy", "bob", "amy"} {
		subs = append(subs, podium.Submission{Seq: uint64(i + 1), Board: "ev", Period: "all", Player: p, Keys: []int64{int64(i)}, At: at(int64(i))})
	}
	subs = append(subs, podium.Submission{Seq: 5, Board: "ev", Period: "all", Player: "amy", Kind: podium.KindDelete, At: at(5)},
		podium.Submission{Seq: 1, Board: "gone", Period: "all", Player: "amy", Keys: []int64{1}, At: at(1)})
	if err := s.Commit(ctx, &podium.Batch{Submissions: subs}); err != nil {
		t.Fatal(err)
	}
	if p, period, ok, err := es.SubmissionPlayer(ctx, "ev", 3); err != nil || !ok || p != "bob" || period != "all" {
		t.Fatalf("SubmissionPlayer(3) = %q %q %v %v", p, period, ok, err)
	}
	for _, seq := range []uint64{5, 9} {
		if _, _, ok, err := es.SubmissionPlayer(ctx, "ev", seq); err != nil || ok {
			t.Fatalf("SubmissionPlayer(%d) found a score (%v)", seq, err)
		}
	}
	now := at(10)
	data := []byte("gzip bytes of A")

	// Only a logged score of the same player.
	for _, c := range []struct {
		seq    uint64
		player string
	}{{3, "amy"}, {5, "amy"}, {9, "amy"}} {
		ev := newEvidence("ev", c.player, c.seq, "A", 10, time.Hour)
		if _, _, err := es.PutEvidence(ctx, &ev, data, now); podium.ErrorCode(err) != podium.ECodeEntryNotFound {
			t.Fatalf("PutEvidence(seq %d of %s): %v", c.seq, c.player, err)
		}
	}
	if comp, ok, err := es.PlayerContent(ctx, "amy", "A"); err != nil || ok || comp != "" {
		t.Fatalf("a refused upload stored content: %q %v %v", comp, ok, err)
	}

	ev := newEvidence("ev", "amy", 1, "A", 10, time.Hour)
	got, outcome, err := es.PutEvidence(ctx, &ev, data, now)
	ev.Bytes = int64(len(data))
	if err != nil || outcome != podium.EvidenceStored || got != ev {
		t.Fatalf("PutEvidence = %+v %v %v, want %+v", got, outcome, err, ev)
	}
	// The same again: already there, nothing changes.
	again := newEvidence("ev", "amy", 1, "A", 20, 2*time.Hour)
	if got, outcome, err := es.PutEvidence(ctx, &again, []byte("other bytes"), now); err != nil || outcome != podium.EvidenceAlready || got != ev {
		t.Fatalf("PutEvidence again = %+v %v %v", got, outcome, err)
	}
	other := newEvidence("ev", "amy", 1, "B", 20, time.Hour)
	if _, _, err := es.PutEvidence(ctx, &other, []byte("B"), now); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Fatalf("other content for seq 1: %v", err)
	}
	// The same content on another submission of amy: stored once.
	reuse := newEvidence("ev", "amy", 2, "A", 30, time.Hour)
	reuse.CompressedSHA256 = "another gzip of A"
	got, outcome, err = es.PutEvidence(ctx, &reuse, nil, now)
	if err != nil || outcome != podium.EvidenceReused || got.CompressedSHA256 != "zA" || got.Bytes != int64(len(data)) || got.Seq != 2 {
		t.Fatalf("reuse = %+v %v %v", got, outcome, err)
	}
	// Never across players: bob's A is new content, and nil data finds none.
	bobs := newEvidence("ev", "bob", 3, "A", 30, time.Hour)
	if _, _, err := es.PutEvidence(ctx, &bobs, nil, now); podium.ErrorCode(err) != podium.ECodeNotFound {
		t.Fatalf("bob attaches amy's content: %v", err)
	}
	if _, ok, _ := es.PlayerContent(ctx, "bob", "A"); ok {
		t.Fatal("bob sees content of amy")
	}
	if _, outcome, err := es.PutEvidence(ctx, &bobs, []byte("bob's A"), now); err != nil || outcome != podium.EvidenceStored {
		t.Fatalf("bob's own A: %v %v", outcome, err)
	}
	e2, d2, err := es.EvidenceData(ctx, "ev", "amy", 2, now)
	if err != nil || e2 == nil || !bytes.Equal(d2, data) {
		t.Fatalf("EvidenceData = %+v %q %v", e2, d2, err)
	}
	if e, d, err := es.EvidenceData(ctx, "ev", "amy", 3, now); err != nil || e != nil || d != nil {
		t.Fatalf("EvidenceData of nothing = %+v %v", e, err)
	}

	// Promotion: once, fixing the expiry (zero: for ever).
	if ok, err := es.PromoteEvidence(ctx, "ev", "amy", 1, at(40), time.Time{}); err != nil || !ok {
		t.Fatalf("promote: %v %v", ok, err)
	}
	if ok, err := es.PromoteEvidence(ctx, "ev", "amy", 1, at(50), at(60)); err != nil || ok {
		t.Fatalf("promoted twice: %v %v", ok, err)
	}
	p, err := es.Evidence(ctx, "ev", "amy", 1, at(1e9))
	if err != nil || p == nil || !p.ExpiresAt.IsZero() || !p.PromotedAt.Equal(ms(at(40))) {
		t.Fatalf("promoted evidence = %+v %v", p, err)
	}
	if ok, err := es.PromoteEvidence(ctx, "ev", "amy", 2, at(10).Add(2*time.Hour), time.Time{}); err != nil || ok {
		t.Fatalf("promoted an expired attachment: %v %v", ok, err)
	}
	if ok, err := es.PromoteEvidence(ctx, "ev", "amy", 9, now, time.Time{}); err != nil || ok {
		t.Fatalf("promoted nothing: %v %v", ok, err)
	}

	// Expiry hides, and a new upload replaces, before any sweep.
	later := at(10).Add(90 * time.Minute)
	if e, err := es.Evidence(ctx, "ev", "amy", 2, later); err != nil || e != nil {
		t.Fatalf("expired evidence read: %+v %v", e, err)
	}
	repl := newEvidence("ev", "bob", 3, "C", 10, 5*time.Hour)
	repl.CreatedAt = ms(later)
	if got, outcome, err := es.PutEvidence(ctx, &repl, []byte("C"), later); err != nil || outcome != podium.EvidenceStored || got.ContentSHA256 != "C" {
		t.Fatalf("replace expired: %+v %v %v", got, outcome, err)
	}
	if _, ok, _ := es.PlayerContent(ctx, "bob", "A"); ok {
		t.Fatal("bob's A outlived its only attachment")
	}

	// A deleted board's evidence expires at once.
	gone := newEvidence("gone", "amy", 1, "A", 10, time.Hour)
	if _, outcome, err := es.PutEvidence(ctx, &gone, nil, now); err != nil || outcome != podium.EvidenceReused {
		t.Fatalf("gone: %v %v", outcome, err)
	}
	if err := s.DeleteBoard(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if e, err := es.Evidence(ctx, "gone", "amy", 1, now); err != nil || e != nil {
		t.Fatalf("evidence of a deleted board: %+v %v", e, err)
	}

	// The sweep: at most limit, oldest first; content goes with its last
	// attachment. Left: amy 1 (for ever), amy 2 (expired), bob 3 (C,
	// later), gone (expired at 0).
	if n, err := es.SweepEvidence(ctx, later, 1); err != nil || n != 1 {
		t.Fatalf("sweep 1: %d %v", n, err)
	}
	if _, ok, _ := es.PlayerContent(ctx, "amy", "A"); !ok {
		t.Fatal("A went while amy 1 and 2 use it")
	}
	if n, err := es.SweepEvidence(ctx, later, 10); err != nil || n != 1 {
		t.Fatalf("sweep 2: %d %v", n, err)
	}
	if n, err := es.SweepEvidence(ctx, later, 10); err != nil || n != 0 {
		t.Fatalf("sweep 3: %d %v", n, err)
	}
	if _, ok, _ := es.PlayerContent(ctx, "amy", "A"); !ok {
		t.Fatal("A went while amy 1 (kept for ever) uses it")
	}
	if n, err := es.SweepEvidence(ctx, at(10).Add(6*time.Hour), 10); err != nil || n != 1 {
		t.Fatalf("sweep of C: %d %v", n, err)
	}
	if _, ok, _ := es.PlayerContent(ctx, "bob", "C"); ok {
		t.Fatal("C outlived its attachment")
	}
	if e, err := es.Evidence(ctx, "ev", "amy", 1, at(1e12)); err != nil || e == nil {
		t.Fatalf("evidence kept for ever went: %v", err)
	}
}
