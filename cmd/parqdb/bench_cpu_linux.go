package main

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU runs fn on one locked OS thread and returns the CPU time (user
// + system) that thread spent in it: on a shared, busy machine this
// measures the work of a single-thread pass where wall time measures the
// scheduler too. It reads the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID,
// nanoseconds); getrusage's thread times, the fallback, come in clock
// ticks (4 ms steps seen), too coarse for a pass of 25 ms.
func threadCPU(fn func() error) (time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ta, tb unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ta) == nil {
		err := fn()
		if e := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &tb); e != nil {
			return 0, err
		}
		return time.Duration(tb.Nano() - ta.Nano()), err
	}
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
// platform does not report it. It reads the process's CPU clock
// (CLOCK_PROCESS_CPUTIME_ID, nanoseconds), since bench takes the median
// of many short passes; getrusage is the fallback.
func processCPU(fn func() error) (time.Duration, error) {
	var ta, tb unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ta) == nil {
		err := fn()
		if e := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &tb); e != nil {
			return 0, err
		}
		return time.Duration(tb.Nano() - ta.Nano()), err
	}
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
