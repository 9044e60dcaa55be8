package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
)

// RunShared runs the contract suite of a podium.SharedStore: what several
// nodes on one database rely on. open must return a new, empty store and
// arrange for it to be closed when t ends; its lock timeout (how long
// Begin waits for a board another transaction holds) should be a second
// or two, as the suite holds boards for a fraction of a second and waits
// for the timeout once.
func RunShared(t *testing.T, open func(t *testing.T) podium.SharedStore) {
	t.Run("Serialise", func(t *testing.T) { t.Parallel(); testSerialise(t, open) })
	t.Run("OtherBoards", func(t *testing.T) { t.Parallel(); testOtherBoards(t, open) })
	t.Run("LockTimeout", func(t *testing.T) { t.Parallel(); testLockTimeout(t, open) })
	t.Run("Fence", func(t *testing.T) { t.Parallel(); testFence(t, open) })
	t.Run("MissingBoard", func(t *testing.T) { t.Parallel(); testMissingBoard(t, open) })
	t.Run("Generation", func(t *testing.T) { t.Parallel(); testGeneration(t, open) })
	t.Run("TxDeleteBoard", func(t *testing.T) { t.Parallel(); testTxDeleteBoard(t, open) })
	t.Run("Rollback", func(t *testing.T) { t.Parallel(); testRollback(t, open) })
	t.Run("HeadsAndLog", func(t *testing.T) { t.Parallel(); testHeadsAndLog(t, open) })
	t.Run("TxIdempotency", func(t *testing.T) { t.Parallel(); testTxIdempotency(t, open) })
	t.Run("Changes", func(t *testing.T) { t.Parallel(); testChanges(t, open) })
	t.Run("ChangesConcurrent", func(t *testing.T) { t.Parallel(); testChangesConcurrent(t, open) })
	t.Run("Loads", func(t *testing.T) { t.Parallel(); testLoads(t, open) })
	t.Run("TxLastChange", func(t *testing.T) { t.Parallel(); testTxLastChange(t, open) }) // aggregate.go
	t.Run("TxFeed", func(t *testing.T) { t.Parallel(); testTxFeed(t, open) })
}

// within bounds every wait of the suite, so that a hang fails the test
// instead of stalling it.
const within = 30 * time.Second

type began struct {
	tx  podium.WriteTx
	err error
}

func begin(t *testing.T, s podium.SharedStore, boards ...string) podium.WriteTx {
	t.Helper()
	tx, err := s.Begin(ctx, boards)
	if err != nil {
		t.Fatalf("Begin(%v): %v", boards, err)
	}
	t.Cleanup(tx.Rollback)
	return tx
}

// beginAsync runs Begin on its own goroutine.
func beginAsync(t *testing.T, s podium.SharedStore, boards ...string) <-chan began {
	ch := make(chan began, 1)
	go func() {
		tx, err := s.Begin(ctx, boards)
		if err == nil {
			t.Cleanup(tx.Rollback)
		}
		ch <- began{tx, err}
	}()
	return ch
}

func awaitBegin(t *testing.T, ch <-chan began) began {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(within):
		t.Fatalf("Begin did not return within %s", within)
		return began{}
	}
}

// notYet fails t if ch delivers within a moment: a Begin that should be
// waiting returned.
func notYet(t *testing.T, ch <-chan began, what string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s returned (err %v) while another transaction holds its board", what, r.err)
	case <-time.After(200 * time.Millisecond):
	}
}

// scores returns a batch logging n scores on board b from seq first on,
// with the entries they produce and the board's watermark, as a shared
// node writes through.
func scores(b *podium.Board, first uint64, n int) *podium.Batch {
	var batch podium.Batch
	for i := range n {
		seq := first + uint64(i)
		p := fmt.Sprintf("p%d", seq)
		keys := make([]int64, len(b.Keys))
		keys[0] = int64(seq)
		batch.Submissions = append(batch.Submissions, sub(b, seq, "all", p, keys...))
		batch.Upserts = append(batch.Upserts, entry(b, seq, "all", p, keys...))
	}
	batch.Watermarks = []podium.Watermark{{Board: b.ID, Seq: first + uint64(n) - 1}}
	return &batch
}

