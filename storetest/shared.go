package storetest

import (
	"errors"
	"fmt"
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
	t.Run("TxForeignParts", func(t *testing.T) { t.Parallel(); testTxForeignParts(t, open) }) // parts.go
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
