package sqlite

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/podiumhq/podium"
)

// The database records one instance id, never replaced, kept across
// reopening, readable from a File without migrating it.
func TestInstanceID(t *testing.T) {
	s := openTest(t, Options{})
	if id, err := s.InstanceID(ctx); err != nil || id != "" {
		t.Fatalf("InstanceID of a new database = %q, %v; want none", id, err)
	}
	if err := s.SetInstanceID(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetInstanceID(ctx, "one"); err != nil {
		t.Errorf("setting the same id again: %v", err)
	}
	if err := s.SetInstanceID(ctx, "two"); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Errorf("replacing the id = %v, want %s", err, podium.ECodeConflict)
	}
	s = reopen(t, s, Options{})
	if id, err := s.InstanceID(ctx); err != nil || id != "one" {
		t.Errorf("after reopening, InstanceID = %q, %v; want one", id, err)
	}
	f, err := OpenFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if id, err := f.InstanceID(ctx); err != nil || id != "one" {
		t.Errorf("File.InstanceID = %q, %v; want one", id, err)
	}
}

// The database and its -wal and -shm files are private to the owner, in a
// private directory, whatever the umask (SQLite alone creates them 0644).
func TestFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s, err := Open(filepath.Join(dir, "podium.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.PutBoard(ctx, board("b", 1)); err != nil {
		t.Fatal(err)
	}
	want := map[string]os.FileMode{dir: 0o700, s.Path(): 0o600, s.Path() + "-wal": 0o600, s.Path() + "-shm": 0o600}
	for name, mode := range want {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != mode {
			t.Errorf("%s has mode %v, want %v", filepath.Base(name), got, mode)
		}
	}
}

// OpenFile never creates a database, so a mistyped path is an error and not
// a new empty file.
func TestOpenFileNeverCreates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "podium.db")
	if f, err := OpenFile(path); err == nil {
		f.Close()
		t.Fatal("OpenFile of a missing file succeeded")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("OpenFile left a file behind: %v", err)
	}
}

// quick_check passes a sound database and reports one whose table page was
// overwritten with random bytes. The page-type byte is made invalid so the
// damage is structural: a change inside a well-formed record is invisible
// to SQLite (no page checksums), which ARCHITECTURE.md says.
func TestQuickCheckFindsDamage(t *testing.T) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	s := openTest(t, Options{})
	if err := s.PutBoard(ctx, board("b", 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, scores("b", 1, 2000)); err != nil {
		t.Fatal(err)
	}
	if problems, err := s.QuickCheck(ctx); err != nil || len(problems) != 0 {
		t.Fatalf("QuickCheck of a sound database = %v, %v", problems, err)
	}
	var root, pageSize int64
	if err := s.r.QueryRow("SELECT rootpage FROM sqlite_schema WHERE name = 'submissions'").Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := s.r.QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	if err := s.Close(); err != nil { // checkpoints everything into the main file
		t.Fatal(err)
	}

	page := make([]byte, pageSize)
	for i := 0; i < len(page); i += 8 {
		binary.LittleEndian.PutUint64(page[i:], rng.Uint64())
	}
	page[0] = 0 // no valid b-tree page has type 0
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(page, (root-1)*pageSize); err != nil {
		t.Fatal(err)
	}
	f.Close()

	df, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	for _, full := range []bool{false, true} {
		problems, err := df.Check(ctx, full)
		if err == nil && len(problems) == 0 {
			t.Errorf("Check(full=%v) found nothing wrong with an overwritten page", full)
		}
	}
}

// A backup is a consistent copy that keeps the instance id, is private to
// the owner, never overwrites a file and leaves no temporary file behind;
// it can be taken through a File while a Store holds the database.
func TestBackupFile(t *testing.T) {
	s := openTest(t, Options{})
	if err := s.SetInstanceID(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBoard(ctx, board("b", 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, scores("b", 1, 300)); err != nil { // still in the WAL
		t.Fatal(err)
	}
	f, err := OpenFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	dst := filepath.Join(dir, "backup.db")
	if err := f.Backup(ctx, dst); err != nil {
		t.Fatalf("Backup: %v", err)
	}
	if err := f.Backup(ctx, dst); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Errorf("Backup over an existing file = %v, want %s", err, podium.ECodeConflict)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("backup directory holds %v, want only backup.db", strings.Join(names, ", "))
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("backup file mode: %v %v, want 0600", fi.Mode(), err)
	}
	b, err := OpenFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if problems, err := b.Check(ctx, true); err != nil || len(problems) != 0 {
		t.Errorf("integrity_check of the backup: %v %v", problems, err)
	}
	if id, err := b.InstanceID(ctx); err != nil || id != "src" {
		t.Errorf("backup instance id = %q, %v; want src", id, err)
	}
	var n int
	if err := b.db.QueryRow("SELECT count(*) FROM entries").Scan(&n); err != nil || n != 300 {
		t.Errorf("the backup has %d entries (%v), want 300", n, err)
	}
}

// A snapshot holds the state at the moment it was taken while the store
// goes on taking writes, and release removes its files.
func TestSnapshot(t *testing.T) {
	s := openTest(t, Options{})
	if err := s.PutBoard(ctx, board("b", 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, scores("b", 1, 100)); err != nil {
		t.Fatal(err)
	}
	snap, release, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, scores("b", 101, 50)); err != nil {
		t.Fatalf("commit while a snapshot is open: %v", err)
	}
	if seq, err := snap.LastSeq(ctx, "b"); err != nil || seq != 100 {
		t.Errorf("snapshot LastSeq = %d, %v; want 100", seq, err)
	}
	if seq, err := s.LastSeq(ctx, "b"); err != nil || seq != 150 {
		t.Errorf("store LastSeq = %d, %v; want 150", seq, err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(s.Path() + ".snapshot-*")
	if len(left) > 0 {
		t.Errorf("release left %v", left)
	}
}

// What SQLite cannot detect, shown rather than claimed: when a crash leaves
// commits in the WAL and one of its frames is damaged, recovery keeps the
// frames before it and silently drops that commit and every later one;
// quick_check then finds nothing wrong. ARCHITECTURE.md ("Start-up integrity
// checks") names backups and replication as the defence.
func TestDamagedWALFrameDropsLaterCommits(t *testing.T) {
	s := openTest(t, Options{Sync: "normal"})
	if err := s.PutBoard(ctx, board("b", 1)); err != nil {
		t.Fatal(err)
	}
	var walSize []int64
	for i := range 3 {
		if err := s.Commit(ctx, scores("b", uint64(i*100+1), 100)); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(s.Path() + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		walSize = append(walSize, fi.Size())
	}
	// A crash: the database and its WAL as they are on disk now, without
	// the checkpoint that closing would do.
	crashed := filepath.Join(t.TempDir(), "podium.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(s.Path() + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if suffix == "-wal" {
			at := (walSize[0] + walSize[1]) / 2 // inside a frame of the second commit
			b[at] ^= 0xff
		}
		if err := os.WriteFile(crashed+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Open(crashed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if seq, err := c.LastSeq(ctx, "b"); err != nil || seq != 100 {
		t.Errorf("after recovery LastSeq = %d, %v; want 100 (the first commit only)", seq, err)
	}
	if problems, err := c.QuickCheck(ctx); err != nil || len(problems) != 0 {
		t.Errorf("quick_check after recovery: %v %v; SQLite sees nothing wrong", problems, err)
	}
}
