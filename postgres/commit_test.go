package postgres

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/podiumhq/podium"
)

// A batch far above PostgreSQL's 65535 bound parameters (70,000
// submissions and upserts, 11 and 10 columns each) is stored whole, across
// several statements of maxRows rows, and a later upsert of an entry wins
// even when the two land in different statements.
func TestCommitLargeBatch(t *testing.T) {
	t.Parallel() // it mostly waits: for locks, timeouts or the disk
	s, _ := openTest(t, Options{})
	const n = 70_000
	b := scores("b", 1, n)
	// p000001 again at the end, past the first statement's maxRows rows.
	last := b.Upserts[0]
	last.Keys, last.Seq = []int64{-1}, n+1
	b.Upserts = append(b.Upserts, last)
	if err := s.Commit(ctx, b); err != nil {
		t.Fatalf("Commit of %d scores: %v", n, err)
	}
	if got := countEntries(t, s, "b"); got != n {
		t.Errorf("%d entries, want %d", got, n)
	}
	if got := countLog(t, s, "b"); got != n {
		t.Errorf("%d logged submissions, want %d", got, n)
	}
	if seq := lastSeq(t, s, "b"); seq != n {
		t.Errorf("LastSeq = %d, want %d", seq, n)
	}
	var keys []int64
	if err := s.pool.QueryRow(ctx, "SELECT array_remove(ARRAY[k1, k2, k3, k4], NULL) FROM entries WHERE player = 'p000001'").Scan(&keys); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != -1 {
		t.Errorf("entry p000001 has keys %v, want the later upsert's [-1]", keys)
	}
}

// holdHead locks board's head row in a transaction of its own, as another
// writer would, and returns a function that releases it.
func holdHead(t *testing.T, s *Store, board string) (release func()) {
	t.Helper()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT seq FROM board_heads WHERE board = $1 FOR UPDATE", board); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { tx.Rollback(ctx) }) }
	t.Cleanup(release)
	return release
}