func commitTx(t *testing.T, tx podium.WriteTx, b *podium.Batch) {
	t.Helper()
	if err := tx.Commit(ctx, b); err != nil {
		t.Fatalf("WriteTx.Commit: %v", err)
	}
}

func checkHead(t *testing.T, tx podium.WriteTx, board string, want uint64) uint64 {
	t.Helper()
	seq, gen, ok := tx.Head(board)
	if !ok || seq != want || gen == 0 {
		t.Fatalf("Head(%s) = seq %d, gen %d, ok %v; want seq %d, a generation, ok", board, seq, gen, ok, want)
	}
	return gen
}

// Two transactions on one board take turns: the second Begin waits until
// the first commits, then sees the head it left.
func testSerialise(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	bd := putBoard(t, s, "b", podium.Never, 1)
	tx1 := begin(t, s, "b")
	checkHead(t, tx1, "b", 0)
	second := beginAsync(t, s, "b")
	notYet(t, second, "a second Begin of the same board")
	commitTx(t, tx1, scores(bd, 1, 3))
	r := awaitBegin(t, second)
	if r.err != nil {
		t.Fatalf("second Begin: %v", r.err)
	}
	checkHead(t, r.tx, "b", 3)
	commitTx(t, r.tx, scores(bd, 4, 2))
	if seq := lastSeq(t, s, "b"); seq != 5 {
		t.Errorf("LastSeq = %d after two transactions, want 5", seq)
	}
	if n := len(logOf(t, s, "b")); n != 5 {
		t.Errorf("%d logged submissions, want 5", n)
	}
}

// Transactions on different boards do not wait for each other; one that
// names a held board among others waits.
func testOtherBoards(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	a, b := putBoard(t, s, "a", podium.Never, 1), putBoard(t, s, "b", podium.Never, 1)
	txA := begin(t, s, "a")
	r := awaitBegin(t, beginAsync(t, s, "b"))
	if r.err != nil {
		t.Fatalf("Begin(b) while another transaction holds a: %v", r.err)
	}
	both := beginAsync(t, s, "b", "a")
	commitTx(t, r.tx, scores(b, 1, 1))
	notYet(t, both, "Begin(b, a)")
	commitTx(t, txA, scores(a, 1, 2))
	r = awaitBegin(t, both)
	if r.err != nil {
		t.Fatalf("Begin(b, a): %v", r.err)
	}
	checkHead(t, r.tx, "a", 2)
	checkHead(t, r.tx, "b", 1)
}

// A writer stuck behind a holder that never finishes gets an error (the
// store's lock timeout) instead of waiting forever; the holder can still
// commit.
func testLockTimeout(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	bd := putBoard(t, s, "b", podium.Never, 1)
	holder := begin(t, s, "b")
	r := awaitBegin(t, beginAsync(t, s, "b"))
	if r.err == nil {
		t.Fatal("Begin behind a holder that never finished succeeded")
	}
	if errors.Is(r.err, podium.ErrOutcomeUnknown) {
		t.Errorf("a lock wait that timed out reports an unknown outcome: %v", r.err)
	}
	commitTx(t, holder, scores(bd, 1, 1))
	if seq := lastSeq(t, s, "b"); seq != 1 {
		t.Errorf("LastSeq = %d, want 1", seq)
	}
}

