package query_test

import "golang.org/x/sys/unix"

// threadCPUNanos returns the CPU time (user + system) of the calling OS
// thread, or -1 when the platform does not report it.
func threadCPUNanos() int64 {
	var u unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &u); err != nil {
		return -1
	}
	return u.Utime.Nano() + u.Stime.Nano()
}

// processCPUNanos returns the CPU time (user + system) of the process, or
// -1 when the platform does not report it.
func processCPUNanos() int64 {
	var u unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &u); err != nil {
		return -1
	}
	return u.Utime.Nano() + u.Stime.Nano()
}