// blocked counts the sessions of s that wait for a lock.
func blocked(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE NOT l.granted AND a.application_name = current_setting('application_name')`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitBlocked returns once a session of s waits for a lock.
func waitBlocked(t *testing.T, s *Store) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for blocked(t, s) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no session started waiting for the lock")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// commitAsync runs Commit on its own goroutine; the result arrives on the
// channel. A test waits on it with a generous bound, so that a hang fails
// the test instead of stalling the suite.
func commitAsync(s *Store, ctx context.Context, b *podium.Batch) <-chan error {
	done := make(chan error, 1)
	go func() { done <- s.Commit(ctx, b) }()
	return done
}

func await(t *testing.T, done <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return", what)
		return nil
	}
}

// A commit cancelled while the server works on it (here: waits for a lock
// on the board's head) is cancelled on the server too: it returns an
// error, stores nothing even once the lock is free, and leaves the store
// working. (Merely dropping the connection would leave the server's
// session waiting, to commit the batch as soon as it gets the lock.)
func TestCommitCancelledInFlight(t *testing.T) {
	t.Parallel() // it mostly waits: for locks, timeouts or the disk
	// The server gets as long as it needs to answer the cancel, however
	// loaded the machine: the test checks the answer, not its speed.
	s, _ := openTest(t, Options{MaxConns: 4, cancelGrace: time.Minute})
	if err := s.Commit(ctx, scores("b", 1, 3)); err != nil {
		t.Fatal(err)
	}
	release := holdHead(t, s, "b")
	cctx, cancel := context.WithCancel(ctx)
	done := commitAsync(s, cctx, scores("b", 4, 5))
	waitBlocked(t, s)
	cancel()
	if err := await(t, done, "a cancelled Commit"); err == nil {
		t.Fatal("Commit succeeded though its context was cancelled before the server could finish it")
	}
	if n := blocked(t, s); n != 0 {
		t.Fatalf("Commit returned, but %d of its sessions still wait on the server to commit the batch", n)
	}
	release()
	if n := countLog(t, s, "b"); n != 3 {
		t.Errorf("after a cancelled commit, the log has %d rows, want 3", n)
	}
	if n := countEntries(t, s, "b"); n != 3 {
		t.Errorf("after a cancelled commit, %d entries, want 3", n)
	}
	if seq := lastSeq(t, s, "b"); seq != 3 {
		t.Errorf("after a cancelled commit, LastSeq = %d, want 3", seq)
	}
	// Every connection of the pool still works.
	for i := range 8 {
		if err := s.Commit(ctx, scores("b", uint64(4+i), 1)); err != nil {
			t.Fatalf("Commit after a cancelled one: %v", err)
		}
	}
}

// Options.StatementTimeout ends a statement that waits too long, instead
// of letting a commit hang on a lock.
func TestStatementTimeout(t *testing.T) {
	t.Parallel() // it mostly waits: for locks, timeouts or the disk
	setup, dsn := openTest(t, Options{})
	if err := setup.Commit(ctx, scores("b", 1, 1)); err != nil {
		t.Fatal(err)
	}
	holdHead(t, setup, "b")
	s := openDSN(t, dsn, Options{StatementTimeout: 250 * time.Millisecond})
	err := await(t, commitAsync(s, ctx, scores("b", 2, 1)), "a Commit blocked on a lock")
	if code, _ := pgCode(err); code != "57014" { // query_canceled
		t.Fatalf("Commit blocked past the statement timeout = %v, want SQLSTATE 57014", err)
	}
}

// The scans stream for as long as their callback and the server take: the
// statement timeout does not cut them off. The scan here waits for a
// table lock for three times the timeout before it can read.
func TestScansIgnoreStatementTimeout(t *testing.T) {
	t.Parallel() // it mostly waits: for locks, timeouts or the disk
	const timeout = 250 * time.Millisecond
	setup, dsn := openTest(t, Options{})
	if err := setup.Commit(ctx, scores("b", 1, 10)); err != nil {
		t.Fatal(err)
	}
	s := openDSN(t, dsn, Options{StatementTimeout: timeout})
	for _, scan := range []struct {
		name, table string
		run         func() (int, error)
	}{
		{"LoadEntries", "entries", func() (int, error) {
			n := 0
			err := s.LoadEntries(ctx, "b", "all", func(*podium.Entry) error { n++; return nil })
			return n, err
		}},
		{"Log", "submissions", func() (int, error) {
			n := 0
			err := s.Log(ctx, "b", 0, func(*podium.Submission) error { n++; return nil })
			return n, err
		}},
	} {
		t.Run(scan.name, func(t *testing.T) {
			tx, err := setup.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, "LOCK TABLE "+scan.table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
				t.Fatal(err)
			}
			type result struct {
				n   int
				err error
			}
			done := make(chan result, 1)
			go func() { n, err := scan.run(); done <- result{n, err} }()
			waitBlocked(t, setup)
			time.Sleep(3 * timeout) // long enough for a timeout to fire, if one applied
			tx.Rollback(ctx)
			select {
			case r := <-done:
				if r.err != nil || r.n != 10 {
					t.Errorf("%s after waiting past the statement timeout: %d rows, %v; want 10 rows", scan.name, r.n, r.err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s did not return", scan.name)
			}
		})
	}
}

// A failed commit reports which rule it broke.
func TestCommitDuplicateSeqError(t *testing.T) {
	s, _ := openTest(t, Options{})
	if err := s.Commit(ctx, scores("b", 1, 2)); err != nil {
		t.Fatal(err)
	}
	err := s.Commit(ctx, scores("b", 2, 1))
	if err == nil || !strings.Contains(err.Error(), "already logged") {
		t.Errorf("Commit of a logged (board, seq) = %v, want an error saying it is already logged", err)
	}
}

// Batches the schema could not hold faithfully fail before any write.
func TestCommitRejectsMalformedBatches(t *testing.T) {
	s, _ := openTest(t, Options{})
	for name, mutate := range map[string]func(*podium.Batch){
		"no keys":    func(b *podium.Batch) { b.Upserts[1].Keys = nil },
		"five keys":  func(b *podium.Batch) { b.Upserts[1].Keys = []int64{1, 2, 3, 4, 5} },
		"huge seq":   func(b *podium.Batch) { b.Submissions[1].Seq = 1<<64 - 1 },
		"log 5 keys": func(b *podium.Batch) { b.Submissions[0].Keys = make([]int64, 5) },
		"entry seq":  func(b *podium.Batch) { b.Upserts[0].Seq = 1 << 63 },
		"kind":       func(b *podium.Batch) { b.Submissions[0].Kind = 7 },
		"watermark":  func(b *podium.Batch) { b.Watermarks = []podium.Watermark{{Board: "b", Seq: 1 << 63}} },
	} {
		b := scores("b", 1, 2)
		mutate(b)
		if err := s.Commit(ctx, b); err == nil {
			t.Errorf("%s: Commit succeeded", name)
		}
		if n := countEntries(t, s, "b"); n != 0 {
			t.Fatalf("%s: a rejected batch stored %d entries", name, n)
		}
	}
	if err := s.ReplaceEntries(ctx, "other", scores("b", 1, 1).Upserts, 1); err == nil {
		t.Error("ReplaceEntries accepted an entry of another board")
	}
}

// The store is safe for concurrent use: writers of several boards and
// readers at once, each board's head at its highest seq.
func TestConcurrentUse(t *testing.T) {
	s, _ := openTest(t, Options{})
	const writers, batches, per = 4, 10, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches+20)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range batches {
				// Every batch writes to two boards: its own and the shared "all".
				b := scores("all", uint64((w*batches+i)*per+1), per)
				own := scores(string(rune('a'+w)), uint64(i*per+1), per)
				b.Submissions = append(b.Submissions, own.Submissions...)
				b.Upserts = append(b.Upserts, own.Upserts...)
				if err := s.Commit(ctx, b); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			if err := s.LoadEntries(ctx, "all", "all", func(*podium.Entry) error { return nil }); err != nil {
				errs <- err
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := countEntries(t, s, "all"); n != writers*batches*per {
		t.Errorf("%d entries after concurrent commits, want %d", n, writers*batches*per)
	}
	if seq := lastSeq(t, s, "all"); seq != writers*batches*per {
		t.Errorf("LastSeq(all) = %d, want %d", seq, writers*batches*per)
	}
	for w := range writers {
		if seq := lastSeq(t, s, string(rune('a'+w))); seq != batches*per {
			t.Errorf("LastSeq(%c) = %d, want %d", 'a'+w, seq, batches*per)
		}
	}
}

// ReplaceEntries of more entries than one statement binds, with a
// duplicate, keeps the later one; a failure leaves the old entries.
func TestReplaceEntriesLarge(t *testing.T) {
	s, _ := openTest(t, Options{})
	if err := s.Commit(ctx, scores("b", 1, 10)); err != nil {
		t.Fatal(err)
	}
	n := maxRows + 100
	es := scores("b", 100, n).Upserts
	dup := es[0]
	dup.Seq = 1 << 40
	es = append(es, dup)
	if err := s.ReplaceEntries(ctx, "b", es, 7); err != nil {
		t.Fatalf("ReplaceEntries: %v", err)
	}
	if got := countEntries(t, s, "b"); got != n {
		t.Errorf("%d entries after ReplaceEntries, want %d", got, n)
	}
	var seq int64
	if err := s.pool.QueryRow(ctx, "SELECT seq FROM entries WHERE player = $1", dup.Player).Scan(&seq); err != nil || seq != 1<<40 {
		t.Errorf("the duplicated entry has seq %d (%v), want the later one's", seq, err)
	}

	bad := scores("b", 1, 3).Upserts
	bad[2].Keys = nil
	if err := s.ReplaceEntries(ctx, "b", bad, 9); err == nil {
		t.Fatal("ReplaceEntries with a malformed entry succeeded")
	}
	if got := countEntries(t, s, "b"); got != n {
		t.Errorf("a failed ReplaceEntries left %d entries, want the %d from before", got, n)
	}
}

// A head row exists per board that has a log, moves in the commit's
// transaction, and goes with its board.
func TestBoardHeads(t *testing.T) {
	s, _ := openTest(t, Options{})
	if err := s.PutBoard(ctx, board("b", 2)); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, scores("b", 1, 5)); err != nil {
		t.Fatal(err)
	}
	head := func() (int64, error) {
		var seq int64
		err := s.pool.QueryRow(ctx, "SELECT seq FROM board_heads WHERE board = 'b'").Scan(&seq)
		return seq, err
	}
	if seq, err := head(); err != nil || seq != 5 {
		t.Errorf("head of b = %d, %v; want 5", seq, err)
	}
	if err := s.DeleteBoard(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := head(); !errors.Is(err, pgx.ErrNoRows) {
		t.Errorf("after DeleteBoard, reading the head gave %v, want no row", err)
	}
}
