package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// The WAL's disk budget. SQLite appends every commit to the WAL and copies
// it into the database file at a checkpoint; a checkpoint that finds no
// reader in the way lets the next writer start the WAL over, and
// journal_size_limit then truncates the file. So the WAL's size on disk is
// set by wal_autocheckpoint (when a checkpoint runs) and
// journal_size_limit (what is kept after it), both derived here from one
// budget, Options.WALMax:
//   - a checkpoint runs once the WAL holds half the budget;
//   - after a commit, a WAL past the whole budget (a reader kept the
//     checkpoints from finishing), or larger than the room left on the
//     volume, is checkpointed and truncated at once: under disk pressure
//     the WAL gives its space back before the volume fills, while the
//     database file can still grow to take the WAL's pages;
//   - a write that fails for lack of space (SQLITE_FULL) checkpoints and
//     truncates the WAL, which frees its space, and the group commit is
//     tried once more; a clean start does the same for a WAL past half the
//     budget.
//
// Without a budget, on a small volume the WAL filled the disk before it
// reached the checkpoint (~40 MB) and no write could succeed again (issue
// 17 item 11).
const (
	defaultWALMax = 64 << 20 // on a volume of 512 MiB or more
	minWALMax     = 1 << 20
	walPageBytes  = 4096 // SQLite's default page size, which podium keeps
	walFrameBytes = walPageBytes + 24
)

// walBudget is the WAL budget: opt if set, else 64 MiB or an eighth of the
// volume that holds dir, whichever is smaller; at least 1 MiB.
func walBudget(opt int64, dir string) int64 {
	if opt > 0 {
		return budgetFor(opt, 0)
	}
	return budgetFor(0, volumeBytes(dir))
}

// budgetFor is walBudget for a volume of vol bytes (0: unknown).
func budgetFor(opt, vol int64) int64 {
	if opt > 0 {
		return max(opt, minWALMax)
	}
	b := int64(defaultWALMax)
	if vol > 0 {
		b = min(b, vol/8)
	}
	return max(b, minWALMax)
}

// walPragmas are the connection parameters of the write connection that
// set the checkpoint policy for a budget.
func walPragmas(budget int64) (autocheckpointPages, sizeLimit int64) {
	return max(budget/2/walPageBytes, 16), budget / 2
}

// WALMax is the WAL's disk budget in bytes (see Options.WALMax).
func (s *Store) WALMax() int64 { return s.walMax }

// walSize is the size of the WAL file, 0 if there is none.
func (s *Store) walSize() int64 {
	st, err := os.Stat(s.path + "-wal")
	if err != nil {
		return 0
	}
	return st.Size()
}

// isFull says whether err is SQLite's "database or disk is full".
func isFull(err error) bool { return err != nil && sqliteCode(err)&0xff == codeFull }

// afterWrite applies the WAL budget after a write of rows rows on the
// write connection, which the caller holds (wmu) with no transaction
// open: a write that failed for lack of space checkpoints and truncates
// the WAL, and reports whether that freed space (worth one more try); a
// write that worked checkpoints a WAL past its budget, or larger than the
// room left on the volume (the next stretch as long would fill it, and a
// checkpoint may need up to that much room for the database file to grow;
// one later would find none).
//
// Looking costs system calls (an fstat, a statfs: 1-10 us), so a write
// that worked looks only once the WAL may have grown by half its slack,
// the room it had left before a threshold at the last look, counting
// (rows*8+32) pages a write, more than a write of rows rows dirties.
func (s *Store) afterWrite(ctx context.Context, err error, rows int) (retry bool) {
	switch {
	case isFull(err):
		s.walGrowth, s.walSlack = 0, 0 // look after the next write
		before := s.walSize()
		if s.checkpointLocked(ctx) != nil {
			s.walFailed.Add(1)
			return false
		}
		s.walReclaims.Add(1)
		return s.walSize() < before
	case err != nil:
		return false
	}
	s.walGrowth += int64(rows*8+32) * walFrameBytes
	if s.walGrowth < s.walSlack {
		return false
	}
	s.walGrowth = 0
	wal, limit := s.walSize(), s.walMax
	if wal >= minPressedWAL {
		if free := volumeFree(s.dir); free >= 0 {
			limit = min(limit, free)
		}
	}
	if wal > limit {
		if s.checkpointLocked(ctx) == nil {
			s.walReclaims.Add(1)
		} else {
			s.walFailed.Add(1)
		}
		s.walSlack = 0
		return false
	}
	s.walSlack = (limit - wal) / 2
	return false
}

// minPressedWAL is the smallest WAL checkpointed for lack of room on the
// volume: below it, a checkpoint would free next to nothing.
const minPressedWAL = 64 << 10

// WALReclaims counts the checkpoints the WAL budget forced (after a write
// failed for lack of space, or past the budget) that finished, and those
// that could not (a reader in the way, or no space for the database file
// to grow).
func (s *Store) WALReclaims() (done, failed uint64) {
	return s.walReclaims.Load(), s.walFailed.Load()
}

// checkpointLocked copies the WAL into the database file and truncates
// it; the caller holds wmu. It waits for readers up to the busy timeout.
func (s *Store) checkpointLocked(ctx context.Context) error {
	var busy, logPages, done int
	err := s.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logPages, &done)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if busy != 0 {
		return errors.New("checkpoint: a reader kept the checkpoint from finishing")
	}
	return nil
}
