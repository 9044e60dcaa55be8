package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/podiumhq/podium/sqlite"
)

func backupCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var data, to string
	fs := newFlagSet("backup", `Writes a consistent copy of the database in --data to the file --to, which
must not exist. It reads the database file through SQLite (VACUUM INTO, one
snapshot), so it works while the server runs and does not stop it writing; it
needs the data directory on this machine (a local file system). The backup keeps
the instance id of its source. Put it back with podium restore.`, stdout)
	fs.StringVar(&data, "data", "./podium-data", "data directory of the server")
	fs.StringVar(&to, "to", "", "file to write the backup to (must not exist)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if to == "" {
		return usagef("backup", "--to is required: the file to write the backup to")
	}
	dbPath := filepath.Join(data, dbName)
	if size(dbPath) == 0 && size(dbPath+"-wal") == 0 {
		return fmt.Errorf("no database at %s (is --data right?)", dbPath)
	}
	t0 := time.Now()
	src, err := sqlite.OpenFile(dbPath)
	if err != nil {
		return err
	}
	err = src.Backup(ctx, to)
	src.Close()
	if err != nil {
		return err
	}
	id, problems, err := inspectBackup(ctx, to)
	if err != nil {
		return fmt.Errorf("verify the backup %s: %w", to, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("the backup %s fails SQLite's quick_check (%s): the database itself may be damaged; run podium check",
			to, strings.Join(problems[:min(3, len(problems))], "; "))
	}
	fmt.Fprintf(stdout, "backup: wrote %s (%d bytes, instance %s) in %s\n", to, size(to), id, time.Since(t0).Round(time.Millisecond))
	return nil
}

// inspectBackup returns a backup file's instance id and what quick_check
// finds wrong with it.
func inspectBackup(ctx context.Context, path string) (id string, problems []string, err error) {
	f, err := sqlite.OpenFile(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	if problems, err = f.Check(ctx, false); err != nil || len(problems) > 0 {
		return "", problems, err
	}
	v, err := f.SchemaVersion(ctx)
	if err != nil {
		return "", nil, err
	}
	if v == 0 {
		return "", nil, errors.New("it is an SQLite database but not a podium one")
	}
	id, err = f.InstanceID(ctx)
	return id, nil, err
}

func restoreCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var data, from string
	fs := newFlagSet("restore", `Puts the backup --from in place of the database of the data directory --data
(created if missing), with the server stopped. The backup is checked first
(SQLite's quick_check, a podium database of this or an older schema, the same
instance as the directory). The database it replaces is kept beside it as
podium.db.replaced-<time>, with its WAL; delete it once the server runs well.`, stdout)
	fs.StringVar(&data, "data", "./podium-data", "data directory to restore into")
	fs.StringVar(&from, "from", "", "backup file to restore (written by podium backup)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if from == "" {
		return usagef("restore", "--from is required: the backup file to restore")
	}
	if size(from) == 0 {
		return fmt.Errorf("no backup at %s", from)
	}
	d, err := openDataDir(data, true, "stop that server first: its database cannot be replaced while it runs", cliLogger(stderr))
	if err != nil {
		return err
	}
	defer d.release()
	dirID, err := d.instanceID()
	if err != nil {
		return err
	}
	dbPath := d.file(dbName)
	tmp := dbPath + ".restoring"
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(tmp + suffix) // left by an interrupted restore
	}
	if err := copyFile(from, tmp); err != nil {
		return fmt.Errorf("copy the backup: %w", err)
	}
	defer os.Remove(tmp)
	id, problems, err := inspectBackup(ctx, tmp)
	if err != nil {
		return fmt.Errorf("the backup %s: %w", from, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("the backup %s is damaged (SQLite's quick_check: %s); try an older one",
			from, strings.Join(problems[:min(3, len(problems))], "; "))
	}
	if id != "" && dirID != "" && id != dirID {
		return fmt.Errorf("the backup %s belongs to podium instance %s, but the data directory %s to instance %s: "+
			"restore it into a new data directory, or delete %s first to make this directory take the backup's instance",
			from, id, data, dirID, d.file(instanceName))
	}
	// Bring it to this podium's schema and give it an id if it predates ids.
	st, err := sqlite.Open(tmp, sqlite.Options{})
	if err != nil {
		return fmt.Errorf("the backup %s: %w", from, err)
	}
	if id == "" {
		id = dirID
		if id == "" {
			id = newInstanceID()
		}
		err = st.SetInstanceID(ctx, id)
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("the backup %s: %w", from, err)
	}

	aside := ""
	if size(dbPath) > 0 || size(dbPath+"-wal") > 0 {
		aside = dbPath + ".replaced-" + time.Now().UTC().Format("20060102T150405Z")
		for i := 2; exists(aside) || exists(aside+"-wal"); i++ { // never overwrite an earlier one
			aside = fmt.Sprintf("%s.replaced-%s-%d", dbPath, time.Now().UTC().Format("20060102T150405Z"), i)
		}
		for _, suffix := range []string{"", "-wal"} {
			if err := os.Rename(dbPath+suffix, aside+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("keep the replaced database: %w", err)
			}
		}
	}
	// A WAL or shared-memory file left beside the restored file would be
	// applied to it: they belong to the database it replaces.
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(dbPath + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := os.Rename(tmp, dbPath); err != nil {
		return err
	}
	if err := sqlite.SyncDir(d.path); err != nil {
		return err
	}
	if dirID == "" {
		if err := d.setInstanceID(id); err != nil {
			return err
		}
	}
	// The database in place was just checked: no quick_check at next start.
	if err := os.Remove(d.file(runningName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	fmt.Fprintf(stdout, "restore: %s now holds the backup %s (instance %s)\n", dbPath, from, id)
	if aside != "" {
		fmt.Fprintf(stdout, "restore: the database it replaced is kept as %s\n", aside)
	}
	return nil
}

// copyFile copies src to a new file dst (mode 0600) and syncs it.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
