package sqlite

import (
	"os"
	"syscall"
)

// fdatasync flushes a file's data and the metadata needed to read it back
// (its size), not its times: what SQLite itself uses on Linux, and cheaper
// than fsync when the file only grew or was overwritten.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
