//go:build unix

package filter

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used (user + system),
// so that benchmarks on a shared machine can report CPU per operation
// beside wall-clock time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
