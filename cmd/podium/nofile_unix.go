//go:build unix

package main

import "syscall"

// openFilesLimit returns the soft limit on open files (RLIMIT_NOFILE).
func openFilesLimit() (uint64, error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, err
	}
	cur := uint64(l.Cur)   // int64 on some systems
	if cur == ^uint64(0) { // RLIM_INFINITY
		return 0, nil
	}
	return cur, nil
}
