//go:build !unix

package main

import (
	"errors"
	"time"
)

// raiseNoFile is not supported on this system.
func raiseNoFile() (uint64, error) { return 0, errors.New("not supported on this system") }

// processCPU is not measured on this system.
func processCPU() time.Duration { return 0 }
