package sqlite

import (
	"context"
	"fmt"
	"os"

	"github.com/podiumhq/podium"
)

// Group fsync. SQLite's own synchronous=FULL fsyncs the WAL inside COMMIT,
// while the write lock is held, so commits queue behind each fsync. The
// store instead commits with synchronous=NORMAL and fsyncs the WAL file
// itself: fsync flushes every page of the file written before it, so one
// fsync makes durable all the commits before it, and the next commit can
// be written while the fsync runs. A commit is reported durable (Commit
// returns, or Sync for its ticket) only after an fsync that started after
// it.

// CommitDeferred is Commit without waiting for the disk: the transaction is
// committed (visible, and safe from a crash of the process) and the
// returned ticket is passed to Sync to wait until it is also safe from a
// power loss.
func (s *Store) CommitDeferred(ctx context.Context, b *podium.Batch) (uint64, error) {
	if err := s.commit(ctx, b); err != nil {
		return 0, err
	}
	return s.written.Add(1), nil
}

// Sync returns once the commit with ticket, and every one before it, is on
// disk. With Options.Sync "normal" it returns at once.
func (s *Store) Sync(ctx context.Context, ticket uint64) error {
	if !s.full {
		return nil
	}
	s.smu.Lock()
	defer s.smu.Unlock()
	if s.synced >= ticket {
		return nil // an fsync that started after this commit has finished
	}
	upTo := s.written.Load() // every commit counted here is in the WAL file already
	if err := s.syncWAL(); err != nil {
		// The commits are in the WAL file, maybe on the disk, maybe not.
		return podium.OutcomeUnknown(fmt.Errorf("sync: %w", err))
	}
	s.synced = upTo
	return nil
}

// durable makes every write so far durable; the write methods other than
// the commit path call it before they return.
func (s *Store) durable(ctx context.Context) error {
	return s.Sync(ctx, s.written.Add(1))
}

// syncWAL fsyncs the WAL file, reopening it if SQLite replaced it. The
// caller holds smu.
func (s *Store) syncWAL() error {
	name := s.path + "-wal"
	if s.wal != nil {
		// SQLite deletes the WAL only when its last connection closes; if
		// that ever happened, the file we hold is no longer the WAL.
		st1, err1 := s.wal.Stat()
		st2, err2 := os.Stat(name)
		if err1 != nil || err2 != nil || !os.SameFile(st1, st2) {
			s.wal.Close()
			s.wal = nil
		}
	}
	if s.wal == nil {
		f, err := os.OpenFile(name, os.O_RDWR, 0)
		if os.IsNotExist(err) {
			// No WAL: everything was checkpointed into the main file,
			// which SQLite syncs after a checkpoint.
			return nil
		}
		if err != nil {
			return err
		}
		s.wal = f
	}
	s.fsyncs.Add(1)
	return fdatasync(s.wal)
}

// Fsyncs returns how many times the store has fsynced the WAL (a metric:
// compared with commits it shows how many each fsync covered).
func (s *Store) Fsyncs() uint64 { return s.fsyncs.Load() }
