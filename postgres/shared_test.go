package postgres

import (
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/internal/migrate"
	"github.com/podiumhq/podium/internal/pgtest"
	"github.com/podiumhq/podium/storetest"
)

// suiteLockTimeout is the lock timeout of the stores the shared contract
// suite runs on: long enough for its short holds on a loaded machine,
// short enough for its one wait for the timeout.
const suiteLockTimeout = time.Second

func TestSharedContract(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) podium.SharedStore {
		s, _ := openTest(t, Options{LockTimeout: suiteLockTimeout})
		return s
	})
}

// sessions counts the other sessions of s (they share its
// application_name) that match the SQL condition where.
func sessions(t *testing.T, s *Store, where string) int {
	t.Helper()
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE application_name = current_setting('application_name') AND pid <> pg_backend_pid() AND `+where).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitSessions waits until cond holds of the count of s's sessions that
// match where.
func waitSessions(t *testing.T, s *Store, where string, cond func(n int) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond(sessions(t, s, where)) {
		if time.Now().After(deadline) {
			t.Fatalf("no change in the sessions where %s", where)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func putBoard(t *testing.T, s *Store, id string) *podium.Board {
	t.Helper()
	b := board(id, 1)
	if err := s.PutBoard(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// A write that waits for a board (or an idempotency key) longer than the
// lock timeout fails as unavailable, which a node answers with 503 and a
// retry, not as a database that cannot be reached.
func TestLockTimeoutIsUnavailable(t *testing.T) {
	t.Parallel() // it mostly waits: for locks, timeouts or the disk
	s, _ := openTest(t, Options{LockTimeout: 200 * time.Millisecond})
	putBoard(t, s, "b")
	holder, err := s.Begin(ctx, []string{"b"})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := s.Begin(ctx, []string{"a", "b"}); podium.ErrorCode(err) != podium.ECodeUnavailable {
		t.Errorf("Begin behind a holder = %v, want %s", err, podium.ECodeUnavailable)
	}
	ref := []podium.IdempotencyRef{{Scope: "s", Key: "k"}}
	if _, err := holder.Idempotency(ctx, ref); err != nil {
		t.Fatal(err)
	}
	other, err := s.Begin(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback()
	if _, err := other.Idempotency(ctx, ref); podium.ErrorCode(err) != podium.ECodeUnavailable {
		t.Errorf("Idempotency of a key another transaction holds = %v, want %s", err, podium.ECodeUnavailable)
	}
}

// A node that sits idle inside its write transaction (paused, cut off)
// has the transaction ended by the server: its board is free again, and
// its late Commit fails and stores nothing.
func TestIdleTransactionEnded(t *testing.T) {
	t.Parallel() // it mostly waits: for locks, timeouts or the disk
	const idle = 300 * time.Millisecond
	s, _ := openTest(t, Options{IdleInTransactionTimeout: idle})
	bd := putBoard(t, s, "b")
	start := time.Now()
	tx, err := s.Begin(ctx, []string{"b"})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	waitSessions(t, s, "state = 'idle in transaction'", func(n int) bool { return n == 0 && time.Since(start) > idle })
	other, err := s.Begin(ctx, []string{"b"})
	if err != nil {
		t.Fatalf("Begin after the idle holder's transaction was ended: %v", err)
	}
	if err := other.Commit(ctx, scores("b", 1, 1)); err != nil {
		t.Fatal(err)
	}
	err = tx.Commit(ctx, scores(bd.ID, 1, 2))
	if err == nil {
		t.Fatal("the Commit of a transaction the server ended succeeded")
	}
	if errors.Is(err, podium.ErrOutcomeUnknown) {
		t.Errorf("the Commit of a transaction the server had ended reports an unknown outcome: %v", err)
	}
	if seq := lastSeq(t, s, "b"); seq != 1 {
		t.Errorf("LastSeq = %d, want 1: only the other transaction's", seq)
	}
}

// slowCommit makes every COMMIT that logged a submission sleep for d inside
// the server (a deferred constraint trigger), so that a test can act while
// the COMMIT is in flight; with fail, the trigger raises an error instead.
func slowCommit(t *testing.T, s *Store, d time.Duration, fail bool) {
	t.Helper()
	body := fmt.Sprintf("PERFORM pg_sleep(%g)", d.Seconds())
	if fail {
		body = "RAISE EXCEPTION 'refused at commit'"
	}
	for _, q := range []string{
		"CREATE FUNCTION at_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN " + body + "; RETURN NULL; END $$",
		"CREATE CONSTRAINT TRIGGER at_commit AFTER INSERT ON submissions DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION at_commit()",
	} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
}

// A connection lost while the server runs the COMMIT (a partition: the
// client can reach the server no more) leaves the outcome unknown, and
// Commit says so: here the server goes on to commit the batch after the
// client has lost its answer. (pgconn then sends the server a cancel
// request over a new connection, which the partition holds back: let
// through, it would make the server roll back instead.)
func TestCommitOutcomeUnknown(t *testing.T) {
	t.Parallel() // it mostly waits: for locks, timeouts or the disk
	dsn, schema := pgtest.Schema(t)
	dsn = pgtest.WithParam(t, dsn, "application_name", schema)
	direct := openDSN(t, dsn, Options{})
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	s := openDSN(t, pgtest.WithParam(t, pgtest.WithParam(t, dsn, "host", "127.0.0.1"), "port", strconv.Itoa(p.port())), Options{})
	slowCommit(t, direct, time.Second, false)
	putBoard(t, s, "b")
	tx, err := s.Begin(ctx, []string{"b"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.thaw() // before the stores close
	done := make(chan error, 1)
	go func() { done <- tx.Commit(ctx, scores("b", 1, 2)) }()
	waitSessions(t, direct, "query = 'COMMIT' AND wait_event = 'PgSleep'", func(n int) bool { return n == 1 })
	p.freeze()
	p.cut()
	err = await(t, done, "a Commit whose connection was cut")
	if !errors.Is(err, podium.ErrOutcomeUnknown) {
		t.Fatalf("Commit whose connection was cut during the COMMIT = %v, want an unknown outcome", err)
	}
	// The server finishes the COMMIT: the batch is stored although the
	// client never heard so.
	deadline := time.Now().Add(30 * time.Second)
	for {
		seq, err := direct.LastSeq(ctx, "b")
		if err == nil && seq == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("LastSeq = %d, %v; the server did not commit the batch", seq, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Failures the server reports before the COMMIT, or at the COMMIT as an
// error that rolls back, store nothing, and Commit does not call their
// outcome unknown.
func TestCommitFailuresStoredNothing(t *testing.T) {
	t.Parallel() // it mostly waits: for locks, timeouts or the disk
	check := func(t *testing.T, s *Store, err error) {
		t.Helper()
		if err == nil {
			t.Fatal("Commit succeeded")
		}
		if errors.Is(err, podium.ErrOutcomeUnknown) {
			t.Errorf("Commit = %v: an unknown outcome, but nothing was stored", err)
		}
		if seq := lastSeq(t, s, "b"); seq != 0 {
			t.Errorf("LastSeq = %d, want 0", seq)
		}
		// The transaction ended: the board is free.
		tx, err := s.Begin(ctx, []string{"b"})
		if err != nil {
			t.Fatalf("Begin after the failed Commit: %v", err)
		}
		tx.Rollback()
	}
	t.Run("Statement", func(t *testing.T) {
		t.Parallel()
		s, _ := openTest(t, Options{})
		putBoard(t, s, "b")
		// A row the head does not know of: the log's primary key refuses
		// the batch.
		if _, err := s.pool.Exec(ctx, "INSERT INTO submissions (board, seq, at_ms, kind, period, player) VALUES ('b', 1, 0, 0, 'all', 'x')"); err != nil {
			t.Fatal(err)
		}
		tx, err := s.Begin(ctx, []string{"b"})
		if err != nil {
			t.Fatal(err)
		}
		err = tx.Commit(ctx, scores("b", 1, 1))
		check(t, s, err)
		if err != nil && !strings.Contains(err.Error(), "already logged") {
			t.Errorf("Commit = %v, want it to say the seq is already logged", err)
		}
	})
	t.Run("AtCommit", func(t *testing.T) {
		t.Parallel()
		s, _ := openTest(t, Options{})
		slowCommit(t, s, 0, true)
		putBoard(t, s, "b")
		tx, err := s.Begin(ctx, []string{"b"})
		if err != nil {
			t.Fatal(err)
		}
		check(t, s, tx.Commit(ctx, scores("b", 1, 1)))
	})
	t.Run("Terminated", func(t *testing.T) {
		t.Parallel()
		s, _ := openTest(t, Options{})
		putBoard(t, s, "b")
		tx, err := s.Begin(ctx, []string{"b"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE application_name = current_setting('application_name') AND state = 'idle in transaction'`); err != nil {
			t.Fatal(err)
		}
		waitSessions(t, s, "state = 'idle in transaction'", func(n int) bool { return n == 0 })
		check(t, s, tx.Commit(ctx, scores("b", 1, 1)))
	})
}

