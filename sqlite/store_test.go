package sqlite

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/storetest"
)

func openTest(t *testing.T, opts Options) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "data", "podium.db"), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) podium.Store { return openTest(t, Options{}) })
}

var ctx = context.Background()

func board(id string, nkeys int) *podium.Board {
	b := &podium.Board{ID: id, CreatedAt: time.UnixMilli(1_700_000_000_000), UpdatedAt: time.UnixMilli(1_700_000_000_000)}
	for i := range nkeys {
		b.Keys = append(b.Keys, podium.KeyDef{Name: fmt.Sprintf("k%d", i+1), Order: podium.Desc})
	}
	if err := b.Normalize(); err != nil {
		panic(err)
	}
	return b
}

// scores returns a batch of n scores on board b, seqs from first on.
func scores(b string, first uint64, n int) *podium.Batch {
	var batch podium.Batch
	at := time.UnixMilli(1_700_000_000_000)
	for i := range n {
		seq := first + uint64(i)
		p := fmt.Sprintf("p%05d", seq)
		batch.Submissions = append(batch.Submissions, podium.Submission{Seq: seq, Board: b, Period: "all", Player: p, Keys: []int64{int64(seq)}, At: at})
		batch.Upserts = append(batch.Upserts, podium.Entry{Board: b, Period: "all", Player: p, Keys: []int64{int64(seq)}, At: at, Seq: seq})
	}
	return &batch
}

func countEntries(t *testing.T, s *Store, b string) int {
	t.Helper()
	n := 0
	if err := s.LoadEntries(ctx, b, "all", func(*podium.Entry) error { n++; return nil }); err != nil {
		t.Fatalf("LoadEntries: %v", err)
	}
	return n
}

func reopen(t *testing.T, s *Store, opts Options) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2, err := Open(s.Path(), opts)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}

// Committed data survives closing and reopening, in both sync modes.
func TestReopenKeepsData(t *testing.T) {
	for _, sync := range []string{"", "normal"} {
		t.Run("sync="+sync, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "podium.db")
			s, err := Open(path, Options{Sync: sync})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.PutBoard(ctx, board("b", 1)); err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(ctx, scores("b", 1, 250)); err != nil {
				t.Fatal(err)
			}
			s = reopen(t, s, Options{Sync: sync})
			if n := countEntries(t, s, "b"); n != 250 {
				t.Errorf("after reopening, %d entries, want 250", n)
			}
			if seq, err := s.LastSeq(ctx, "b"); err != nil || seq != 250 {
				t.Errorf("after reopening, LastSeq = %d, %v; want 250", seq, err)
			}
			if bs, err := s.Boards(ctx); err != nil || len(bs) != 1 {
				t.Errorf("after reopening, Boards = %v, %v", bs, err)
			}
		})
	}
}

// Reopening applies no migration twice: each is recorded once, and the
// schema version is the newest embedded migration.
func TestReopenAppliesMigrationsOnce(t *testing.T) {
	s := openTest(t, Options{})
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		t.Fatalf("migrations() = %v, %v", ms, err)
	}
	for range 2 {
		s = reopen(t, s, Options{})
	}
	var rows int
	if err := s.r.QueryRow("SELECT count(*) FROM schema_migrations").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != len(ms) {
		t.Errorf("schema_migrations has %d rows after three opens, want %d", rows, len(ms))
	}
	if v, err := s.SchemaVersion(ctx); err != nil || v != ms[len(ms)-1].Version {
		t.Errorf("SchemaVersion = %d, %v; want %d", v, err, ms[len(ms)-1].Version)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	s := openTest(t, Options{})
	if _, err := s.w.Exec("INSERT INTO schema_migrations (version, name, applied_ms) VALUES (9999, 'future', 0)"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s2, err := Open(s.Path(), Options{}); err == nil {
		s2.Close()
		t.Fatal("Open of a database from a newer podium succeeded")
	} else if !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open error %q does not say the schema is newer", err)
	}
}