// Commit refuses, whole, a batch whose seqs do not continue the head of
// their board, or that logs for a board the transaction does not hold.
func testFence(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	bd, other := putBoard(t, s, "b", podium.Never, 1), putBoard(t, s, "other", podium.Never, 1)
	commit(t, s, scores(bd, 1, 3))
	for _, c := range []struct {
		name  string
		batch func() *podium.Batch
	}{
		{"Gap", func() *podium.Batch { return scores(bd, 5, 1) }},
		{"Reused", func() *podium.Batch { return scores(bd, 3, 2) }},
		{"OutOfOrder", func() *podium.Batch {
			b := scores(bd, 4, 2)
			b.Submissions[0], b.Submissions[1] = b.Submissions[1], b.Submissions[0]
			return b
		}},
		{"Twice", func() *podium.Batch {
			b := scores(bd, 4, 2)
			b.Submissions[1].Seq = 4
			return b
		}},
		{"NotHeld", func() *podium.Batch {
			b := scores(bd, 4, 1)
			b.Submissions = append(b.Submissions, scores(other, 1, 1).Submissions...)
			return b
		}},
		{"Missing", func() *podium.Batch {
			b := scores(bd, 4, 1)
			b.Submissions = append(b.Submissions, sub(&podium.Board{ID: "nope"}, 1, "all", "x", 1))
			return b
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tx := begin(t, s, "b")
			err := tx.Commit(ctx, c.batch())
			if err == nil {
				t.Fatal("Commit succeeded")
			}
			if errors.Is(err, podium.ErrOutcomeUnknown) {
				t.Errorf("a refused batch reports an unknown outcome: %v", err)
			}
			if seq := lastSeq(t, s, "b"); seq != 3 {
				t.Errorf("after a refused batch, LastSeq = %d, want 3", seq)
			}
			if n := len(logOf(t, s, "b")); n != 3 {
				t.Errorf("after a refused batch, %d logged submissions, want 3", n)
			}
			if n := len(load(t, s, "b", "all")); n != 3 {
				t.Errorf("after a refused batch, %d entries, want 3", n)
			}
			// The refused transaction ended: the board is free.
			r := awaitBegin(t, beginAsync(t, s, "b"))
			if r.err != nil {
				t.Fatalf("Begin after a refused Commit: %v", r.err)
			}
			r.tx.Rollback()
		})
	}
	tx := begin(t, s, "b")
	commitTx(t, tx, scores(bd, 4, 2))
	if seq := lastSeq(t, s, "b"); seq != 5 {
		t.Errorf("LastSeq = %d, want 5", seq)
	}
}

// A board that does not exist has no head; PutBoard in the transaction
// makes it, with a generation, and the same transaction may log for it.
func testMissingBoard(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	tx := begin(t, s, "new")
	if seq, gen, ok := tx.Head("new"); ok || seq != 0 || gen != 0 {
		t.Fatalf("Head of a missing board = %d, %d, %v; want 0, 0, false", seq, gen, ok)
	}
	bd := board(t, "new", 1)
	if err := tx.PutBoard(ctx, bd); err != nil {
		t.Fatalf("WriteTx.PutBoard: %v", err)
	}
	gen := checkHead(t, tx, "new", 0)
	if bd.Gen != gen {
		t.Errorf("PutBoard set Gen %d, Head says %d", bd.Gen, gen)
	}
	commitTx(t, tx, scores(bd, 1, 2))
	got, err := s.LoadBoard(ctx, "new")
	if err != nil || got == nil || got.Gen != gen {
		t.Fatalf("LoadBoard = %+v, %v; want the board with generation %d", got, err, gen)
	}
	if bs := boards(t, s); len(bs) != 1 || bs[0].Gen != gen {
		t.Errorf("Boards = %+v, want the board with generation %d", bs, gen)
	}
	if seq := lastSeq(t, s, "new"); seq != 2 {
		t.Errorf("LastSeq = %d, want 2", seq)
	}

	// Two transactions that both find a board missing: the one that
	// creates it second fails rather than overwrite it unseen.
	tx1, tx2 := begin(t, s, "race"), begin(t, s, "race")
	if err := tx1.PutBoard(ctx, board(t, "race", 1)); err != nil {
		t.Fatal(err)
	}
	put2 := make(chan error, 1)
	go func() { put2 <- tx2.PutBoard(ctx, board(t, "race", 2)) }()
	commitTx(t, tx1, &podium.Batch{})
	select {
	case err := <-put2:
		if code := podium.ErrorCode(err); code != podium.ECodeConflict {
			t.Fatalf("a second creation of the same board in another transaction = %v, want %s", err, podium.ECodeConflict)
		}
	case <-time.After(within):
		t.Fatal("the second PutBoard did not return")
	}
	tx2.Rollback()
	if got, _ := s.LoadBoard(ctx, "race"); got == nil || len(got.Keys) != 1 {
		t.Errorf("board race = %+v, want the first creation's (1 key)", got)
	}
}

