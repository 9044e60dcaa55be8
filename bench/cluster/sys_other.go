//go:build !linux

package main

import (
	"syscall"
	"time"
)

func childAttr() *syscall.SysProcAttr { return nil }

func procCPU(pid int) (time.Duration, bool) { return 0, false }

func procRSS(pid int) int64 { return 0 }
