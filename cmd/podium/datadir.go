package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/podiumhq/podium/internal/migrate"
	"github.com/podiumhq/podium/sqlite"
)

// What a data directory holds. ARCHITECTURE.md ("Start-up integrity
// checks") explains the identity, the lock and the marker.
const (
	dbName       = "podium.db"      // the database (with -wal and -shm beside it)
	keyName      = "admin.key"      // the generated admin key
	instanceName = "instance.id"    // the instance id, also recorded in the database
	lockName     = "podium.lock"    // flock'ed by the process that owns the directory; holds its pid
	runningName  = "podium.running" // exists while a process has the database open
)

// integrityError is why podium refuses to open a data directory's database:
// it is not the database this directory had, or it is damaged.
type integrityError struct{ msg string }

func (e *integrityError) Error() string { return e.msg }

// busyError says that another process holds the data directory.
type busyError struct {
	dir  string
	pid  int // 0 if the holder did not say
	hint string
}

func (e *busyError) Error() string {
	holder := "another podium process"
	if e.pid > 0 {
		holder = fmt.Sprintf("another podium process (pid %d)", e.pid)
	}
	msg := fmt.Sprintf("data directory %s is in use by %s", e.dir, holder)
	if e.hint != "" {
		msg += "; " + e.hint
	}
	return msg
}

// dataDir is a data directory that this process holds: locked, and once
// openStore succeeded, with its database open and its identity checked.
type dataDir struct {
	path  string
	log   *slog.Logger
	lock  *os.File
	store *sqlite.Store
}

// openDataDir takes a data directory for this process: creates it (mode
// 0700) when create is set and it is missing, warns if others can read it,
// and locks it. Without create, a directory that holds no podium database
// is an error. busyHint is added to the error when another process holds
// the directory (what to do instead).
func openDataDir(path string, create bool, busyHint string, log *slog.Logger) (*dataDir, error) {
	d := &dataDir{path: path, log: log}
	if create {
		if err := os.MkdirAll(path, 0o700); err != nil {
			return nil, fmt.Errorf("data directory: %w", err)
		}
	} else if !exists(d.file(dbName)) && !exists(d.file(instanceName)) {
		return nil, fmt.Errorf("no database at %s (is --data right?)", d.file(dbName))
	}
	warnIfShared(log, path, "the data directory", "chmod 700 "+path)
	f, err := os.OpenFile(d.file(lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock data directory: %w", err)
	}
	ok, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock data directory: %w", err)
	}
	if !ok {
		b, _ := io.ReadAll(io.LimitReader(f, 64))
		f.Close()
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return nil, &busyError{dir: path, pid: pid, hint: busyHint}
	}
	if !lockSupported {
		log.Warn("this system cannot lock the data directory: make sure only one podium process uses it", "data", path)
	}
	// The pid is for the error message of whoever finds the lock taken.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	d.lock = f
	return d, nil
}

func (d *dataDir) file(name string) string { return filepath.Join(d.path, name) }