func TestOpenOptions(t *testing.T) {
	for _, c := range []struct {
		sync string
		full bool // the store fsyncs the WAL itself; SQLite always runs NORMAL
	}{{"", true}, {"full", true}, {"FULL", true}, {"normal", false}} {
		s := openTest(t, Options{Sync: c.sync})
		var got int
		var mode string
		if err := s.w.QueryRow("PRAGMA synchronous").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if err := s.w.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if got != 1 || mode != "wal" || s.full != c.full {
			t.Errorf("Sync %q: synchronous=%d journal_mode=%s full=%v; want 1, wal, %v", c.sync, got, mode, s.full, c.full)
		}
	}
	for _, bad := range []struct {
		path string
		opts Options
	}{{filepath.Join(t.TempDir(), "x.db"), Options{Sync: "off"}}, {"", Options{}}, {":memory:", Options{}}, {filepath.Join(t.TempDir(), "a?b.db"), Options{}}} {
		if s, err := Open(bad.path, bad.opts); err == nil {
			s.Close()
			t.Errorf("Open(%q, %+v) succeeded", bad.path, bad.opts)
		}
	}
}

func TestPutKeyDuplicateHash(t *testing.T) {
	s := openTest(t, Options{})
	k1 := &podium.APIKey{ID: "k1", Name: "a", Scopes: []string{"read"}, Hash: "same"}
	k2 := &podium.APIKey{ID: "k2", Name: "b", Scopes: []string{"read"}, Hash: "same"}
	if err := s.PutKey(ctx, k1); err != nil {
		t.Fatal(err)
	}
	if err := s.PutKey(ctx, k2); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Errorf("PutKey with another key's hash = %v, want %s", err, podium.ECodeConflict)
	}
	// Replacing a key by id may change its hash.
	k1.Hash = "rotated"
	if err := s.PutKey(ctx, k1); err != nil {
		t.Fatalf("PutKey replacing k1: %v", err)
	}
	if ks, err := s.Keys(ctx); err != nil || len(ks) != 1 || ks[0].Hash != "rotated" {
		t.Errorf("Keys = %+v, %v; want only k1 with the new hash", ks, err)
	}
}

// Batches of every size around the statement chunk sizes store every row.
func TestCommitChunking(t *testing.T) {
	s := openTest(t, Options{Sync: "normal"})
	seq := uint64(1)
	total := 0
	for _, n := range []int{1, 3, 4, 5, 15, 16, 17, 63, 64, 65, 85, 128, 129, 1000} {
		if err := s.Commit(ctx, scores("b", seq, n)); err != nil {
			t.Fatalf("Commit of %d scores: %v", n, err)
		}
		seq += uint64(n)
		total += n
		if got := countEntries(t, s, "b"); got != total {
			t.Fatalf("after a batch of %d, %d entries, want %d", n, got, total)
		}
	}
	if last, _ := s.LastSeq(ctx, "b"); last != seq-1 {
		t.Errorf("LastSeq = %d, want %d", last, seq-1)
	}
}