func board(t *testing.T, id string, nkeys int) *podium.Board {
	t.Helper()
	b := &podium.Board{ID: id, CreatedAt: t0, UpdatedAt: t0}
	for i := range nkeys {
		b.Keys = append(b.Keys, podium.KeyDef{Name: fmt.Sprintf("k%d", i+1), Order: podium.Desc})
	}
	mustNormalize(t, b)
	return b
}

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

func lastChange(t *testing.T, s podium.SharedStore) int64 {
	t.Helper()
	id, err := s.LastChange(ctx)
	if err != nil {
		t.Fatalf("LastChange: %v", err)
	}
	return id
}

func changes(t *testing.T, s podium.SharedStore, after int64, limit int) []podium.Change {
	t.Helper()
	cs, err := s.Changes(ctx, after, limit)
	if err != nil {
		t.Fatalf("Changes(%d, %d): %v", after, limit, err)
	}
	return cs
}

// Every board, player and key change appends to the feed, in order; a
// change that fails appends nothing.
func testChanges(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	if id := lastChange(t, s); id != 0 {
		t.Fatalf("LastChange of an empty store = %d, want 0", id)
	}
	if cs := changes(t, s, 0, 10); len(cs) != 0 {
		t.Fatalf("Changes of an empty store = %v", cs)
	}
	putBoard(t, s, "a", podium.Never, 1)
	if err := s.PutPlayer(ctx, &podium.Player{ID: "p", Name: "P", UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	key := podium.APIKey{ID: "k", Name: "k", Hash: "h1", CreatedAt: t0}
	if err := s.PutKey(ctx, &key); err != nil {
		t.Fatal(err)
	}
	// Failures append nothing.
	if err := s.PutKey(ctx, &podium.APIKey{ID: "k2", Name: "k2", Hash: "h1", CreatedAt: t0}); err == nil {
		t.Fatal("PutKey with another key's hash succeeded")
	}
	if err := s.DeleteKey(ctx, "nope"); err == nil {
		t.Fatal("DeleteKey of a missing key succeeded")
	}
	if err := s.DeleteBoard(ctx, "nope"); err == nil {
		t.Fatal("DeleteBoard of a missing board succeeded")
	}
	if err := s.DeleteKey(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	tx := begin(t, s, "b", "a")
	if err := tx.PutBoard(ctx, board(t, "b", 1)); err != nil {
		t.Fatal(err)
	}
	if err := tx.DeleteBoard(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	commitTx(t, tx, &podium.Batch{})
	if err := s.DeleteBoard(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	want := []podium.Change{
		{Kind: podium.ChangeBoard, Key: "a"}, {Kind: podium.ChangePlayer, Key: "p"}, {Kind: podium.ChangeKey, Key: "k"},
		{Kind: podium.ChangeKey, Key: "k"}, {Kind: podium.ChangeBoard, Key: "b"}, {Kind: podium.ChangeBoard, Key: "a"},
		{Kind: podium.ChangeBoard, Key: "b"},
	}
	all := changes(t, s, 0, 100)
	if len(all) != len(want) {
		t.Fatalf("Changes = %+v, want %d changes: %+v", all, len(want), want)
	}
	for i, c := range all {
		if c.Kind != want[i].Kind || c.Key != want[i].Key {
			t.Errorf("change %d = %s %s, want %s %s", i, c.Kind, c.Key, want[i].Kind, want[i].Key)
		}
		if i > 0 && c.ID <= all[i-1].ID {
			t.Errorf("change ids not increasing: %d after %d", c.ID, all[i-1].ID)
		}
	}
	if id := lastChange(t, s); id != all[len(all)-1].ID {
		t.Errorf("LastChange = %d, want the newest id %d", id, all[len(all)-1].ID)
	}
	if page := changes(t, s, all[2].ID, 2); len(page) != 2 || page[0] != all[3] || page[1] != all[4] {
		t.Errorf("Changes(after %d, 2) = %+v, want %+v", all[2].ID, page, all[3:5])
	}
	if rest := changes(t, s, all[len(all)-1].ID, 10); len(rest) != 0 {
		t.Errorf("Changes after the newest = %+v, want none", rest)
	}
}

// Under concurrent writers of the feed, a reader that polls it from where
// it stopped never skips a change: what it collected is, in the end, the
// whole feed in order.
func testChangesConcurrent(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := s.PutPlayer(ctx, &podium.Player{ID: id, Name: id, UpdatedAt: t0}); err != nil {
					errs <- err
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var seen []podium.Change
	var cursor int64
	deadline := time.Now().Add(within)
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		cs := changes(t, s, cursor, 7)
		seen = append(seen, cs...)
		if len(cs) > 0 {
			cursor = cs[len(cs)-1].ID
		}
		if finished && len(cs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the writers did not finish")
		}
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all := changes(t, s, 0, 2*writers*each)
	if len(all) != writers*each {
		t.Fatalf("the feed has %d changes, want %d", len(all), writers*each)
	}
	if !slices.Equal(seen, all) {
		missed := 0
		for _, c := range all {
			if !slices.Contains(seen, c) {
				missed++
			}
		}
		t.Fatalf("the polling reader collected %d changes (%d missed), the feed has %d", len(seen), missed, len(all))
	}
}

// LoadBoard, LoadPlayer and LoadKey return one object, nil when absent.
func testLoads(t *testing.T, open func(*testing.T) podium.SharedStore) {
	s := open(t)
	if b, err := s.LoadBoard(ctx, "b"); b != nil || err != nil {
		t.Errorf("LoadBoard of a missing board = %+v, %v", b, err)
	}
	if p, err := s.LoadPlayer(ctx, "p"); p != nil || err != nil {
		t.Errorf("LoadPlayer of a missing player = %+v, %v", p, err)
	}
	if k, err := s.LoadKey(ctx, "k"); k != nil || err != nil {
		t.Errorf("LoadKey of a missing key = %+v, %v", k, err)
	}
	bd := putBoard(t, s, "b", podium.Weekly, 2)
	b, err := s.LoadBoard(ctx, "b")
	if err != nil || b == nil {
		t.Fatalf("LoadBoard = %v, %v", b, err)
	}
	checkBoard(t, *b, *bd)
	p := podium.Player{ID: "p", Name: "Pé", Hidden: true, Meta: []byte(`{"c":1}`), UpdatedAt: at(5)}
	if err := s.PutPlayer(ctx, &p); err != nil {
		t.Fatal(err)
	}
	gp, err := s.LoadPlayer(ctx, "p")
	if err != nil || gp == nil || gp.Name != p.Name || !gp.Hidden || string(gp.Meta) != `{"c":1}` || !gp.UpdatedAt.Equal(p.UpdatedAt.Truncate(time.Millisecond)) {
		t.Errorf("LoadPlayer = %+v, %v; want %+v", gp, err, p)
	}
	k := podium.APIKey{ID: "k", Name: "n", Scopes: []string{"read"}, Boards: []string{"b"}, Hash: "abc", CreatedAt: at(7)}
	if err := s.PutKey(ctx, &k); err != nil {
		t.Fatal(err)
	}
	gk, err := s.LoadKey(ctx, "k")
	if err != nil || gk == nil || gk.Hash != "abc" || !slices.Equal(gk.Scopes, k.Scopes) || !slices.Equal(gk.Boards, k.Boards) {
		t.Errorf("LoadKey = %+v, %v; want %+v", gk, err, k)
	}
	if err := s.DeleteKey(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if gk, err := s.LoadKey(ctx, "k"); gk != nil || err != nil {
		t.Errorf("LoadKey of a revoked key = %+v, %v", gk, err)
	}
}
