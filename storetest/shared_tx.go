package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// The SharedStore contract (RunShared): what one write transaction sees
// and changes: generations, deletes, rollback, heads, idempotency.

// The generation tells a board from one deleted and made again, and from
// its own definition before its keys, mode or reset changed; it stays
// through other updates. Boards, LoadBoard and Head agree on it.
func testGeneration(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	gens := map[uint64]string{}
	fresh := func(what string, gen uint64) {
		t.Helper()
		if gen == 0 {
			t.Fatalf("%s: generation 0", what)
		}
		if prev, ok := gens[gen]; ok {
			t.Fatalf("%s: generation %d again (first: %s)", what, gen, prev)
		}
		gens[gen] = what
	}
	same := func(what string, gen, want uint64) {
		t.Helper()
		if gen != want {
			t.Fatalf("%s: generation %d, want %d as before", what, gen, want)
		}
	}
	stored := func(id string) uint64 {
		t.Helper()
		b, err := s.LoadBoard(ctx, id)
		if err != nil || b == nil {
			t.Fatalf("LoadBoard(%s) = %v, %v", id, b, err)
		}
		tx := begin(t, s, id)
		defer tx.Rollback()
		if _, gen, _ := tx.Head(id); gen != b.Gen {
			t.Fatalf("Head says generation %d, LoadBoard %d", gen, b.Gen)
		}
		return b.Gen
	}

	b := board(t, "g", 1)
	if err := s.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	fresh("created", b.Gen)
	same("stored", stored("g"), b.Gen)
	first := b.Gen

	b.Title, b.Public = "Renamed", true
	if err := s.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	same("title changed", b.Gen, first)
	same("title changed, stored", stored("g"), first)

	b.Keys = append([]podium.KeyDef(nil), b.Keys...)
	b.Keys[0].Label, b.Keys[0].Format = "Time", podium.FormatDurationMS
	if err := s.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	same("a key's label and format changed", b.Gen, first)
	same("a key's label and format changed, stored", stored("g"), first)

	b.Keys = append([]podium.KeyDef(nil), b.Keys...)
	lo := int64(10)
	b.Keys[0].Min = &lo // quota.go: bounds do not rank either
	if err := s.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	same("a key's bounds changed", b.Gen, first)
	same("a key's bounds changed, stored", stored("g"), first)

	b.Keys = append(b.Keys, podium.KeyDef{Name: "k2", Order: podium.Asc})
	if err := s.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	fresh("keys changed", b.Gen)
	same("keys changed, stored", stored("g"), b.Gen)

	tx := begin(t, s, "g")
	b.Mode = podium.Sum
	if err := tx.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	commitTx(t, tx, &podium.Batch{})
	fresh("mode changed in a transaction", b.Gen)
	same("mode changed, stored", stored("g"), b.Gen)

	tx = begin(t, s, "g")
	b.Title = "Again"
	if err := tx.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	commitTx(t, tx, &podium.Batch{})
	same("title changed in a transaction", stored("g"), b.Gen)

	if err := s.DeleteBoard(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	b = board(t, "g", 1)
	if err := s.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	fresh("deleted and made again", b.Gen)

	tx = begin(t, s, "g")
	if err := tx.DeleteBoard(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	commitTx(t, tx, &podium.Batch{})
	tx = begin(t, s, "g")
	b = board(t, "g", 1)
	if err := tx.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	commitTx(t, tx, &podium.Batch{})
	fresh("deleted and made again in transactions", b.Gen)
	same("made again, stored", stored("g"), b.Gen)
}

// WriteTx.DeleteBoard removes the board with its head, log, entries and
// watermark; a board it does not hold that does not exist is
// ECodeBoardNotFound.
func testTxDeleteBoard(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	gone, kept := putBoard(t, s, "gone", podium.Never, 1), putBoard(t, s, "kept", podium.Never, 1)
	commit(t, s, scores(gone, 1, 3))
	commit(t, s, scores(kept, 1, 2))
	tx := begin(t, s, "gone", "nope")
	if err := tx.DeleteBoard(ctx, "nope"); podium.ErrorCode(err) != podium.ECodeBoardNotFound {
		t.Errorf("DeleteBoard of a missing board = %v, want %s", err, podium.ECodeBoardNotFound)
	}
	if err := tx.DeleteBoard(ctx, "gone"); err != nil {
		t.Fatalf("WriteTx.DeleteBoard: %v", err)
	}
	if _, _, ok := tx.Head("gone"); ok {
		t.Error("Head of a board deleted in the transaction says it exists")
	}
	commitTx(t, tx, &podium.Batch{})
	if b, err := s.LoadBoard(ctx, "gone"); b != nil || err != nil {
		t.Errorf("LoadBoard of a deleted board = %+v, %v; want nil", b, err)
	}
	if n := len(logOf(t, s, "gone")); n != 0 {
		t.Errorf("deleted board still has %d logged submissions", n)
	}
	if n := len(load(t, s, "gone", "all")); n != 0 {
		t.Errorf("deleted board still has %d entries", n)
	}
	if wm := watermarks(t, s); wm["gone"] != 0 || wm["kept"] != 2 {
		t.Errorf("watermarks = %v, want only kept's", wm)
	}
	heads, err := s.Heads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := heads["gone"]; ok || heads["kept"] != 2 {
		t.Errorf("Heads = %v, want kept at 2 and no gone", heads)
	}
	tx = begin(t, s, "gone")
	if _, _, ok := tx.Head("gone"); ok {
		t.Error("Begin finds a head for a deleted board")
	}
}

// Rollback stores nothing; after Commit it does nothing.
func testRollback(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	bd := putBoard(t, s, "b", podium.Never, 1)
	last := lastChange(t, s)
	tx := begin(t, s, "b", "new")
	if err := tx.PutBoard(ctx, board(t, "new", 1)); err != nil {
		t.Fatal(err)
	}
	if err := tx.DeleteBoard(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	tx.Rollback()
	if bs := boards(t, s); len(bs) != 1 || bs[0].ID != "b" {
		t.Errorf("after Rollback, Boards = %+v, want only b", bs)
	}
	if got := lastChange(t, s); got != last {
		t.Errorf("after Rollback, LastChange = %d, want %d as before", got, last)
	}
	tx = begin(t, s, "b")
	commitTx(t, tx, scores(bd, 1, 1))
	tx.Rollback()
	if seq := lastSeq(t, s, "b"); seq != 1 {
		t.Errorf("Rollback after Commit: LastSeq = %d, want 1", seq)
	}
	if err := tx.Commit(ctx, scores(bd, 2, 1)); err == nil {
		t.Error("a second Commit of one transaction succeeded")
	}
}

// Heads lists every board's head (new boards at 0), moved by Store.Commit
// and WriteTx.Commit alike; WriteTx.Log reads the log within the
// transaction.
func testHeadsAndLog(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	a := putBoard(t, s, "a", podium.Never, 2)
	putBoard(t, s, "empty", podium.Never, 1)
	commit(t, s, scores(a, 1, 3))
	tx := begin(t, s, "a")
	checkHead(t, tx, "a", 3)
	var seqs []uint64
	err := tx.Log(ctx, "a", 1, func(sub *podium.Submission) error {
		if sub.Board != "a" || len(sub.Keys) != 2 || sub.Keys[0] != int64(sub.Seq) {
			t.Errorf("logged submission read back as %+v", sub)
		}
		seqs = append(seqs, sub.Seq)
		return nil
	})
	if err != nil || !slices.Equal(seqs, []uint64{2, 3}) {
		t.Fatalf("WriteTx.Log after 1 = %v, %v; want seqs 2, 3", seqs, err)
	}
	stop := errors.New("stop")
	if err := tx.Log(ctx, "a", 0, func(*podium.Submission) error { return stop }); err != stop {
		t.Errorf("WriteTx.Log returned %v, want its callback's error", err)
	}
	commitTx(t, tx, scores(a, 4, 2))
	commit(t, s, scores(a, 6, 1))
	heads, err := s.Heads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(heads) != 2 || heads["a"] != 6 || heads["empty"] != 0 {
		t.Errorf("Heads = %v, want a 6, empty 0", heads)
	}
	tx = begin(t, s, "a")
	checkHead(t, tx, "a", 6)
}

// WriteTx.Idempotency returns the stored records among the keys asked for,
// and two transactions on different boards that look up one key take
// turns.
func testTxIdempotency(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	rec := podium.IdempotencyRecord{Scope: "k1 POST /v1/scores", Key: "stored", RequestHash: []byte("h"), Status: 201, Body: []byte(`{"ok":1}`), CreatedAt: at(0)}
	commit(t, s, &podium.Batch{Idempotency: []podium.IdempotencyRecord{rec}})
	tx := begin(t, s)
	got, err := tx.Idempotency(ctx, []podium.IdempotencyRef{{Scope: rec.Scope, Key: "stored"}, {Scope: rec.Scope, Key: "other"}, {Scope: "k2", Key: "stored"}})
	if err != nil {
		t.Fatalf("WriteTx.Idempotency: %v", err)
	}
	checkRecords(t, got, []podium.IdempotencyRecord{rec})
	tx.Rollback()

	a, b := putBoard(t, s, "a", podium.Never, 1), putBoard(t, s, "b", podium.Never, 1)
	ref := podium.IdempotencyRef{Scope: rec.Scope, Key: "new"}
	txA, txB := begin(t, s, "a"), begin(t, s, "b")
	if got, err := txA.Idempotency(ctx, []podium.IdempotencyRef{ref}); err != nil || len(got) != 0 {
		t.Fatalf("Idempotency of a new key = %v, %v; want none", got, err)
	}
	type found struct {
		recs []podium.IdempotencyRecord
		err  error
	}
	second := make(chan found, 1)
	go func() {
		recs, err := txB.Idempotency(ctx, []podium.IdempotencyRef{ref})
		second <- found{recs, err}
	}()
	select {
	case f := <-second:
		t.Fatalf("a second transaction looked up a key the first holds: %v, %v", f.recs, f.err)
	case <-time.After(200 * time.Millisecond):
	}
	marker := podium.IdempotencyRecord{Scope: ref.Scope, Key: ref.Key, RequestHash: []byte("h2"), CreatedAt: at(1)}
	batch := scores(a, 1, 1)
	batch.Idempotency = []podium.IdempotencyRecord{marker}
	commitTx(t, txA, batch)
	select {
	case f := <-second:
		if f.err != nil {
			t.Fatal(f.err)
		}
		checkRecords(t, f.recs, []podium.IdempotencyRecord{marker})
	case <-time.After(within):
		t.Fatal("the second lookup did not return")
	}
	commitTx(t, txB, scores(b, 1, 1))
}
