//go:build linux || darwin || freebsd

package sqlite

import "syscall"

// volumeBytes is the size of the file system that holds dir, 0 if
// unknown.
func volumeBytes(dir string) int64 {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return 0
	}
	return int64(st.Blocks) * int64(st.Bsize) //nolint:unconvert // the field types differ by system
}

// volumeFree is the room left to podium on the file system that holds
// dir, -1 if unknown.
func volumeFree(dir string) int64 {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize) //nolint:unconvert // the field types differ by system
}
