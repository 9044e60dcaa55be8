//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package main

import (
	"errors"
	"os"
	"syscall"
)

// lockSupported says whether this system can lock a data directory.
const lockSupported = true

// tryLock takes an exclusive flock on f without waiting; it reports false
// if another open file holds it. The kernel releases the lock when the
// holder's file is closed or its process dies, even by kill -9, so a lock
// is never stale. flock locks belong to the open file, not the process, so
// two opens within one process exclude each other too (the tests rely on
// it).
func tryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return false, err
	}
}
