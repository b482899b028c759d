package main

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU runs fn on one locked OS thread and returns the CPU time (user
// + system) that thread spent in it: on a shared, busy machine this
// measures the work of a single-thread pass where wall time measures the
// scheduler too.
func threadCPU(fn func() error) (time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var a, b unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &a); err != nil {
		return 0, fn()
	}
	err := fn()
	if e := unix.Getrusage(unix.RUSAGE_THREAD, &b); e != nil {
		return 0, err
	}
	d := time.Duration(b.Utime.Nano()-a.Utime.Nano()) + time.Duration(b.Stime.Nano()-a.Stime.Nano())
	return d, err
}

// processCPU runs fn and returns the CPU time of the whole process while
// it ran (user + system), for work spread over goroutines; 0 if the
// platform does not report it.
func processCPU(fn func() error) (time.Duration, error) {
	var a, b unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &a); err != nil {
		return 0, fn()
	}
	err := fn()
	if e := unix.Getrusage(unix.RUSAGE_SELF, &b); e != nil {
		return 0, err
	}
	return time.Duration(b.Utime.Nano()-a.Utime.Nano()) + time.Duration(b.Stime.Nano()-a.Stime.Nano()), err
}
