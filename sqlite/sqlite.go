// Package sqlite is podium's database of record on SQLite: a podium.Store on
// one file, in WAL mode, through the pure-Go driver modernc.org/sqlite (no
// cgo, so podium stays a single static binary; bench/sqlitedriver has the
// measurements behind that choice).
//
// Every write goes through one connection, so writes are serialized and a
// transaction never waits for another writer of this process; reads use a
// separate pool and see the last committed state. The schema is created and
// upgraded by the embedded, ordered migrations in migrations/.
//
// Times are stored as unix milliseconds and read back in UTC. An empty meta
// object is stored as NULL and read back as {}: every Meta this package
// returns is a JSON object, never nil.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Options configures Open. The zero value means the defaults.
type Options struct {
	// Sync is the durability of a commit: "full" (the default) syncs the
	// WAL before a commit is reported durable, so an acknowledged write
	// survives a power loss; "normal" syncs only at checkpoints, so a power
	// loss or OS crash (not a crash of the process) may lose the last
	// commits, though the database stays consistent. "normal" makes small
	// commits about 4x faster (BenchmarkCommit1).
	//
	// With "full", SQLite itself runs with synchronous=NORMAL and the store
	// fsyncs the WAL file: inside Commit, or, through CommitDeferred and
	// Sync, after the write lock is released, so that one fsync can cover
	// several commits while the next one is being written.
	Sync string
	// ReadConns is the size of the read pool (default 4).
	ReadConns int
	// BusyTimeout is how long a statement waits for a lock held by another
	// process, such as a backup tool (default 5 s).
	BusyTimeout time.Duration
	// HistoryScan is the log rows one page of a player's history may scan
	// on a board without the player index (player_index.go; default
	// 50,000).
	HistoryScan int
	// WALMax is the disk the write-ahead log may take, in bytes: it is
	// checkpointed at half of it and truncated when it passes it, or when
	// a write fails for lack of space (wal.go). Default: 64 MiB or an
	// eighth of the volume, whichever is smaller; at least 1 MiB.
	WALMax int64
}

// Store is a podium.Store on one SQLite file. It is safe for concurrent use.
type Store struct {
	path string
	base url.Values // connection parameters common to every connection
	w    *sql.DB    // one connection; every write goes through it
	r    *sql.DB    // the read pool
	// lookupIdem is LookupIdempotency's statement on the read pool,
	// prepared once: a retry's answer (and, past the memory budget, every
	// new key) is read with it.
	lookupIdem *sql.Stmt

	// wmu serializes the write methods, so that the prepared statements
	// and scratch buffers below serve one transaction at a time. Lock
	// order: docs/LOCKS.md.
	wmu  sync.Mutex
	ws   writeStmts
	args []any
	buf  []byte

	full    bool          // fsync the WAL before a commit counts as durable
	written atomic.Uint64 // commits made so far (tickets)
	fsyncs  atomic.Uint64
	// smu serializes fsyncs of the WAL; synced is the last ticket known
	// to be on disk.
	smu    sync.Mutex
	synced uint64
	wal    *os.File

	// pidx holds the boards whose rows are in the player index
	// (player_index.go); written under wmu, read without a lock.
	pidx        atomic.Pointer[map[string]indexState]
	historyScan int

	// The WAL budget (wal.go): its size, and the checkpoints it forced
	// that finished and failed.
	dir    string // the database's directory, whose volume the WAL watches
	walMax int64
	// walGrowth is how much the WAL may have grown since afterWrite last
	// looked at it, walSlack how much it may grow before it looks again
	// (under wmu).
	walGrowth, walSlack int64
	walReclaims         atomic.Uint64
	walFailed           atomic.Uint64

	// The rows of each feature: views of this Store whose methods are
	// promoted to it, one type per module, so that no one type declares
	// every feature's methods (bindRows sets them).
	keyRows
	sessionRows
	evidenceRows
	reviewRows
	feedRows
	tourneyRows
	leagueRows
	quotaRows
	contestRows
	webhookRows
	groupRows
}

var _ podium.Store = (*Store)(nil)

// bindRows points the rows of each feature at s.
func (s *Store) bindRows() {
	s.keyRows = keyRows{s}
	s.sessionRows = sessionRows{s}
	s.evidenceRows = evidenceRows{s}
	s.reviewRows = reviewRows{s}
	s.feedRows = feedRows{s}
	s.tourneyRows = tourneyRows{s}
	s.leagueRows = leagueRows{s}
	s.quotaRows = quotaRows{s}
	s.contestRows = contestRows{s}
	s.webhookRows = webhookRows{s}
	s.groupRows = groupRows{s}
}

// Tuning. With a 64 MiB writer cache and a checkpoint every 10000 pages
// (40 MB of WAL) instead of SQLite's 2 MiB and 1000, commits of 1000 upserts
// spread over 100k players were about 1.2x faster; a larger page size or
// mmap made no difference. The checkpoint interval now follows the WAL
// budget (wal.go): 8192 pages (32 MiB) by default.
const (
	writerCacheKiB = 64 << 10 // page cache of the write connection
	readerCacheKiB = 16 << 10 // page cache of each read connection
)

