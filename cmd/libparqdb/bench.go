package main

/*
#include <stdint.h>
*/
import "C"

import (
	"syscall"
	"time"
)

// parqdb_bench_loop is the Go baseline of the Python overhead benchmark
// (python/bench/overhead.py): it runs, reps times, the searches the Python
// side times — with batch 0, Index.Search on each of the n queries at q;
// with batch 1, one Index.SearchBatch of all n — on the same index with
// the same options (handle optH), and stores the wall and process CPU seconds they took.
// Returns 0, or 1 and the error JSON in *errOut.
//
//export parqdb_bench_loop
func parqdb_bench_loop(ixH C.int64_t, q *C.float, n, dim, optH C.int64_t, batch C.int, reps C.int64_t,
	wall, cpu *C.double, errOut **C.char) C.int {
	ctx, ix, p, err := searchArgs(ixH, optH, 0)
	if err != nil {
		return setError(errOut, err)
	}
	qs, err := queryViews(ix.ix, q, int(n), int(dim))
	if err != nil {
		return setError(errOut, err)
	}
	c0, t0 := processCPU(), time.Now()
	for range int(reps) {
		if batch != 0 {
			_, err = ix.ix.SearchBatch(ctx, qs, p.opts, p.workers)
		} else {
			for _, v := range qs {
				if _, err = ix.ix.Search(ctx, v, p.opts); err != nil {
					break
				}
			}
		}
		if err != nil {
			return setError(errOut, err)
		}
	}
	*wall = C.double(time.Since(t0).Seconds())
	*cpu = C.double((processCPU() - c0).Seconds())
	return 0
}

// processCPU is the user + system CPU time of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
