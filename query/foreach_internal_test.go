package query

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestForEachRun: every index is covered by exactly one run of at most
// run indexes, for any count, worker count and run length.
func TestForEachRun(t *testing.T) {
	for _, tc := range []struct{ n, workers, run int }{
		{0, 2, 8}, {1, 2, 8}, {8, 2, 8}, {9, 2, 8}, {100, 1, 8}, {100, 2, 8}, {100, 3, 7},
		{1000, 4, 1}, {5, 16, 1}, {1024, 0, 64},
	} {
		seen := make([]atomic.Int32, tc.n)
		var mu sync.Mutex
		var bad []int
		err := forEachRun(context.Background(), tc.n, tc.workers, tc.run, func(_ context.Context, lo, hi int) error {
			if lo >= hi || hi-lo > tc.run || hi > tc.n {
				mu.Lock()
				bad = append(bad, lo, hi)
				mu.Unlock()
			}
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
			return nil
		})
		if err != nil || bad != nil {
			t.Fatalf("%+v: err %v, bad runs %v", tc, err, bad)
		}
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("%+v: index %d searched %d times", tc, i, c)
			}
		}
	}
}

// TestForEachRunError: the first error is returned (not the
// cancellation it causes in the other workers), runs not yet started are
// skipped, and a cancelled context stops the work with its error.
func TestForEachRunError(t *testing.T) {
	boom := errors.New("boom")
	for _, workers := range []int{1, 2, 4} {
		var late atomic.Int32 // runs begun after the cancellation
		err := forEachRun(context.Background(), 1000, workers, 1, func(ctx context.Context, lo, _ int) error {
			if ctx.Err() != nil {
				late.Add(1) // (a worker can have checked just before it)
				return ctx.Err()
			}
			if lo == 10 {
				return boom
			}
			return nil
		})
		if !errors.Is(err, boom) {
			t.Fatalf("workers %d: err %v, want boom", workers, err)
		}
		if n := late.Load(); n > int32(workers-1) {
			t.Fatalf("workers %d: %d runs begun after the cancellation", workers, n)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ran atomic.Int32
	err := forEachRun(ctx, 100, 2, 1, func(context.Context, int, int) error { ran.Add(1); return nil })
	if !errors.Is(err, context.Canceled) || ran.Load() != 0 {
		t.Fatalf("cancelled: err %v, %d runs", err, ran.Load())
	}
}
