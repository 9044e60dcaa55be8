//go:build !linux

package main

import "time"

var start = time.Now()

// threadCPU falls back to the wall clock where thread CPU time is not read.
func threadCPU() time.Duration { return time.Since(start) }
