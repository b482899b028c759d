//go:build !linux

package main

import "time"

// threadCPU runs fn; thread CPU time is measured on Linux only (0 here).
func threadCPU(fn func() error) (time.Duration, error) { return 0, fn() }

func processCPU(fn func() error) (time.Duration, error) { return 0, fn() }