// Entries that the schema cannot hold fail the whole batch before any write.
func TestCommitRejectsMalformedBatches(t *testing.T) {
	s := openTest(t, Options{})
	for name, mutate := range map[string]func(*podium.Batch){
		"no keys":    func(b *podium.Batch) { b.Upserts[1].Keys = nil },
		"five keys":  func(b *podium.Batch) { b.Upserts[1].Keys = []int64{1, 2, 3, 4, 5} },
		"huge seq":   func(b *podium.Batch) { b.Submissions[1].Seq = math.MaxUint64 },
		"log 5 keys": func(b *podium.Batch) { b.Submissions[0].Keys = make([]int64, 5) },
		"entry seq":  func(b *podium.Batch) { b.Upserts[0].Seq = 1 << 63 },
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

// The store is safe for concurrent use: writers and readers at once.
func TestConcurrentUse(t *testing.T) {
	s := openTest(t, Options{Sync: "normal"})
	const writers, batches, per = 4, 10, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches+1)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range batches {
				first := uint64((w*batches+i)*per + 1)
				if err := s.Commit(ctx, scores("b", first, per)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			if err := s.LoadEntries(ctx, "b", "all", func(*podium.Entry) error { return nil }); err != nil {
				errs <- err
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := countEntries(t, s, "b"); n != writers*batches*per {
		t.Errorf("%d entries after concurrent commits, want %d", n, writers*batches*per)
	}
}

func TestCheckpointAndBackup(t *testing.T) {
	s := openTest(t, Options{})
	if err := s.PutBoard(ctx, board("b", 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, scores("b", 1, 100)); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkpoint(ctx); err != nil {
		t.Fatalf("Checkpoint: %v", err)
	}
	if fi, err := os.Stat(s.Path() + "-wal"); err == nil && fi.Size() != 0 {
		t.Errorf("after Checkpoint the WAL has %d bytes, want 0", fi.Size())
	}

	dst := filepath.Join(t.TempDir(), "backup.db")
	if err := s.Backup(ctx, dst); err != nil {
		t.Fatalf("Backup: %v", err)
	}
	if err := s.Backup(ctx, dst); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Errorf("Backup over an existing file = %v, want %s", err, podium.ECodeConflict)
	}
	b, err := Open(dst, Options{})
	if err != nil {
		t.Fatalf("Open(backup): %v", err)
	}
	defer b.Close()
	if n := countEntries(t, b, "b"); n != 100 {
		t.Errorf("the backup has %d entries, want 100", n)
	}
}

func TestRecRoundTrip(t *testing.T) {
	for _, keys := range [][]int64{{0}, {math.MinInt64}, {math.MaxInt64, math.MinInt64, -1, 1}} {
		for _, at := range []int64{0, -1, 1_700_000_000_123, math.MaxInt64 / 1_000_000} {
			in := podium.Entry{Keys: keys, At: time.UnixMilli(at), Seq: math.MaxInt64}
			var out podium.Entry
			if err := decodeRec(appendRec(nil, &in), &out); err != nil {
				t.Fatalf("decodeRec: %v", err)
			}
			if !out.At.Equal(in.At) || out.Seq != in.Seq || !slices.Equal(out.Keys, in.Keys) {
				t.Errorf("rec round trip: got %v %d %v, want %v %d %v", out.At, out.Seq, out.Keys, in.At, in.Seq, in.Keys)
			}
		}
	}
	for _, bad := range [][]byte{nil, {0x80}, {2, 2}, {2, 2, 1, 1, 1, 1, 1}} {
		var e podium.Entry
		if err := decodeRec(bad, &e); err == nil {
			t.Errorf("decodeRec(%x) accepted a malformed rec", bad)
		}
	}
}

// TestGroupSync: with Sync "full", a commit is reported durable only after
// an fsync that began after it, and concurrent commits share fsyncs.
func TestGroupSync(t *testing.T) {
	s := openTest(t, Options{})
	putTestBoard(t, s, "b")
	before := s.fsyncs.Load()
	var wg sync.WaitGroup
	const writers = 16
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				ticket, err := s.CommitDeferred(ctx, &podium.Batch{Submissions: []podium.Submission{{
					Board: "b", Seq: uint64(w*1000 + i + 1), Period: "all", Player: "p", Keys: []int64{1}, At: time.UnixMilli(1)}}})
				if err != nil {
					t.Error(err)
					return
				}
				if err := s.Sync(ctx, ticket); err != nil {
					t.Error(err)
					return
				}
				s.smu.Lock()
				synced := s.synced
				s.smu.Unlock()
				if synced < ticket {
					t.Errorf("Sync(%d) returned with only %d on disk", ticket, synced)
				}
			}
		}(w)
	}
	wg.Wait()
	n := s.fsyncs.Load() - before
	if n == 0 || n > writers*20 {
		t.Fatalf("%d fsyncs for %d commits", n, writers*20)
	}
	t.Logf("%d commits, %d fsyncs", writers*20, n)
	normal := openTest(t, Options{Sync: "normal"})
	putTestBoard(t, normal, "b")
	if n := normal.fsyncs.Load(); n != 0 {
		t.Fatalf("sync normal made %d fsyncs", n)
	}
}

func putTestBoard(t *testing.T, s *Store, id string) {
	t.Helper()
	if err := s.PutBoard(ctx, board(id, 1)); err != nil {
		t.Fatal(err)
	}
}
