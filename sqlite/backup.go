package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/podiumhq/podium"
)

// Backup writes a consistent, compacted copy of the database to path, which
// must not exist yet (podium.ECodeConflict). The copy is read from one
// snapshot on a connection of its own, so writers go on meanwhile; the file
// is created 0600 and appears under its name only once it is complete and
// on disk.
func (s *Store) Backup(ctx context.Context, path string) error {
	// The read pool is query_only, which forbids VACUUM INTO: use a
	// connection of its own.
	db, err := sql.Open("sqlite", s.path+"?"+s.base.Encode())
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer db.Close()
	return backupTo(ctx, db, path)
}

// Backup is Store.Backup for a database opened with OpenFile, which may be
// one that a running server holds: SQLite's own locks make the snapshot
// consistent across processes.
func (f *File) Backup(ctx context.Context, path string) error {
	return backupTo(ctx, f.db, path)
}

// backupTo runs VACUUM INTO a temporary file beside path, syncs it and
// links it to path, so that a crash or a failure never leaves a partial
// backup under the final name.
func backupTo(ctx context.Context, db *sql.DB, path string) error {
	if _, err := os.Lstat(path); err == nil {
		return podium.Errorf(podium.ECodeConflict, "backup file %s already exists", path)
	}
	dir := filepath.Dir(path)
	// VACUUM INTO accepts an existing empty file, which lets the backup be
	// created with mode 0600 whatever the umask (it holds key hashes).
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName)
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmpName); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := syncFile(tmpName); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := os.Link(tmpName, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return podium.Errorf(podium.ECodeConflict, "backup file %s already exists", path)
		}
		// A file system without hard links: rename, after checking again.
		if _, serr := os.Lstat(path); serr == nil {
			return podium.Errorf(podium.ECodeConflict, "backup file %s already exists", path)
		}
		if err := os.Rename(tmpName, path); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
	}
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}

func syncFile(name string) error {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// SyncDir fsyncs a directory, so that files created, renamed or removed in
// it stay so after a power loss. Systems that cannot sync a directory
// (Windows) are not an error.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // a directory handle cannot be flushed there; NTFS journals the names
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

// Snapshot returns a copy of the database as it is now, open as a Store of
// its own, for a long read that must see one state without holding up the
// writers: podium check on a running server replays every board's log, which
// took 17 s for 1M submissions, far too long to stop writes for. The copy is
// a backup (VACUUM INTO) into a temporary file beside the database,
// podium.db.snapshot-*, which release closes and removes; a crash can leave
// one behind, which is safe to delete.
func (s *Store) Snapshot(ctx context.Context) (podium.Store, func() error, error) {
	tmp, err := os.CreateTemp(filepath.Dir(s.path), filepath.Base(s.path)+".snapshot-*")
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot: %w", err)
	}
	name := tmp.Name()
	tmp.Close()
	remove := func() {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(name + suffix)
		}
	}
	db, err := sql.Open("sqlite", s.path+"?"+s.base.Encode())
	if err != nil {
		remove()
		return nil, nil, fmt.Errorf("snapshot: %w", err)
	}
	_, err = db.ExecContext(ctx, "VACUUM INTO ?", name)
	db.Close()
	if err != nil {
		remove()
		return nil, nil, fmt.Errorf("snapshot: %w", err)
	}
	snap, err := Open(name, Options{Sync: "normal", ReadConns: 2})
	if err != nil {
		remove()
		return nil, nil, fmt.Errorf("snapshot: %w", err)
	}
	return snap, func() error {
		err := snap.Close()
		remove()
		return err
	}, nil
}