// Open opens (creating it and its directory if needed) the database at path
// and brings its schema up to date. It fails if the database was written by
// a newer podium whose schema this one does not know.
func Open(path string, opts Options) (*Store, error) {
	if path == "" || strings.ContainsAny(path, "?#") || path == ":memory:" {
		return nil, fmt.Errorf("sqlite: path %q must name a file and contain no ? or #", path)
	}
	syncMode := strings.ToUpper(opts.Sync)
	switch syncMode {
	case "":
		syncMode = "FULL"
	case "FULL", "NORMAL":
	default:
		return nil, fmt.Errorf("sqlite: sync must be full or normal, not %q", opts.Sync)
	}
	if opts.ReadConns <= 0 {
		opts.ReadConns = 4
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: create directory: %w", err)
	}
	if err := createPrivate(path); err != nil {
		return nil, fmt.Errorf("sqlite: create database: %w", err)
	}
	common := url.Values{}
	common.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	// No foreign keys: entries and submissions name their board without a
	// REFERENCES clause (a lookup per row on the commit path would buy
	// nothing, as DeleteBoard deletes them itself).
	common.Add("_pragma", "foreign_keys(0)")
	common.Add("_pragma", "temp_store(memory)")

	wq := cloneValues(common)
	wq.Add("_pragma", "journal_mode(wal)")
	// Durability for "full" comes from the store's own fsync of the WAL
	// (see Options.Sync); SQLite's checkpoints still sync as NORMAL says.
	wq.Add("_pragma", "synchronous(NORMAL)")
	wq.Add("_pragma", fmt.Sprintf("cache_size(-%d)", writerCacheKiB))
	walMax := walBudget(opts.WALMax, filepath.Dir(path))
	walCheckpoint, walSizeLimit := walPragmas(walMax)
	wq.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walCheckpoint))
	wq.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", walSizeLimit))
	wq.Set("_txlock", "immediate") // take the write lock at BEGIN, never upgrade
	w, err := sql.Open("sqlite", path+"?"+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if opts.HistoryScan <= 0 {
		opts.HistoryScan = defaultHistoryScan
	}
	s := &Store{path: path, base: common, w: w, full: syncMode == "FULL", historyScan: opts.HistoryScan,
		dir: filepath.Dir(path), walMax: walMax}
	s.bindRows()
	if err := s.migrate(context.Background()); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := s.durable(context.Background()); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if s.walSize() > walSizeLimit {
		// A WAL left large (a crash, or a disk that filled) is copied
		// into the database and truncated while nothing reads it; if
		// that fails (no space for the database to grow), podium starts
		// anyway and the budget tries again after the next write.
		_ = s.checkpointLocked(context.Background())
	}
	if err := s.ws.prepare(w); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: prepare: %w", err)
	}

	rq := cloneValues(common)
	rq.Add("_pragma", fmt.Sprintf("cache_size(-%d)", readerCacheKiB))
	rq.Add("_pragma", "query_only(1)")
	r, err := sql.Open("sqlite", path+"?"+rq.Encode())
	if err != nil {
		s.ws.close()
		w.Close()
		return nil, fmt.Errorf("sqlite: open readers: %w", err)
	}
	r.SetMaxOpenConns(opts.ReadConns)
	r.SetMaxIdleConns(opts.ReadConns)
	s.r = r
	if err := r.Ping(); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: open readers: %w", err)
	}
	if s.lookupIdem, err = r.Prepare(sqlLookupIdem); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: prepare: %w", err)
	}
	if err := s.loadIndexStates(context.Background()); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return s, nil
}

// createPrivate creates the database file empty with mode 0600 if it does
// not exist. SQLite would create it 0644, and it creates the -wal and -shm
// files with the mode of the database file, so all three stay private to
// the owner whatever the umask. An existing file keeps its mode.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

func cloneValues(v url.Values) url.Values {
	c := make(url.Values, len(v))
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}

// Path returns the file name the store was opened with.
func (s *Store) Path() string { return s.path }

// Ping checks that the database answers a query.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.r.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}

// Close closes the database. The last connection to close checkpoints the
// WAL into the main file.
func (s *Store) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.ws.close()
	if s.lookupIdem != nil {
		s.lookupIdem.Close()
	}
	err := s.r.Close()
	if werr := s.w.Close(); err == nil {
		err = werr
	}
	s.smu.Lock()
	if s.wal != nil {
		s.wal.Close()
		s.wal = nil
	}
	s.smu.Unlock()
	if err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

// Checkpoint copies the WAL into the main database file and truncates the
// WAL, for example before copying the file or to reclaim disk after a burst
// of writes. It waits for the write connection.
func (s *Store) Checkpoint(ctx context.Context) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.checkpointLocked(ctx)
}

// sqliteCode returns the extended SQLite result code of err, or 0.
func sqliteCode(err error) int {
	var c interface{ Code() int }
	if errors.As(err, &c) {
		return c.Code()
	}
	return 0
}

// Extended result codes this package tells apart.
const (
	codeConstraintPrimaryKey = 1555 // SQLITE_CONSTRAINT_PRIMARYKEY
	codeConstraintUnique     = 2067 // SQLITE_CONSTRAINT_UNIQUE
	codeFull                 = 13   // SQLITE_FULL (primary code)
)

// commitTx commits tx, a transaction of the write connection (the caller
// holds wmu), and says what a failed COMMIT means. SQLite rolls a
// transaction back when the disk is full (its commit frame never reached
// the WAL), so that stored nothing, and the WAL is checkpointed to free
// its space (wal.go); after any other failure (an I/O error while the WAL
// was written) the store cannot tell, and the error wraps
// podium.ErrOutcomeUnknown, as Store.Commit's does.
func (s *Store) commitTx(tx *sql.Tx) error {
	err := commitOutcome(tx)
	if isFull(err) {
		s.afterWrite(context.Background(), err, 0)
	}
	return err
}

// commitOutcome commits tx: a failure other than a full disk wraps
// podium.ErrOutcomeUnknown (see commitTx).
func commitOutcome(tx *sql.Tx) error {
	err := tx.Commit()
	if err == nil || isFull(err) {
		return err
	}
	return podium.OutcomeUnknown(err)
}

// rollback ends tx after a failure; its own error adds nothing.
func rollback(tx *sql.Tx) { _ = tx.Rollback() }