// openStore opens the directory's database after the start-up integrity
// checks:
//   - the directory has an instance id but the database is missing or
//     empty: refused (the database was lost or replaced);
//   - the last process did not close the database (podium.running is still
//     there: a crash, kill -9, power loss): SQLite's quick_check must pass;
//   - the database and the directory must name the same instance. A
//     database without an id in a directory without one is a new instance
//     (or one from before ids): both get a new id. A database with an id in
//     a directory without one (a backup restored into a new directory)
//     gives the directory its id.
//
// A refusal is an *integrityError.
func (d *dataDir) openStore(ctx context.Context, opts sqlite.Options) (*sqlite.Store, error) {
	dbPath := d.file(dbName)
	dirID, err := d.instanceID()
	if err != nil {
		return nil, err
	}
	if dirID != "" && size(dbPath) == 0 && size(dbPath+"-wal") == 0 {
		what := "missing"
		if exists(dbPath) {
			what = "empty"
		}
		return nil, &integrityError{fmt.Sprintf("%s is %s, but this data directory belongs to podium instance %s: "+
			"its database was lost or replaced. Restore the last backup (podium restore --from FILE), "+
			"or, to start a new empty instance, move the data directory away", dbPath, what, dirID)}
	}
	if exists(d.file(runningName)) && size(dbPath)+size(dbPath+"-wal") > 0 {
		if err := d.quickCheck(ctx, dbPath); err != nil {
			return nil, err
		}
	}
	// Snapshots that a crash left behind (sqlite.Store.Snapshot).
	if leftovers, _ := filepath.Glob(d.file(dbName + ".snapshot-*")); len(leftovers) > 0 {
		for _, name := range leftovers {
			os.Remove(name)
		}
	}
	if err := writeSynced(d.file(runningName), fmt.Sprintf("%d %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	st, err := sqlite.Open(dbPath, opts)
	if err != nil {
		// Nothing was written (the schema changes in one transaction), and
		// quick_check passed if it ran: the next start need not run it.
		os.Remove(d.file(runningName))
		var newer *migrate.NewerError
		if errors.As(err, &newer) {
			return nil, err // the fix is a newer podium, not a backup
		}
		return nil, fmt.Errorf("%w (if the database is damaged, restore the last backup: podium restore --from FILE)", err)
	}
	if err := d.checkIdentity(ctx, st, dirID); err != nil {
		if st.Close() == nil {
			os.Remove(d.file(runningName))
		}
		return nil, err
	}
	warnIfShared(d.log, dbPath, "the database", "chmod 600 "+dbPath+"*")
	d.store = st
	return st, nil
}

// quickCheck runs SQLite's quick_check on the database file before it is
// opened for writing.
func (d *dataDir) quickCheck(ctx context.Context, dbPath string) error {
	d.log.Warn("podium did not shut down cleanly last time: running SQLite's quick_check before opening the database", "db", dbPath)
	t0 := time.Now()
	f, err := sqlite.OpenFile(dbPath)
	if err != nil {
		return err
	}
	problems, err := f.Check(ctx, false)
	f.Close()
	if err == nil && len(problems) == 0 {
		d.log.Info("quick_check passed", "took", time.Since(t0).Round(time.Millisecond))
		return nil
	}
	what := ""
	if err != nil {
		what = err.Error()
	} else {
		what = strings.Join(problems[:min(len(problems), 3)], "; ")
		if len(problems) > 3 {
			what += fmt.Sprintf(" (and %d more)", len(problems)-3)
		}
	}
	return &integrityError{fmt.Sprintf("%s is damaged (SQLite's quick_check after an unclean shutdown: %s). "+
		"Restore the last backup: podium restore --from FILE", dbPath, what)}
}

func (d *dataDir) checkIdentity(ctx context.Context, st *sqlite.Store, dirID string) error {
	dbID, err := st.InstanceID(ctx)
	if err != nil {
		return err
	}
	switch {
	case dbID == "" && dirID == "":
		id := newInstanceID()
		if err := st.SetInstanceID(ctx, id); err != nil {
			return err
		}
		// The database first: a crash in between leaves a database with an
		// id and a directory without, which the next start adopts.
		if err := d.setInstanceID(id); err != nil {
			return err
		}
		d.log.Info("new podium instance", "instance", id)
	case dbID == "":
		return &integrityError{fmt.Sprintf("%s has no instance id, but this data directory belongs to podium instance %s: "+
			"the database was replaced by a new or foreign one. Put the right database back or restore the last backup "+
			"(podium restore --from FILE)", st.Path(), dirID)}
	case dirID == "":
		if err := d.setInstanceID(dbID); err != nil {
			return err
		}
		d.log.Info("the data directory takes the database's instance id (a database restored into a new directory?)", "instance", dbID)
	case dbID != dirID:
		return &integrityError{fmt.Sprintf("%s belongs to podium instance %s, but this data directory to instance %s: "+
			"the database was replaced by another instance's. Put the right database back; to run this database here "+
			"on purpose, use podium restore --from FILE (or delete %s)", st.Path(), dbID, dirID, d.file(instanceName))}
	}
	return nil
}

// instanceID returns the id in instance.id, "" if there is none.
func (d *dataDir) instanceID() (string, error) {
	b, err := os.ReadFile(d.file(instanceName))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read instance id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func (d *dataDir) setInstanceID(id string) error {
	if err := writeSynced(d.file(instanceName), id+"\n"); err != nil {
		return fmt.Errorf("store instance id: %w", err)
	}
	return nil
}

// closeStore closes the database. Only a clean close (clean and no error
// from the store) removes podium.running, so the next start knows to run
// quick_check otherwise.
func (d *dataDir) closeStore(clean bool) error {
	if d.store == nil {
		return nil
	}
	err := d.store.Close()
	d.store = nil
	if err == nil && clean {
		if rerr := os.Remove(d.file(runningName)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = rerr
		}
	}
	return err
}

// release gives the directory up: the lock goes with the file.
func (d *dataDir) release() {
	if d.lock != nil {
		d.lock.Close()
		d.lock = nil
	}
}

func newInstanceID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// writeSynced replaces name with content (mode 0600) through a synced
// temporary file and rename, and syncs the directory.
func writeSynced(name, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return err
	}
	return sqlite.SyncDir(filepath.Dir(name))
}

// warnIfShared logs a warning when group or others may read path.
func warnIfShared(log *slog.Logger, path, what, fix string) {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return
	}
	log.Warn(what+" is readable by other users", "path", path, "mode", fmt.Sprintf("%#o", fi.Mode().Perm()), "fix", fix)
}

func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// size returns the size of a file, 0 if it does not exist.
func size(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return fi.Size()
}
