//go:build !(linux || darwin || freebsd)

package sqlite

// volumeBytes is unknown here: the WAL budget is its default.
func volumeBytes(string) int64 { return 0 }

// volumeFree is unknown here: only the budget bounds the WAL.
func volumeFree(string) int64 { return -1 }