// Pruning removes old changes; a reader whose position it passed gets
// ErrChangesPruned, one at or after it goes on.
func TestChangesPruned(t *testing.T) {
	s, _ := openTest(t, Options{})
	for _, id := range []string{"a", "b", "c"} {
		if err := s.PutPlayer(ctx, &podium.Player{ID: id, Name: id}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.Changes(ctx, 0, 10)
	if err != nil || len(all) != 3 {
		t.Fatalf("Changes = %v, %v", all, err)
	}
	if n, err := s.PruneChanges(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("PruneChanges(1h) = %d, %v; want nothing pruned", n, err)
	}
	if n, err := s.PruneChanges(ctx, 0); err != nil || n != 3 {
		t.Fatalf("PruneChanges(0) = %d, %v; want 3", n, err)
	}
	for _, after := range []int64{0, all[0].ID, all[1].ID} {
		if cs, err := s.Changes(ctx, after, 10); !errors.Is(err, podium.ErrChangesPruned) {
			t.Errorf("Changes after %d, pruned = %v, %v; want ErrChangesPruned", after, cs, err)
		}
	}
	last := all[2].ID
	if id, err := s.LastChange(ctx); err != nil || id != last {
		t.Errorf("LastChange after pruning = %d, %v; want %d", id, err, last)
	}
	if cs, err := s.Changes(ctx, last, 10); err != nil || len(cs) != 0 {
		t.Errorf("Changes after the last = %v, %v; want none", cs, err)
	}
	if err := s.PutPlayer(ctx, &podium.Player{ID: "d", Name: "d"}); err != nil {
		t.Fatal(err)
	}
	if cs, err := s.Changes(ctx, last, 10); err != nil || len(cs) != 1 || cs[0].ID != last+1 || cs[0].Key != "d" {
		t.Errorf("Changes after pruning and one more change = %v, %v; want d at %d", cs, err, last+1)
	}
}

// Metadata writes prune the feed by themselves, keeping what is younger
// than the retention and the change being written.
func TestChangesPrunedByWrites(t *testing.T) {
	s, _ := openTest(t, Options{ChangeRetention: time.Millisecond})
	put := func(id string) {
		t.Helper()
		if err := s.PutPlayer(ctx, &podium.Player{ID: id, Name: id}); err != nil {
			t.Fatal(err)
		}
	}
	put("a") // the first write prunes (nothing), then not for pruneEvery
	put("b")
	time.Sleep(20 * time.Millisecond)
	put("c")
	if cs, err := s.Changes(ctx, 0, 10); err != nil || len(cs) != 3 {
		t.Fatalf("within pruneEvery of the last pruning, Changes = %v, %v; want all 3", cs, err)
	}
	s.nextPrune.Store(0) // pruneEvery has passed
	put("d")
	if _, err := s.Changes(ctx, 0, 10); !errors.Is(err, podium.ErrChangesPruned) {
		t.Errorf("Changes from the start after pruning = %v, want ErrChangesPruned", err)
	}
	cs, err := s.Changes(ctx, 3, 10)
	if err != nil || len(cs) != 1 || cs[0].Key != "d" {
		t.Errorf("Changes after c = %v, %v; want d, kept though older than the retention by the time it was read", cs, err)
	}
}

// Migration 0002 on a database written before it: every board gets a
// head and a generation of its own, and writers can lock them.
func TestMigrateSharedExistingData(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := migrate.Apply(ctx, db, migrate.PostgreSQL, ms[:1]); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO boards (id, body, created_ms, updated_ms) VALUES ('logged', '{"keys":[{"name":"k","order":"desc"}],"mode":"best","reset":{"every":"none","tz":"UTC"}}', 0, 0),
			('empty', '{"keys":[{"name":"k","order":"desc"}],"mode":"best","reset":{"every":"none","tz":"UTC"}}', 0, 0)`,
		`INSERT INTO submissions (board, seq, at_ms, k1, kind, period, player) VALUES ('logged', 1, 0, 5, 0, 'all', 'p'), ('logged', 2, 0, 6, 0, 'all', 'p')`,
		`INSERT INTO board_heads (board, seq) VALUES ('logged', 2)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s := openDSN(t, dsn, Options{})
	bs, err := s.Boards(ctx)
	if err != nil || len(bs) != 2 {
		t.Fatalf("Boards = %v, %v", bs, err)
	}
	if bs[0].Gen == 0 || bs[1].Gen == 0 || bs[0].Gen == bs[1].Gen {
		t.Errorf("generations after the migration: %d and %d, want two different ones", bs[0].Gen, bs[1].Gen)
	}
	tx, err := s.Begin(ctx, []string{"logged", "empty"})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if seq, _, ok := tx.Head("logged"); !ok || seq != 2 {
		t.Errorf("head of logged = %d, %v; want 2", seq, ok)
	}
	if seq, _, ok := tx.Head("empty"); !ok || seq != 0 {
		t.Errorf("head of empty = %d, %v; want 0, and the board to exist", seq, ok)
	}
	if id, err := s.LastChange(ctx); err != nil || id != 0 {
		t.Errorf("LastChange after the migration = %d, %v; want 0", id, err)
	}
}

// A log row that cannot be decoded (keys that are not a prefix, possible
// only in a damaged table) fails WriteTx.Log as it fails Store.Log,
// instead of ending the scan as if the log ended there.
func TestTxLogMalformedRow(t *testing.T) {
	s, _ := openTest(t, Options{})
	putBoard(t, s, "b")
	if err := s.Commit(ctx, scores("b", 1, 1)); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"ALTER TABLE submissions DROP CONSTRAINT submissions_check",
		"INSERT INTO submissions (board, seq, at_ms, k1, k2, kind, period, player) VALUES ('b', 2, 0, NULL, 7, 0, 'all', 'x')",
		"UPDATE board_heads SET seq = 2 WHERE board = 'b'",
	} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := s.Log(ctx, "b", 0, func(*podium.Submission) error { return nil }); err == nil {
		t.Fatal("Store.Log of a malformed row succeeded")
	}
	tx, err := s.Begin(ctx, []string{"b"})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	n := 0
	err = tx.Log(ctx, "b", 0, func(*podium.Submission) error { n++; return nil })
	if err == nil {
		t.Fatalf("WriteTx.Log of a malformed row succeeded after %d rows", n)
	}
}
